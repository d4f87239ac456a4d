/**
 * The scanner as it was before it read through a typed-array block buffer (commit 1c1ca27), kept
 * verbatim as the reference that test/estimate/scanner.test.ts holds the fast one to (identical
 * feature vectors) and that `npm run bench estimate` times it against. Not used by the product.
 */
/**
 * The one linear pass behind the `calibrated` strategy: it reads each UTF-16 code unit once, keeps
 * counters in locals (no allocation per char, no regex), and classifies what it sees into the
 * features a BPE tokenizer is sensitive to: word counts and lengths, digit groups, punctuation and
 * whitespace runs, random-looking runs (base64, hex, hashes), UUIDs, and scripts (CJK, Cyrillic, other).
 * Each tokenizer family prices these features with its own fitted weights (constants.ts).
 */
import { COMMON_HAN, KNOWN_WORDS, RARE_BIGRAMS } from '../../src/pipeline/estimate/internal.js';

/** Feature names, in the order of the vector {@link scanFeatures} fills. */
export const FEATURE_NAMES = [
  'words', // ASCII letter words (camelCase humps count as words)
  'knownWords', // ... that are whole words in the tokenizers' vocabularies (KNOWN_WORDS)
  'wordLetters',
  'wordOver3', // sum of max(0, len-3) over the other words
  'wordOver6',
  'wordOver10',
  'titleWords', // other words that start upper case at the start of a run (names, proper nouns)
  'capsWords', // other words of 2+ letters, all upper case (acronyms, source map VLQ)
  'capsPairs', // upper case letter right after an upper case letter inside a word run
  'rareBigrams', // letter pairs inside words that are rare in real text (random-looking words)
  'digitRuns',
  'digitGroups', // sum of ceil(len/3): o200k and cl100k split numbers into 1-3 digit pieces
  'digitChars',
  'mixedRuns', // short runs mixing letters and digits (utf8, x64, 4e47)
  'mixedChars',
  'mixedHexRuns', // ... of which only hex digits (hex dumps)
  'mixedTrans', // letter/digit and case changes inside them
  'b64Runs', // random-looking letter/digit runs: base64, keys, tokens
  'b64Chars',
  'b64Digits',
  'b64Trans', // case and letter/digit changes inside them
  'hexRuns', // random-looking runs of hex digits only (hashes)
  'hexChars',
  'uuids', // 8-4-4-4-12 hex
  'singleSpaces',
  'wsRuns', // other whitespace runs (indents, double spaces, tabs, newlines)
  'wsChars',
  'newlines',
  'punctRuns',
  'punctChars',
  'quotes',
  'backslashes',
  'uEscapes', // \\uXXXX escapes (JSON and JS string literals)
  'controls',
  'latinExt', // U+0080..U+024F: accented Latin letters and Latin-1 symbols
  'latinInWord', // accented letters inside a word (after another letter)
  'cyrillic', // U+0370..U+052F: Greek and Cyrillic
  'cyrillicRuns',
  'other2', // other 2-byte UTF-8 scripts
  'symbols', // U+2000..U+2BFF: typographic punctuation, arrows, box drawing
  'cjkPunct', // U+3000..U+303F and fullwidth forms
  'kana',
  'han',
  'hanRare', // ... of which NOT one token in cl100k_base (see COMMON_HAN)
  'hangul',
  'cjkRuns',
  'astral', // surrogate pairs (emoji and the like)
  'privateUse', // U+E000..U+F8FF (icon fonts)
  'other3', // lone surrogates, the rest of the BMP
  'alphabets', // the rest of U+0800..U+1FFF: Tibetan, Myanmar, Khmer, Mongolian, Greek Extended...
  'greek', // U+0370..U+03FF (the `cyrillic` feature counts U+0400..U+052F only)
  'greekWords', // runs of Greek letters
  'cyrillicWords', // runs of Cyrillic letters (`cyrillicRuns` counts runs of either, kept for the fit)
  'armenian', // U+0530..U+058F
  'hebrew', // U+0590..U+05FF
  'arabic', // U+0600..U+077F (Arabic, Syriac, Arabic Supplement)
  'rtlWords', // runs of Armenian, Hebrew or Arabic letters
  'combining', // U+0300..U+036F combining marks
  'devanagari', // U+0900..U+097F
  'indic', // U+0980..U+0DFF: Bengali, Gurmukhi, Gujarati, Oriya, Tamil, Telugu, Kannada, Malayalam, Sinhala
  'indicWords', // runs of Devanagari or the other Indic scripts
  'thai', // U+0E00..U+0EFF: Thai and Lao (no spaces between words)
  'georgian', // U+10A0..U+10FF
  'ethiopic', // U+1200..U+139F
  'latinExtAdd', // U+1E00..U+1EFF: Vietnamese precomposed letters
  'emoji', // surrogate pairs in U+1F000..U+1FAFF (the `astral` feature counts the other pairs)
  'emojiGlue', // U+200D zero-width joiner, U+FE0E/U+FE0F variation selectors
  'boxDrawing', // U+2500..U+259F box drawing and block elements (tree and table output); `symbols` counts the rest
  'cyrillicNonRu', // Cyrillic letters Russian does not use (і ї є ґ ў ђ ј љ њ ћ џ ә ғ қ ң ө ұ ү һ...): other languages, fewer whole-word tokens
] as const;
export type FeatureName = (typeof FEATURE_NAMES)[number];
export const FEATURE_COUNT = FEATURE_NAMES.length;

