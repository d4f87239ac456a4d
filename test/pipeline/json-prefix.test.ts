import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closeJsonPrefix, scanJsonPrefix } from '../../src/pipeline/json-prefix.js';

describe('JSON cut short', () => {
  it('every cut of any JSON text (at any char) is a prefix whose closed form parses, or the whole text', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), fc.nat(), (v, pretty, at) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        const cut = text.slice(0, at % (text.length + 1));
        const s = scanJsonPrefix(cut);
        if (cut === text) expect(s.state).toBe('complete');
        else if (s.state === 'prefix') expect(() => JSON.parse(closeJsonPrefix(cut)!.json)).not.toThrow();
        else expect(/^\s*[[{]/.test(cut) && cut.trim().length > 1 && s.state === 'invalid').toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('what is not JSON is not a prefix', () => {
    for (const t of ['{{', '{"a":1} x', '[1,,2', 'abc', '[INFO] started', '{"a" 1', '{"a":1,}', ']']) expect(scanJsonPrefix(t).state, t).toBe('invalid');
  });

  it('a deep nesting is one pass, not a stack overflow', () => {
    expect(scanJsonPrefix('['.repeat(200_000)).state).toBe('prefix');
  });
});
