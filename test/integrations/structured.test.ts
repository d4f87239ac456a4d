import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shrinkStructured, STRUCTURED_EXTRA_BUDGET_CHARS, type Validate } from '../../src/integrations/mcp/structured.js';

const ajv = new AjvJsonSchemaValidator();
function validator(schema: object): Validate {
  const v = ajv.getValidator(schema as never);
  return (x) => {
    const r = v(x);
    return { valid: r.valid, error: r.errorMessage };
  };
}

// Output schemas as @modelcontextprotocol/server-filesystem declares them in tools/list.
const TEXT_SCHEMA = {
  type: 'object',
  properties: { content: { type: 'string' } },
  required: ['content'],
  additionalProperties: false,
  $schema: 'http://json-schema.org/draft-07/schema#',
};
const MEDIA_SCHEMA = {
  type: 'object',
  properties: {
    content: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'object', properties: { type: { type: 'string', enum: ['image', 'audio'] }, data: { type: 'string' }, mimeType: { type: 'string' } }, required: ['type', 'data', 'mimeType'] },
          { type: 'object', properties: { type: { const: 'resource' }, resource: { type: 'object' } }, required: ['type', 'resource'] },
        ],
      },
    },
  },
  required: ['content'],
};

const MESSAGE = 'Spillway: the result was saved to /s/long_responses/x.json (about 90,000 tokens).';

describe('shrinkStructured', () => {
  it('puts the message into the one big string of a {content: string} result', () => {
    const value = { content: 'line\n'.repeat(60_000) };
    const r = shrinkStructured(value, { validate: validator(TEXT_SCHEMA), message: MESSAGE, budgetChars: MESSAGE.length + STRUCTURED_EXTRA_BUDGET_CHARS });
    expect(r?.value).toEqual({ content: MESSAGE });
    expect(validator(TEXT_SCHEMA)(r!.value).valid).toBe(true);
  });

  it('a media result: every array emptied (no sample item kept), the message added beside it when the schema allows', () => {
    const item = { type: 'image', data: 'A'.repeat(400_000), mimeType: 'image/png' };
    const r = shrinkStructured({ content: [item, item] }, { validate: validator(MEDIA_SCHEMA), message: MESSAGE, budgetChars: MESSAGE.length + STRUCTURED_EXTRA_BUDGET_CHARS });
    expect(r).toEqual({ value: { content: [], spillway: MESSAGE }, strategy: 'message-added' });
    expect(validator(MEDIA_SCHEMA)(r!.value).valid).toBe(true);
  });

  it('never makes up or keeps sample records: a schema that wants items gets nothing (the caller falls back)', () => {
    const schema = {
      type: 'object',
      properties: {
        rows: { type: 'array', minItems: 3, items: { type: 'object', properties: { kind: { enum: ['alpha-long-value', 'beta'] } }, required: ['kind'] } },
      },
      required: ['rows'],
    };
    const rows = Array.from({ length: 5_000 }, (_, i) => ({ kind: i % 2 ? 'beta' : 'alpha-long-value', note: 'n'.repeat(100) }));
    expect(shrinkStructured({ rows }, { validate: validator(schema), message: MESSAGE, budgetChars: 20_000 })).toBeUndefined();
  });

  it('keeps the real small values (counts, ids, statuses) and puts the message in the longest string outside the arrays', () => {
    const schema = {
      type: 'object',
      properties: { items: { type: 'array' }, total: { type: 'number' }, status: { type: 'string' }, report: { type: 'string' } },
      required: ['total', 'report'],
      additionalProperties: false,
    };
    const value = { items: Array.from({ length: 10_000 }, (_, i) => ({ i, text: `row ${i}` })), total: 10_000, status: 'ok', report: 'r'.repeat(50_000) };
    const r = shrinkStructured(value, { validate: validator(schema), message: MESSAGE, budgetChars: 10_000 });
    expect(r).toEqual({ value: { items: [], total: 10_000, status: 'ok', report: MESSAGE }, strategy: 'message-in-field' });
  });

  it('keeps a small structuredContent whole', () => {
    const value = { temperature: 21, conditions: 'Cloudy' };
    const r = shrinkStructured(value, { validate: () => ({ valid: true }), message: MESSAGE, budgetChars: 10_000 });
    expect(r).toEqual({ value, strategy: 'original' });
  });

  it('gives up (undefined) when no small value satisfies the schema', () => {
    const schema = { type: 'object', properties: { blob: { type: 'string', minLength: 100_000 } }, required: ['blob'] };
    const r = shrinkStructured({ blob: 'z'.repeat(200_000) }, { validate: validator(schema), message: MESSAGE, budgetChars: 10_000 });
    expect(r).toBeUndefined();
  });

  // A schema that says exactly what a value's types are, with every member required.
  function schemaOf(v: unknown): object {
    if (v === null) return { type: 'null' };
    if (Array.isArray(v)) return v.length ? { type: 'array', items: schemaOf(v[0]) } : { type: 'array' };
    if (typeof v === 'object') {
      const o = v as Record<string, unknown>;
      return { type: 'object', properties: Object.fromEntries(Object.entries(o).map(([k, x]) => [k, schemaOf(x)])), required: Object.keys(o) };
    }
    return { type: typeof v === 'number' ? 'number' : typeof v };
  }

  it('whatever the value, returns a value the schema accepts within budget, or nothing (property)', () => {
    const homogeneous = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.string({ maxLength: 3000 }),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        tie('node').chain((item) => fc.array(fc.constant(item), { maxLength: 200 })),
        fc.dictionary(fc.string({ maxLength: 8 }), tie('node'), { maxKeys: 6 }),
      ),
    })).node;
    fc.assert(
      fc.property(homogeneous, fc.boolean(), (value, strict) => {
        const schema = strict ? schemaOf(value) : { type: ['object', 'array', 'string', 'number', 'boolean', 'null'] };
        const validate = validator(schema);
        const budget = MESSAGE.length + STRUCTURED_EXTRA_BUDGET_CHARS;
        const r = shrinkStructured(value, { validate, message: MESSAGE, budgetChars: budget });
        // The loose schema accepts any value: a string or object always carries the message.
        if (!strict && (typeof value === 'string' || (value !== null && typeof value === 'object' && !Array.isArray(value)))) expect(r).toBeDefined();
        if (r) {
          expect(validate(r.value).valid).toBe(true);
          expect(JSON.stringify(r.value).length).toBeLessThanOrEqual(budget);
          if (r.strategy !== 'original') {
            // The message is there, and no array holds an item: nothing a model could take for a record.
            expect(JSON.stringify(r.value)).toContain(JSON.stringify(MESSAGE));
            const arraysEmpty = (v: unknown): boolean =>
              Array.isArray(v) ? v.length === 0 : v !== null && typeof v === 'object' ? Object.values(v).every(arraysEmpty) : true;
            expect(arraysEmpty(r.value)).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