// ASCII classes
const LOW = 0;
const UP = 1;
const DIG = 2;
const SP = 3;
const NL = 4;
const WS = 5;
const PUN = 6;
const CTL = 7;
const NONASCII = 8;

const ASCII_CLASS = new Uint8Array(128);
/** 1 for [0-9A-Fa-f]. */
const IS_HEX = new Uint8Array(128);
/** 1 for chars that glue base64 fragments together: + / = - _ and newline (wrapped base64). */
const B64_GLUE = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  let k = PUN;
  if (c >= 97 && c <= 122) k = LOW;
  else if (c >= 65 && c <= 90) k = UP;
  else if (c >= 48 && c <= 57) k = DIG;
  else if (c === 32) k = SP;
  else if (c === 10) k = NL;
  else if (c === 9 || c === 13 || c === 11 || c === 12) k = WS;
  else if (c < 32 || c === 127) k = CTL;
  ASCII_CLASS[c] = k;
  IS_HEX[c] = (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70) ? 1 : 0;
  B64_GLUE[c] = c === 43 || c === 47 || c === 61 || c === 45 || c === 95 || c === 10 ? 1 : 0;
}

/** 1 for the lower case letters g..z (not hex digits), indexed by letter - 'a'. */
const IS_NOT_HEX_LOWER = new Uint8Array(26);
for (let l = 6; l < 26; l++) IS_NOT_HEX_LOWER[l] = 1;

/** Runs at least this long with enough case/digit changes are priced as random (base64, hashes). */
const RANDOM_RUN_MIN_CHARS = 16;

/**
 * Letter pairs (a-z, case folded, index a*26+b) that are rare inside words of real prose and code,
 * fitted with the weights (scripts/calibrate.ts). Random-looking words (base64 fragments, source map
 * VLQ, vocab dumps) are full of them, and tokenizers split such words into many short tokens.
 */
const BIGRAM_ROW = 27;
/** Row/column for accented Latin letters: never rare (the table is about ASCII letters). */
const NON_ASCII_LETTER = 26;
const RARE_BIGRAM = new Uint8Array(BIGRAM_ROW * BIGRAM_ROW);

/** Case of an accented Latin letter, near enough for word splitting (Latin-1 by range, Extended-A by parity). */
function latinCase(c: number): number {
  if (c <= 0xde) return UP;
  if (c <= 0xff) return LOW;
  if (c <= 0x17f) return (c & 1) === 0 ? UP : LOW;
  return LOW;
}

/** Install the rare-bigram table: 676 chars of '0'/'1'. */
export function setRareBigrams(table: string): void {
  if (table.length !== 26 * 26) throw new RangeError('rare bigram table must have 676 entries');
  RARE_BIGRAM.fill(0);
  for (let i = 0; i < 676; i++) RARE_BIGRAM[((i / 26) | 0) * BIGRAM_ROW + (i % 26)] = table.charCodeAt(i) === 49 ? 1 : 0;
}

setRareBigrams(RARE_BIGRAMS);

/**
 * A Bloom filter (2 probes) of the ASCII words that are single tokens, with or without a leading
 * space, in both o200k_base and cl100k_base (built by scripts/calibrate.ts from the vocabularies).
 * A known word costs one token whatever its length; an unknown one costs by length.
 */
