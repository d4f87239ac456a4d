/**
 * Scripts node_modules has no text for (Indic, Thai, Khmer, Sinhala, Georgian, Burmese): the fit alone priced
 * them at 0 tokens, so a Hindi page was estimated at a third of its o200k count and a tenth of its cl100k
 * count, and the guard could pass a result three times over the limit. Real UI translations from GTK
 * (fixtures/SOURCES.md) set a floor on their price (scripts/calibrate.ts); these tests hold it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { calibratedAll, countExact, PROFILES } from '../../src/pipeline/estimate/internal.js';
import { guardLargeResult } from '../../src/pipeline/index.js';

const TEXTS = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'other-scripts.json'), 'utf8')) as Record<string, string>;
/** The floor is the median language's rate: no language may be off by more than this factor either way. */
const MAX_FACTOR = 2;

describe('estimates of scripts outside the calibration corpus', () => {
  it('has real text for at least ten languages', () => {
    expect(Object.keys(TEXTS).length).toBeGreaterThanOrEqual(10);
    for (const t of Object.values(TEXTS)) expect(t.length).toBeGreaterThan(2500);
  });

  for (const profile of PROFILES) {
    it(`${profile}: every language within ${MAX_FACTOR}x of the real count, and half of them or more under it`, async () => {
      let under = 0;
      for (const [lang, text] of Object.entries(TEXTS)) {
        const ratio = calibratedAll(text)[profile] / (await countExact(text, profile));
        expect({ lang, ok: ratio >= 1 / MAX_FACTOR && ratio <= MAX_FACTOR }).toEqual({ lang, ok: true });
        if (ratio >= 1) under++;
      }
      // "under" = estimate at or over the real count: the side the guard needs
      expect(under).toBeGreaterThanOrEqual(Math.floor(Object.keys(TEXTS).length / 2));
    });
  }

  it('the guard spills a Hindi result that is over the limit, for every profile', async () => {
    const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-scripts-'));
    try {
      let text = '';
      while (text.length < 45_000) text += TEXTS.hi + '\n';
      for (const profile of PROFILES) {
        const truth = await countExact(text, profile);
        expect(truth).toBeGreaterThan(12_000);
        const r = await guardLargeResult(text, { sessionPath: session, profile });
        expect(r?.action).toBe('spill');
      }
    } finally {
      fs.rmSync(session, { recursive: true, force: true });
    }
  });
});
