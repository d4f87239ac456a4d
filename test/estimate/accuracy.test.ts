/**
 * Accuracy of the `calibrated` strategy against the real tokenizers, on the HOLDOUT: samples from
 * sources (npm packages, files, man pages, message catalogues, Debian packages, commands) the fitted
 * constants never saw. The node_modules part is rebuilt here by the same script that built the
 * training corpus; the Debian part is the committed fixture (test/estimate/fixtures/SOURCES.md).
 *
 * The bound, per category and per profile: mean absolute error <= 5% and no sample beyond 15%.
 * Categories that cannot be priced that well yet are listed in OVER_BOUND with why; for them (and
 * for every sample anywhere) the estimate must say how far to trust it: the real count lies within
 * the band it states (the profile's margin plus riskTokens, which the inspector's trust note shows).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, CATEGORIES, EXTRA_CATEGORIES, mixedInput, type CorpusSample } from '../../scripts/build-corpus.js';
import { HOLDOUT_PER_CATEGORY, accuracy } from '../../scripts/calibrate.js';
import {
  calibratedAll,
  chars4,
  countExact,
  EXACT_MARGIN,
  FEATURE_NAMES,
  headroomTokens,
  PROFILES,
  RATIO_MIN_RISK,
  riskTokens,
  sampleFeatures,
  type Profile,
} from '../../src/pipeline/estimate/internal.js';

/** Mean absolute relative error allowed per category and profile (the bound). */
const MAX_CATEGORY_MAE = 0.05;
/** Worst single holdout sample allowed per category and profile (the bound). */
const MAX_SAMPLE_ERROR = 0.15;

/**
 * Categories × profiles measured beyond the bound on this holdout, and why. Each is priced with a
 * trust note instead: every such sample lies within the band the estimate states (asserted below).
 * Figures: docs/estimation.md. A category that starts to meet the bound fails the test until removed.
 */
const OVER_BOUND: Record<string, Partial<Record<Profile, string>>> = {
  'minified-js': { o200k: 'generated bundles vary in identifier density' },
  'css': { o200k: 'split per file: a few files are mostly selectors, hacks or base64', cl100k: 'split per file: a few files are mostly selectors, hacks or base64' },
  'european': { o200k: 'accented Latin costs differ by language; one feature prices them all', cl100k: 'accented Latin costs differ by language; one feature prices them all', claude: 'accented Latin costs differ by language; one feature prices them all' },
  'man-european': { o200k: 'as european', cl100k: 'as european' },
  'man-cjk': { o200k: 'o200k merges Han words the fit prices per ideograph' },
  'ui-cyrillic': { o200k: 'short UI strings in 7 languages: Kazakh and Belarusian cost more than Russian', cl100k: 'short UI strings in 7 languages: Kazakh and Belarusian cost more than Russian', claude: 'short UI strings in 7 languages: Kazakh and Belarusian cost more than Russian' },
  'ui-greek': { o200k: 'short UI strings' },
  'ui-arabic': { o200k: 'Arabic, Persian, Urdu and Uyghur cost differently', cl100k: 'Arabic, Persian, Urdu and Uyghur cost differently', claude: 'Arabic, Persian, Urdu and Uyghur cost differently' },
  'ui-hebrew': { o200k: 'short UI strings' },
  'ui-indic': { o200k: '11 scripts priced by 2 features', cl100k: '11 scripts priced by 2 features', claude: '11 scripts priced by 2 features' },
  'ui-southeast-asian': { o200k: 'Thai, Khmer, Lao and Myanmar (Myanmar costs legacy Claude ~4 tokens a char)', cl100k: 'Thai, Khmer, Lao and Myanmar (Myanmar costs legacy Claude ~4 tokens a char)', claude: 'Thai, Khmer, Lao and Myanmar (Myanmar costs legacy Claude ~4 tokens a char)' },
  'ui-caucasus': { o200k: 'Georgian and Armenian differ' },
  'ui-european': { o200k: '12 languages of short UI strings', cl100k: '12 languages of short UI strings', claude: '12 languages of short UI strings' },
  'ui-vietnamese': { o200k: 'combining marks vs precomposed letters', cl100k: 'combining marks vs precomposed letters' },
  'emoji': { o200k: 'an emoji costs 1-4 tokens; the fit prices one rate', cl100k: 'an emoji costs 1-4 tokens; the fit prices one rate' },
  'tool-output': { o200k: 'box drawing, aligned columns and paths vary by command', cl100k: 'box drawing, aligned columns and paths vary by command', claude: 'box drawing, aligned columns and paths vary by command' },
  'minified-css': { cl100k: 'as css' },
  'cjk': { cl100k: 'Han outside the common-ideograph table (cl100k, legacy Claude)', claude: 'Han outside the common-ideograph table (cl100k, legacy Claude)' },
  'cyrillic': { cl100k: 'short UI strings' },
  'ui-cjk': { cl100k: 'short UI strings' },
  'ui-hangul': { cl100k: 'rare syllables' },
  'json-min': { claude: 'short UI strings' },
};

