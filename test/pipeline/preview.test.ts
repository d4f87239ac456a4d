import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildPreview, detectContent, PREVIEW_CHARS } from '../../src/pipeline/index.js';
import { buildPreviewOfPieces } from '../../src/pipeline/preview.js';
import { fixture, randomBytes } from './helpers.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe('buildPreview', () => {
  it('JSON shows structure: keys, types, array lengths and sample values', () => {
    const doc = {
      users: Array.from({ length: 5000 }, (_, i) => ({ id: i, name: `user${i}`, active: i % 2 === 0, roles: ['a', 'b'] })),
      meta: { total: 5000, next: null },
    };
    const p = buildPreview(JSON.stringify(doc));
    expect(p).toContain('object (2 keys)');
    expect(p).toContain('users: array (5,000 items of object)');
    expect(p).toMatch(/item keys: \{id: number, name: string, active: boolean, roles: array\}/);
    expect(p).toContain('name: "user0"');
    expect(p).toContain('[4999]');
    expect(p).toContain('total: 5000');
    expect(p.length).toBeLessThanOrEqual(PREVIEW_CHARS);
  });

  it('logs show head and tail with the count of what was left out', () => {
    const log = Array.from({ length: 10_000 }, (_, i) => `2026-11-30 08:00:00 INFO line ${i}`).join('\n');
    const p = buildPreview(log, 'log');
    expect(p).toContain('line 0');
    expect(p).toContain('line 9999');
    expect(p).toMatch(/… \[[\d,]+ lines, [\d,]+ chars omitted\] …/);
    expect(p.length).toBeLessThanOrEqual(PREVIEW_CHARS);
  });

  it('CSV shows the header, first rows and the row count', () => {
    const csv = 'id,name,score\n' + Array.from({ length: 2000 }, (_, i) => `${i},n${i},${i % 10}`).join('\n');
    expect(detectContent(csv).kind).toBe('csv');
    const p = buildPreview(csv);
    expect(p.startsWith('(2,001 rows incl. header)\nid,name,score\n0,n0,0')).toBe(true);
  });

  it('never shows base64, raw or in data URLs, in any kind', () => {
    const b64 = fixture('sample.png').toString('base64');
    for (const text of [
      `${b64}\n`.repeat(3),
      `see data:image/png;base64,${b64} here`,
      JSON.stringify({ blob: b64, list: [b64, `data:image/png;base64,${b64}`] }),
      JSON.stringify({ text: `prefix ${b64} suffix` }),
    ]) {
      const p = buildPreview(text);
      expect(p).not.toMatch(/[A-Za-z0-9+/]{100,}/);
    }
  });

  it('property: never splits a surrogate pair, never exceeds maxChars, never base64', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'grapheme', minLength: 0, maxLength: 4000 }),
          fc.array(fc.string({ unit: 'grapheme', maxLength: 30 }), { maxLength: 300 }).map((a) => JSON.stringify(a)),
          fc.constantFrom(...[400, 700, 3000].map((n) => randomBytes(n).toString('base64'))).map((b) => `x ${b} y \u{1F600}`.repeat(3)),
        ),
        fc.integer({ min: 80, max: 3000 }),
        (text, max) => {
          const p = buildPreview(text, undefined, max);
          expect(p.length).toBeLessThanOrEqual(max);
          expect(p).not.toMatch(LONE_SURROGATE);
          expect(p).not.toMatch(/[A-Za-z0-9+/]{100,}/);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('terminal text is cleaned: ANSI colours, overstrike and CRLF', () => {
    const p = buildPreview('\x1b[31mred\x1b[0m B\bBo\bol\bld\bd\r\nnext\r\n');
    expect(p).toBe('red Bold\nnext\n');
  });
});

describe('detectContent', () => {
  it('types text kinds from their content', () => {
    expect(detectContent('{"a":1}').kind).toBe('json');
    expect(detectContent('{"a":1}\n{"a":2}\n{"a":3}\n').kind).toBe('ndjson');
    expect(detectContent('<!doctype html><html><body>x</body></html>').kind).toBe('html');
    expect(detectContent('<?xml version="1.0"?><a/>').kind).toBe('xml');
    expect(detectContent('# Title\n\nSome text\n\n- item\n- item\n').kind).toBe('markdown');
    expect(detectContent('import fs from "fs";\nexport function f() {\n  return 1;\n}\n').kind).toBe('code');
    expect(detectContent('Just a sentence, nothing more.').kind).toBe('text');
  });

  it('binary from NULs, control characters or invalid UTF-8 anywhere in the input, not only the head', () => {
    expect(detectContent(fixture('sample.png')).binary).toBe(true);
    const lateBinary = Buffer.concat([Buffer.from('a'.repeat(100_000)), randomBytes(20_000)]);
    expect(detectContent(lateBinary).binary).toBe(true);
    expect(detectContent(Buffer.from('plain text\n'.repeat(10_000))).binary).toBe(false);
    expect(detectContent(fixture('sample.pdf').toString('latin1')).binary).toBe(true);
    expect(detectContent('tab\there, form\ffeed, bell-less text\n'.repeat(100)).binary).toBe(false);
  });
});

describe('outline of JSON too big to parse whole', () => {
  it('outlines the first part, marks what was cut, and stays bounded', () => {
    const rows = Array.from({ length: 340_000 }, (_, i) => ({ id: i, name: `row${i}`, nested: { ok: true } }));
    const text = JSON.stringify({ data: rows, meta: { total: rows.length } });
    expect(text.length).toBeGreaterThan(16 * 1024 * 1024);
    const p = buildPreview(text, 'json');
    expect(p).toMatch(/^\(outline of the first 512 KB of [\d,]+ KB\)/);
    expect(p).toMatch(/data: array \(≥ [\d,]+ items of object\)/);
    expect(p).toContain('item keys: {id: number, name: string, nested: object}');
    expect(p).not.toContain('spillway:truncated');
    expect(p.length).toBeLessThanOrEqual(PREVIEW_CHARS);
  });

  it('from pieces: the same outline as of the joined text, without joining it; other kinds and a head that fails are joined', () => {
    const rows = Array.from({ length: 700_000 }, (_, i) => ({ id: i, name: `row${i}` }));
    const text = JSON.stringify({ data: rows });
    expect(text.length).toBeGreaterThan(16 * 1024 * 1024);
    const pieces = [text.slice(0, 1000), text.slice(1000, 300_000), text.slice(300_000)];
    let joins = 0;
    const join = () => (joins++, pieces.join(''));
    expect(buildPreviewOfPieces(pieces, text.length, join, 'json')).toBe(buildPreview(text, 'json'));
    expect(joins).toBe(0);
    expect(buildPreviewOfPieces(pieces, text.length, join, 'text')).toBe(buildPreview(text, 'text'));
    expect(joins).toBe(1);
    const notJson = ['not json at all ', 'x'.repeat(17 * 1024 * 1024)];
    expect(buildPreviewOfPieces(notJson, notJson[0]!.length + notJson[1]!.length, () => notJson.join(''), 'json')).toBe(buildPreview(notJson.join(''), 'json'));
  });
});
