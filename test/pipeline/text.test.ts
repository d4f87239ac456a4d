import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeCut, truncate } from '../../src/pipeline/index.js';

// truncate/safeCut bound every message and preview handed to a model (guard, proxy, hook).
describe('truncate', () => {
  it('property: never longer than max, never ends in a lone high surrogate, keeps a prefix', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 1, max: 220 }), (s, max) => {
        const t = truncate(s, max);
        expect(t.length).toBeLessThanOrEqual(Math.max(max, 1));
        if (s.length <= max) expect(t).toBe(s);
        else {
          expect(t.endsWith('…')).toBe(true);
          expect(s.startsWith(t.slice(0, -1))).toBe(true);
          const last = t.charCodeAt(t.length - 2);
          expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
        }
      }),
    );
  });

  it('backs off one unit rather than split an emoji', () => {
    expect(truncate('ab😀cd', 4)).toBe('ab…');
    expect(safeCut('ab😀cd', 3)).toBe(2);
    expect(safeCut('ab😀cd', 4)).toBe(4);
  });
});