/** Room the pass side's upper bound must leave on every holdout sample, as a share of its real count. */
const HOLDOUT_ROOM = 0.005;

let samples: CorpusSample[] = [];
const exact: Record<Profile, number[]> = { o200k: [], cl100k: [], claude: [] };

beforeAll(async () => {
  samples = await buildCorpus({ split: 'holdout', perCategory: HOLDOUT_PER_CATEGORY });
  for (const p of PROFILES) for (const s of samples) exact[p].push(await countExact(s.text, p));
}, 180_000);

const features = new Float64Array(FEATURE_NAMES.length);
function estimateWithRisk(text: string, profile: Profile): { est: number; risk: number; headroom: number } {
  sampleFeatures(text, features, profile);
  const est = calibratedAll(text)[profile];
  return { est, risk: riskTokens(features, profile, text.length, { text, estimate: est }), headroom: headroomTokens(features, profile) };
}

describe('calibrated estimate on the holdout', () => {
  it('covers the node_modules categories and at least 12 scripts of Debian text, none of them in the training split', () => {
    const cats = new Set(samples.map((s) => s.category));
    expect([...cats].sort()).toEqual([...CATEGORIES].sort());
    expect(EXTRA_CATEGORIES.length).toBeGreaterThanOrEqual(15);
    expect(samples.every((s) => s.split === 'holdout')).toBe(true);
    for (const s of samples) expect(s.text.length).toBeGreaterThan(900);
    // scripts: Latin, Cyrillic, Greek, Arabic, Hebrew, Devanagari, other Indic, Thai, Georgian, Armenian, Han, kana, Hangul
    const scripts = [/\p{Script=Latin}/u, /\p{Script=Cyrillic}/u, /\p{Script=Greek}/u, /\p{Script=Arabic}/u, /\p{Script=Hebrew}/u, /\p{Script=Devanagari}/u, /\p{Script=Bengali}/u, /\p{Script=Tamil}/u, /\p{Script=Thai}/u, /\p{Script=Georgian}/u, /\p{Script=Armenian}/u, /\p{Script=Han}/u, /\p{Script=Hiragana}/u, /\p{Script=Hangul}/u];
    const seen = scripts.filter((re) => samples.some((s) => (s.text.match(new RegExp(re.source, 'gu'))?.length ?? 0) > 200));
    expect(seen.length).toBeGreaterThanOrEqual(12);
  });

  for (const profile of PROFILES) {
    it(`${profile}: per category MAE <= ${MAX_CATEGORY_MAE * 100}% and no sample beyond ${MAX_SAMPLE_ERROR * 100}%, except the listed categories`, () => {
      const rows = samples.map((s, i) => ({ category: s.category, id: s.id, est: calibratedAll(s.text)[profile], exact: exact[profile][i]! }));
      const acc = accuracy(rows);
      const base = accuracy(samples.map((s, i) => ({ category: s.category, id: s.id, est: chars4(s.text), exact: exact[profile][i]! })));
      const table = Object.entries(acc.perCategory).map(([c, a]) => `${c}: ${(a.mae * 100).toFixed(1)}% / ${(a.max * 100).toFixed(1)}%`);
      console.log(`${profile}: calibrated balanced MAE ${(acc.balancedMae * 100).toFixed(1)}% (chars4 ${(base.balancedMae * 100).toFixed(1)}%); per category MAE / worst: ${table.join('; ')}`);
      const failing = Object.entries(acc.perCategory)
        .filter(([, a]) => a.mae > MAX_CATEGORY_MAE || a.max > MAX_SAMPLE_ERROR)
        .map(([c]) => c)
        .sort();
      const listed = Object.keys(OVER_BOUND).filter((c) => OVER_BOUND[c]![profile]).sort();
      // exactly the listed ones: a category that improves must come off the list
      expect(failing).toEqual(listed);
      expect(acc.balancedMae).toBeLessThan(base.balancedMae / 2);
    });

    it(`${profile}: every holdout sample's real count lies within the band its estimate states (margin, headroom, riskTokens)`, () => {
      const outside: string[] = [];
      let flagged = 0;
      samples.forEach((s, i) => {
        const { est, risk, headroom } = estimateWithRisk(s.text, profile);
        const truth = exact[profile][i]!;
        if (risk >= RATIO_MIN_RISK * est) flagged++;
        // the same band the guard counts inside: [(est - risk)/(1 + m), est + risk + headroom], with
        // HOLDOUT_ROOM of the real count to spare on the upper side (the headroom was fitted on train only)
        const m = EXACT_MARGIN[profile];
        if (truth < (est - risk) / (1 + m) || truth * (1 + HOLDOUT_ROOM) > est + risk + headroom) outside.push(`${s.id}: est ${est} risk ${risk.toFixed(0)} headroom ${headroom.toFixed(0)} truth ${truth}`);
      });
      expect(outside).toEqual([]);
      // the non-ASCII categories carry their trust note: most of their samples are flagged
      const extra = samples.filter((s) => EXTRA_CATEGORIES.includes(s.category) && s.category !== 'tool-output').length;
      expect(flagged).toBeGreaterThanOrEqual(extra * 0.8);
    });
  }

  it('the headroom covers mixtures of holdout samples from different categories (it adds up over parts)', () => {
    let x = 11;
    const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 4294967296;
    const outside: string[] = [];
    for (let trial = 0; trial < 60; trial++) {
      const parts = Array.from({ length: 2 + (trial % 3) }, () => Math.floor(rnd() * samples.length));
      const text = parts.map((i) => samples[i]!.text).join('\n');
      for (const profile of PROFILES) {
        const { est, risk, headroom } = estimateWithRisk(text, profile);
        // the parts' exact counts add up to within a token per seam (a seam is a newline)
        const truth = parts.reduce((a, i) => a + exact[profile][i]!, 0) + parts.length;
        if (truth > est + risk + headroom) outside.push(`${parts.map((i) => samples[i]!.id).join(' + ')} (${profile}): est ${est} risk ${risk.toFixed(0)} headroom ${headroom.toFixed(0)} truth <= ${truth}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('on the mixed input (every holdout sample in one text, estimated from samples) is within 5% for every profile', async () => {
    const mixed = mixedInput(samples);
    const info = sampleFeatures(mixed, new Float64Array(FEATURE_NAMES.length));
    expect(info.full).toBe(false);
    expect(info.scanned / mixed.length).toBeLessThan(0.3);
    const est = calibratedAll(mixed);
    for (const p of PROFILES) {
      const truth = await countExact(mixed, p);
      expect(Math.abs(est[p] / truth - 1)).toBeLessThanOrEqual(MAX_CATEGORY_MAE);
    }
  }, 180_000);
});