export const KNOWN_WORDS_BITS = 18;
const KNOWN_MASK = (1 << KNOWN_WORDS_BITS) - 1;
let KNOWN = new Uint8Array(1 << (KNOWN_WORDS_BITS - 3));

export function setKnownWords(base64: string): void {
  const bin = atob(base64);
  if (bin.length !== KNOWN.length && bin.length !== 0) throw new RangeError('known-word filter has the wrong size');
  KNOWN = new Uint8Array(1 << (KNOWN_WORDS_BITS - 3));
  for (let i = 0; i < bin.length; i++) KNOWN[i] = bin.charCodeAt(i);
}
setKnownWords(KNOWN_WORDS);

/** Bitmap over U+4E00..U+9FFF: 1 = the ideograph is a single token in cl100k_base (the common ones). */
export const HAN_FIRST = 0x4e00;
export const HAN_LAST = 0x9fff;
let HAN_COMMON = new Uint8Array((HAN_LAST - HAN_FIRST + 8) >>> 3);
export function setCommonHan(base64: string): void {
  const bin = atob(base64);
  HAN_COMMON = new Uint8Array((HAN_LAST - HAN_FIRST + 8) >>> 3);
  for (let i = 0; i < bin.length && i < HAN_COMMON.length; i++) HAN_COMMON[i] = bin.charCodeAt(i);
}
setCommonHan(COMMON_HAN);

/** FNV-1a step over a char code (the hash of a word is folded char by char in the scan). */
export const wordHashStep = (h: number, c: number): number => Math.imul(h ^ c, 16777619);
export const WORD_HASH_SEED = 2166136261 | 0;
const probe2 = (h: number) => (Math.imul(h, 0x9e3779b1) >>> 13) & KNOWN_MASK;
export function knownWordProbes(h: number): [number, number] {
  return [h & KNOWN_MASK, probe2(h)];
}
const isKnown = (h: number): boolean => {
  const a = h & KNOWN_MASK;
  const b = probe2(h);
  return (KNOWN[a >>> 3]! & (1 << (a & 7))) !== 0 && (KNOWN[b >>> 3]! & (1 << (b & 7))) !== 0;
};

const isHexAt = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i);
  return c < 128 && IS_HEX[c] === 1;
};

/** True when text[start..start+36) is an 8-4-4-4-12 hex UUID. Called only at a hex run of 8 followed by '-'. */
function isUuidAt(text: string, start: number): boolean {
  if (start < 0 || start + 36 > text.length) return false;
  for (let k = 0; k < 36; k++) {
    const dash = k === 8 || k === 13 || k === 18 || k === 23;
    if (dash ? text.charCodeAt(start + k) !== 45 : !isHexAt(text, start + k)) return false;
  }
  const after = text.charCodeAt(start + 36);
  return !(after < 128 && ASCII_CLASS[after]! <= DIG);
}

const F = Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, i])) as Record<FeatureName, number>;

/**
 * Fill `out` (length FEATURE_COUNT) with the features of `text`. One pass, O(n), no allocation.
 */
export function scanFeatures(text: string, out: Float64Array): void {
  out.fill(0);
  addRangeFeatures(text, 0, text.length, out);
}

/**
 * ADD the features of text[start..end) to `out`. Only the UUID check looks past `end` (a UUID that
 * starts inside the window is priced whole); pairs and \uXXXX escapes cut by `end` count as cut.
 */
