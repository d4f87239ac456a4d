/** The classic baseline: ceil(chars / 4). */
export function chars4(text: string): number {
  return Math.ceil(text.length / 4);
}

const CRAFT_SMALL_CHARS = 20_000;
const CRAFT_RUN_MIN_CHARS = 60;
const CRAFT_DENSE_SHARE = 0.7;

/**
 * The published craft-agents heuristic, kept for comparison: under 20,000 chars ceil(len/4);
 * otherwise if runs of 60+ `[A-Za-z0-9+/=]` cover at least 70% of the text, len/1.5, else len/4.
 */
export function craftDensity(text: string): number {
  const len = text.length;
  if (len < CRAFT_SMALL_CHARS) return Math.ceil(len / 4);
  let covered = 0;
  let run = 0;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    const isB64 =
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 61;
    if (isB64) run++;
    else {
      if (run >= CRAFT_RUN_MIN_CHARS) covered += run;
      run = 0;
    }
  }
  if (run >= CRAFT_RUN_MIN_CHARS) covered += run;
  return covered / len >= CRAFT_DENSE_SHARE ? Math.ceil(len / 1.5) : Math.ceil(len / 4);
}
