import type { Profile } from '../types.js';

/**
 * PLACEHOLDER until the calibration work lands: a density-aware estimate (base64-ish runs at
 * 1.5 chars/token, non-ASCII by UTF-8 bytes), never plain chars/4.
 */
export function calibrated(text: string, _profile: Profile): number {
  let tokens = 0;
  let run = 0;
  let plain = 0;
  const flushRun = () => {
    if (run >= 40) tokens += run / 1.5;
    else plain += run;
    run = 0;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 61) {
      run++;
    } else {
      flushRun();
      if (c > 0x7f) tokens += c > 0x7ff ? 1 : 0.5;
      else plain++;
    }
  }
  flushRun();
  return Math.ceil(tokens + plain / 4);
}