export function addRangeFeatures(text: string, start: number, end: number, out: Float64Array): void {
  const n = Math.min(end, text.length);
  // committed features
  let words = 0, knownWords = 0, capsWords = 0, titleWords = 0, wordLetters = 0, wordOver3 = 0, wordOver6 = 0, wordOver10 = 0, capsPairs = 0, rareBigrams = 0;
  let digitRuns = 0, digitGroups = 0, digitChars = 0;
  let mixedRuns = 0, mixedChars = 0, mixedHexRuns = 0, mixedTrans = 0;
  let b64Runs = 0, b64Chars = 0, b64Digits = 0, b64Trans = 0;
  let hexRuns = 0, hexChars = 0, uuids = 0;
  let singleSpaces = 0, wsRuns = 0, wsChars = 0, newlines = 0;
  let punctRuns = 0, punctChars = 0, quotes = 0, backslashes = 0, uEscapes = 0, controls = 0;
  let latinExt = 0, latinInWord = 0, cyrillic = 0, cyrillicRuns = 0, other2 = 0, symbols = 0;
  let cjkPunct = 0, kana = 0, han = 0, hanRare = 0, hangul = 0, cjkRuns = 0, astral = 0, privateUse = 0, other3 = 0, alphabets = 0;
  let greek = 0, greekWords = 0, cyrillicWords = 0, armenian = 0, hebrew = 0, arabic = 0, rtlWords = 0, combining = 0;
  let cyrillicNonRu = 0, boxDrawing = 0;
  let devanagari = 0, indic = 0, indicWords = 0, thai = 0, georgian = 0, ethiopic = 0, latinExtAdd = 0, emoji = 0, emojiGlue = 0;
  // the script of the previous non-ASCII letter run (1 Greek/Cyrillic, 2 CJK, 3 RTL, 4 Indic, 5 other), 0 after anything else
  let prevWord = 0;

  // the current ASCII letter/digit run, with its words and digit groups held back until we know
  // whether the run is ordinary text or random
  let runLen = 0, runDigits = 0, runTrans = 0, runCaps = 0, runNonHex = 0, runCls = -1;
  let tWords = 0, tKnown = 0, tCaps = 0, tTitle = 0, tLetters = 0, tOver3 = 0, tOver6 = 0, tOver10 = 0, tRare = 0;
  let tDigitRuns = 0, tDigitGroups = 0;
  let wl = 0, wu = 0, wFirstUp = false, wh = WORD_HASH_SEED, dl = 0, prevLetter = -1;
  let lastRandom = false;
  let gap = 0;
  let gapGlue = false;

  let wsLen = 0, wsOnlySpace = true;
  let punctLen = 0;
  let prevScript = 0; // 1 cyrillic, 2 cjk

  for (let i = Math.max(0, start); i <= n; i++) {
    const c = i < n ? text.charCodeAt(i) : 32;
    // accented Latin letters (U+00C0..U+024F but × and ÷) are letters of the word they are in
    const k = c < 128 ? ASCII_CLASS[c]! : c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7 ? latinCase(c) : NONASCII;

    if (k <= DIG) {
      // ---- letter or digit: extend the run
      if (runLen === 0) {
        gapGlue = lastRandom && gap === 1;
        runCls = -1;
        // close any whitespace / punctuation run
        if (wsLen > 0) {
          if (wsLen === 1 && wsOnlySpace) singleSpaces++;
          else { wsRuns++; wsChars += wsLen; }
          wsLen = 0; wsOnlySpace = true;
        }
        if (punctLen > 0) { punctRuns++; punctChars += punctLen; punctLen = 0; }
        prevScript = 0; prevWord = 0;
      }
      if (k === DIG) {
        if (wl > 0) {
          tWords++; tLetters += wl;
          if (wl > 1 && isKnown(wh)) tKnown++;
          else if (wl > 1 && wu === wl) tCaps++;
          else {
            if (wFirstUp) tTitle++;
            if (wl > 3) { tOver3 += wl - 3; if (wl > 6) { tOver6 += wl - 6; if (wl > 10) tOver10 += wl - 10; } }
          }
          wl = 0; wu = 0; wFirstUp = false; wh = WORD_HASH_SEED;
        }
        prevLetter = -1;
        dl++;
        runDigits++;
      } else {
        if (dl > 0) { tDigitRuns++; tDigitGroups += ((dl + 2) / 3) | 0; dl = 0; }
        if (k === UP) {
          if (runCls === UP) runCaps++;
          else if (runCls === LOW && wl > 0) {
            // camelCase hump: a new word
            tWords++; tLetters += wl;
            if (wl > 1 && isKnown(wh)) tKnown++;
            else if (wl > 1 && wu === wl) tCaps++;
            else {
              if (wFirstUp) tTitle++;
              if (wl > 3) { tOver3 += wl - 3; if (wl > 6) { tOver6 += wl - 6; if (wl > 10) tOver10 += wl - 10; } }
            }
            wl = 0; wu = 0; wFirstUp = false; wh = WORD_HASH_SEED;
          }
        }
        let letter = c < 128 ? (c | 32) - 97 : NON_ASCII_LETTER;
        if (prevLetter >= 0) tRare += RARE_BIGRAM[prevLetter * BIGRAM_ROW + letter]!;
        wh = Math.imul(wh ^ c, 16777619);
        if (k === UP) {
          if (wl === 0 && runLen === 0) wFirstUp = true;
          wu++;
        }
        if (c >= 128) {
          latinExt++;
          if (wl > 0) latinInWord++;
          runNonHex++;
        } else if (IS_HEX[c] === 0) runNonHex++;
        wl++;
        if (runCls !== k && runCls !== -1) runTrans++;
        runCls = k;
        runLen++;
        // hot path: the lower case letters that follow (most of any text) in a tight loop
        let j = i + 1;
        let d = j < n ? text.charCodeAt(j) : 0;
        if (d >= 97 && d <= 122) {
          if (k === UP) runTrans++;
          runCls = LOW;
          do {
            const l = d - 97;
            tRare += RARE_BIGRAM[letter * BIGRAM_ROW + l]!;
            letter = l;
            wh = Math.imul(wh ^ d, 16777619);
            runNonHex += IS_NOT_HEX_LOWER[l]!;
            j++;
            d = j < n ? text.charCodeAt(j) : 0;
          } while (d >= 97 && d <= 122);
          const more = j - i - 1;
          wl += more;
          runLen += more;
          i = j - 1;
        }
        prevLetter = letter;
        continue;
      }
      if (runCls !== k && runCls !== -1) runTrans++;
      runCls = k;
      runLen++;
      continue;
    }

    // ---- anything else ends the letter/digit run
    if (runLen > 0) {
      if (wl > 0) {
        tWords++; tLetters += wl;
        if (wl > 1 && isKnown(wh)) tKnown++;
        else if (wl > 1 && wu === wl) tCaps++;
        else {
          if (wFirstUp) tTitle++;
          if (wl > 3) { tOver3 += wl - 3; if (wl > 6) { tOver6 += wl - 6; if (wl > 10) tOver10 += wl - 10; } }
        }
        wl = 0; wu = 0; wFirstUp = false; wh = WORD_HASH_SEED;
      }
      if (dl > 0) { tDigitRuns++; tDigitGroups += ((dl + 2) / 3) | 0; dl = 0; }
      prevLetter = -1;
      const mixed = runDigits > 0 && runDigits < runLen;
      // random: long, changing class often, and (unless hex) full of letter pairs real words avoid,
      // so getElementById10 stays an identifier while base64 does not
      let random =
        runLen >= RANDOM_RUN_MIN_CHARS &&
        runTrans * 3 >= runLen &&
        (runDigits >= 2 || runCaps >= 2) &&
        (runNonHex === 0 || tRare >= 2);
      if (!random && gapGlue && (mixed || runTrans * 4 >= runLen || runLen <= 3)) random = true;
      if (runNonHex === 0 && runLen === 8 && c === 45 && isUuidAt(text, i - 8)) {
        uuids++;
        // resume right after the UUID (the loop's i++ lands on its 37th char)
        i = i - 8 + 35;
        runLen = runDigits = runTrans = runCaps = runNonHex = 0;
        tWords = tKnown = tCaps = tTitle = tLetters = tOver3 = tOver6 = tOver10 = tRare = tDigitRuns = tDigitGroups = 0;
        lastRandom = false;
        gap = 0;
        continue;
      }
      if (random) {
        if (runNonHex === 0 && runDigits > 0) { hexRuns++; hexChars += runLen; }
        else { b64Runs++; b64Chars += runLen; b64Digits += runDigits; b64Trans += runTrans; }
      } else {
        words += tWords; knownWords += tKnown; capsWords += tCaps; titleWords += tTitle; wordLetters += tLetters; wordOver3 += tOver3; wordOver6 += tOver6; wordOver10 += tOver10;
        capsPairs += runCaps; rareBigrams += tRare;
        digitRuns += tDigitRuns; digitGroups += tDigitGroups; digitChars += runDigits;
        if (mixed) {
          mixedRuns++; mixedChars += runLen; mixedTrans += runTrans;
          if (runNonHex === 0) mixedHexRuns++;
        }
      }
      lastRandom = random;
      runLen = runDigits = runTrans = runCaps = runNonHex = 0;
      tWords = tKnown = tCaps = tTitle = tLetters = tOver3 = tOver6 = tOver10 = tRare = tDigitRuns = tDigitGroups = 0;
      gap = 0;
    }
    if (i === n) break;
    gap++;

    if (k === SP || k === NL || k === WS) {
      if (punctLen > 0) { punctRuns++; punctChars += punctLen; punctLen = 0; }
      wsLen++;
      if (k !== SP) wsOnlySpace = false;
      if (k === NL) newlines++;
      else lastRandom = false;
      prevScript = 0; prevWord = 0;
      continue;
    }
    if (wsLen > 0) {
      if (wsLen === 1 && wsOnlySpace) singleSpaces++;
      else { wsRuns++; wsChars += wsLen; }
      wsLen = 0; wsOnlySpace = true;
    }
    if (k === PUN) {
      if (B64_GLUE[c] === 0) lastRandom = false;
      if (c === 92) {
        // \uXXXX: one escape, not a backslash plus a mixed run
        if (i + 5 < n && (text.charCodeAt(i + 1) | 32) === 117 && isHexAt(text, i + 2) && isHexAt(text, i + 3) && isHexAt(text, i + 4) && isHexAt(text, i + 5)) {
          if (punctLen > 0) { punctRuns++; punctChars += punctLen; punctLen = 0; }
          uEscapes++;
          i += 5;
          prevScript = 0; prevWord = 0;
          continue;
        }
        backslashes++;
      } else if (c === 34) quotes++;
      punctLen++;
      prevScript = 0; prevWord = 0;
      continue;
    }
    if (punctLen > 0) { punctRuns++; punctChars += punctLen; punctLen = 0; }
    lastRandom = false;
    if (k === CTL) { controls++; prevScript = 0; prevWord = 0; continue; }

    // ---- non-ASCII
    if (c < 0x250) {
      // Latin-1 symbols (the letters took the word path above)
      latinExt++;
      prevScript = 0; prevWord = 0;
    }
    else if (c >= 0x370 && c < 0x530) {
      if (c < 0x400) {
        greek++;
        if (prevWord !== 6) { greekWords++; prevWord = 6; }
      } else {
        cyrillic++;
        // Russian's 66 letters are U+0410..U+044F and ё/Ё; the rest mark another language
        if ((c < 0x410 || c > 0x44f) && c !== 0x451 && c !== 0x401) cyrillicNonRu++;
        if (prevWord !== 1) { cyrillicWords++; prevWord = 1; }
      }
      if (prevScript !== 1) { cyrillicRuns++; prevScript = 1; }
    } else if (c < 0x800) {
      prevScript = 0;
      if (c < 0x370) { combining++; }
      else if (c < 0x590) { armenian++; if (prevWord !== 3) { rtlWords++; prevWord = 3; } }
      else if (c < 0x600) { hebrew++; if (prevWord !== 3) { rtlWords++; prevWord = 3; } }
      else if (c < 0x780) { arabic++; if (prevWord !== 3) { rtlWords++; prevWord = 3; } }
      else { other2++; prevWord = 0; }
    }
    else if (c >= 0x4e00 && c <= 0x9fff) {
      han++;
      const o = c - HAN_FIRST;
      if ((HAN_COMMON[o >>> 3]! & (1 << (o & 7))) === 0) hanRare++;
      if (prevScript !== 2) { cjkRuns++; prevScript = 2; }
    } else if (c >= 0x3040 && c <= 0x30ff) {
      kana++;
      if (prevScript !== 2) { cjkRuns++; prevScript = 2; }
    } else if (c >= 0xac00 && c <= 0xd7af) {
      hangul++;
      if (prevScript !== 2) { cjkRuns++; prevScript = 2; }
    } else if (c >= 0x3400 && c < 0x4e00) {
      han++;
      if (prevScript !== 2) { cjkRuns++; prevScript = 2; }
    } else if ((c >= 0x3000 && c < 0x3040) || (c >= 0xff00 && c <= 0xffef)) { cjkPunct++; prevScript = 0; prevWord = 0; }
    else if (c < 0x2000) {
      prevScript = 0;
      if (c >= 0x900 && c < 0xe00) {
        if (c < 0x980) devanagari++;
        else indic++;
        if (prevWord !== 4) { indicWords++; prevWord = 4; }
      } else if (c >= 0xe00 && c < 0xf00) thai++;
      else if (c >= 0x10a0 && c < 0x1100) { georgian++; if (prevWord !== 5) { indicWords++; prevWord = 5; } }
      else if (c >= 0x1200 && c < 0x13a0) ethiopic++;
      else if (c >= 0x1e00 && c < 0x1f00) latinExtAdd++;
      else alphabets++;
    }
    else if (c >= 0x2000 && c < 0x2c00) { if (c === 0x200d) emojiGlue++; else if (c >= 0x2500 && c < 0x25a0) boxDrawing++; else symbols++; prevScript = 0; prevWord = 0; }
    else if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < n ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        // U+1F000..U+1FAFF: high surrogate D83C..D83E
        if (c >= 0xd83c && c <= 0xd83e) emoji++;
        else astral++;
        i++;
      }
      else other3++;
      prevScript = 0; prevWord = 0;
    } else if (c >= 0xe000 && c <= 0xf8ff) { privateUse++; prevScript = 0; prevWord = 0; }
    else if (c === 0xfe0f || c === 0xfe0e) { emojiGlue++; prevScript = 0; prevWord = 0; }
    else { other3++; prevScript = 0; prevWord = 0; }
    continue;
  }
  if (wsLen > 0) {
    // the sentinel at i === n never joins a run, so wsLen here is real whitespace at the end
    if (wsLen === 1 && wsOnlySpace) singleSpaces++;
    else { wsRuns++; wsChars += wsLen; }
  }
  if (punctLen > 0) { punctRuns++; punctChars += punctLen; }

  out[F.words]! += words; out[F.knownWords]! += knownWords; out[F.capsWords]! += capsWords; out[F.titleWords]! += titleWords; out[F.wordLetters]! += wordLetters; out[F.wordOver3]! += wordOver3; out[F.wordOver6]! += wordOver6;
  out[F.wordOver10]! += wordOver10; out[F.capsPairs]! += capsPairs; out[F.rareBigrams]! += rareBigrams;
  out[F.digitRuns]! += digitRuns; out[F.digitGroups]! += digitGroups; out[F.digitChars]! += digitChars;
  out[F.mixedRuns]! += mixedRuns; out[F.mixedChars]! += mixedChars; out[F.mixedHexRuns]! += mixedHexRuns; out[F.mixedTrans]! += mixedTrans;
  out[F.b64Runs]! += b64Runs; out[F.b64Chars]! += b64Chars; out[F.b64Digits]! += b64Digits; out[F.b64Trans]! += b64Trans;
  out[F.hexRuns]! += hexRuns; out[F.hexChars]! += hexChars; out[F.uuids]! += uuids;
  out[F.singleSpaces]! += singleSpaces; out[F.wsRuns]! += wsRuns; out[F.wsChars]! += wsChars; out[F.newlines]! += newlines;
  out[F.punctRuns]! += punctRuns; out[F.punctChars]! += punctChars; out[F.quotes]! += quotes; out[F.backslashes]! += backslashes;
  out[F.uEscapes]! += uEscapes; out[F.controls]! += controls;
  out[F.latinExt]! += latinExt; out[F.latinInWord]! += latinInWord; out[F.cyrillic]! += cyrillic; out[F.cyrillicRuns]! += cyrillicRuns; out[F.other2]! += other2;
  out[F.symbols]! += symbols; out[F.cjkPunct]! += cjkPunct; out[F.kana]! += kana; out[F.han]! += han; out[F.hanRare]! += hanRare; out[F.hangul]! += hangul;
  out[F.cjkRuns]! += cjkRuns; out[F.astral]! += astral; out[F.privateUse]! += privateUse; out[F.other3]! += other3;
  out[F.alphabets]! += alphabets;
  out[F.greek]! += greek; out[F.greekWords]! += greekWords; out[F.cyrillicWords]! += cyrillicWords; out[F.armenian]! += armenian;
  out[F.hebrew]! += hebrew; out[F.arabic]! += arabic; out[F.rtlWords]! += rtlWords; out[F.combining]! += combining;
  out[F.devanagari]! += devanagari; out[F.indic]! += indic; out[F.indicWords]! += indicWords; out[F.thai]! += thai;
  out[F.georgian]! += georgian; out[F.ethiopic]! += ethiopic; out[F.latinExtAdd]! += latinExtAdd; out[F.emoji]! += emoji; out[F.emojiGlue]! += emojiGlue; out[F.cyrillicNonRu]! += cyrillicNonRu; out[F.boxDrawing]! += boxDrawing;
}
