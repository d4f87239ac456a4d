/**
 * The one linear pass behind the `calibrated` strategy: it reads each UTF-16 code unit once (no
 * allocation per char, no regex), and classifies what it sees into the features a BPE tokenizer is
 * sensitive to: word counts and lengths, digit groups, punctuation and whitespace runs, random-looking
 * runs (base64, hex, hashes), UUIDs, and scripts (CJK, Cyrillic, other). Each tokenizer family prices
 * these features with its own fitted weights (constants.ts).
 *
 * Its shape is measured, not chosen for looks (`npm run bench estimate`, and an A/B of both shapes
 * timed in turns in one process): letters and digits, most of any text, are read by the main loop
 * with their counters in locals, and every other stretch (whitespace, punctuation, other scripts,
 * read by a code unit table) by a part of its own. Reading each letter/digit run in a function of
 * its own, or keeping the counters in an object or a typed array, made ASCII text 15-45% slower;
 * and a small function with a loop that V8 deoptimized on a path it had not seen was left in
 * baseline code, 5x slower, for as long as it was timed.
 */
import { COMMON_HAN, KNOWN_WORDS, RARE_BIGRAMS } from './constants.js';

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

/**
 * The scan reads UTF-16 code units from this buffer, block by block, not from the string: V8's
 * charCodeAt dispatches on the string's representation (flat one- or two-byte, sliced, cons), and a
 * process that has met several kinds (every guard does) ran the loop up to ~1.7x slower than on one.
 * A block is copied in by Buffer.write with utf16le (a native copy of the code units, lone
 * surrogates included), so the loop reads one typed array whatever the string. UNITS[i - unitBase] is
 * text.charCodeAt(i) for i in [blockStart - UNIT_BEHIND, blockEnd + UNIT_AHEAD); NO_UNIT past the text.
 */
const UNIT_BLOCK = 64 * 1024;
/** The UUID check looks 8 chars back from where a run ends, and 28 ahead. */
const UNIT_BEHIND = 16;
const UNIT_AHEAD = 64;
const UNITS = new Uint16Array(UNIT_BEHIND + UNIT_BLOCK + UNIT_AHEAD + 1);
const unitBytes = Buffer.from(UNITS.buffer, UNITS.byteOffset, UNITS.byteLength);
const BIG_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 0;
let unitBase = 0;
/** Stands for "no char" past the end (charCodeAt's NaN): not ASCII, so no test on it matches. */
const NO_UNIT = 0xffff;

/** A text loaded whole by {@link holdUnits}: scans of windows of it read the buffer as it is. */
let held: string | undefined;

/**
 * Load all of `text` once, when it fits the buffer, for many scans of windows of it (the sampler),
 * until {@link releaseUnits}. Without it each window would copy its own block.
 */
export function holdUnits(text: string): void {
  held = undefined;
  if (text.length > UNIT_BLOCK) return;
  loadBlock(text, 0, text.length);
  held = text;
}

/** Forget the held text (the buffer never keeps a result alive past the call that scanned it). */
export function releaseUnits(): void {
  held = undefined;
}

/** Load the block of text[from..) the scan of [.., n) reads next; returns where the block ends. */
function loadBlock(text: string, from: number, n: number): number {
  if (held === text) return n; // all of it is loaded: unitBase 0, NO_UNIT past its end
  held = undefined; // another text takes the buffer
  const blockEnd = Math.min(n, from + UNIT_BLOCK);
  const lo = Math.max(0, from - UNIT_BEHIND);
  const hi = Math.min(text.length, blockEnd + UNIT_AHEAD);
  const written = unitBytes.write(lo === 0 && hi === text.length ? text : text.slice(lo, hi), 0, 'utf16le');
  if (BIG_ENDIAN) unitBytes.subarray(0, written).swap16();
  UNITS[hi - lo] = NO_UNIT;
  unitBase = lo;
  return blockEnd;
}

const isHexAt = (i: number): boolean => {
  const c = UNITS[i - unitBase]!;
  return c < 128 && IS_HEX[c] === 1;
};

/** True when text[start..start+36) is an 8-4-4-4-12 hex UUID. Called only at a hex run of 8 followed by '-'. */
function isUuidAt(textLength: number, start: number): boolean {
  if (start < 0 || start + 36 > textLength) return false;
  for (let k = 0; k < 36; k++) {
    const dash = k === 8 || k === 13 || k === 18 || k === 23;
    if (dash ? UNITS[start + k - unitBase] !== 45 : !isHexAt(start + k)) return false;
  }
  const after = UNITS[start + 36 - unitBase]!;
  return !(after < 128 && ASCII_CLASS[after]! <= DIG);
}

const F = Object.fromEntries(FEATURE_NAMES.map((n, i) => [n, i])) as Record<FeatureName, number>;

/**
 * Non-ASCII chars other than accented Latin letters, by code unit: the feature each one counts, and
 * what it does to the word and run it may be part of. Built once from SCRIPT_RANGES.
 */
const SCRIPT = new Uint16Array(0x10000);
const FEATURE_MASK = 0x7f;
/** Bits 7-9: the word kind (a new word is counted where the kind changes); W_RESET ends a word, W_KEEP leaves it as it is. */
const WORD_SHIFT = 7;
const W_RESET = 0, W_CYRILLIC = 1, W_RTL = 3, W_INDIC = 4, W_GEORGIAN = 5, W_GREEK = 6, W_KEEP = 7;
/** Bits 10-11: the run kind (a new run is counted where it changes); 0 ends a run. */
const RUN_SHIFT = 10;
const R_GREEK_CYRILLIC = 1, R_CJK = 2;
/** Also counts cyrillicNonRu. */
const NON_RU = 1 << 12;
/** Also counts hanRare unless HAN_COMMON has it. */
const HAN_CHECK = 1 << 13;
/** A high surrogate: a pair (emoji or astral) when a low one follows, else other3. */
const HIGH_SURROGATE = 1 << 14;
const WORD_FEATURE = Int32Array.from([0, F.cyrillicWords, 0, F.rtlWords, F.indicWords, F.indicWords, F.greekWords, 0]);
const RUN_FEATURE = Int32Array.from([0, F.cyrillicRuns, F.cjkRuns, 0]);

/** [first, last, feature, word kind, run kind, flags]; a later range overrides an earlier one. */
const SCRIPT_RANGES: ReadonlyArray<readonly [number, number, FeatureName, number, number, number?]> = [
  [0x0080, 0xffff, 'other3', W_RESET, 0], // lone surrogates, the rest of the BMP
  [0x0080, 0x024f, 'latinExt', W_RESET, 0], // Latin-1 symbols (the letters are read as words)
  [0x0250, 0x036f, 'combining', W_KEEP, 0],
  [0x0370, 0x03ff, 'greek', W_GREEK, R_GREEK_CYRILLIC],
  // Russian's 66 letters are U+0410..U+044F and ё/Ё; the rest mark another language
  [0x0400, 0x052f, 'cyrillic', W_CYRILLIC, R_GREEK_CYRILLIC, NON_RU],
  [0x0401, 0x0401, 'cyrillic', W_CYRILLIC, R_GREEK_CYRILLIC],
  [0x0410, 0x044f, 'cyrillic', W_CYRILLIC, R_GREEK_CYRILLIC],
  [0x0451, 0x0451, 'cyrillic', W_CYRILLIC, R_GREEK_CYRILLIC],
  [0x0530, 0x058f, 'armenian', W_RTL, 0],
  [0x0590, 0x05ff, 'hebrew', W_RTL, 0],
  [0x0600, 0x077f, 'arabic', W_RTL, 0],
  [0x0780, 0x07ff, 'other2', W_RESET, 0],
  [0x0800, 0x1fff, 'alphabets', W_KEEP, 0],
  [0x0900, 0x097f, 'devanagari', W_INDIC, 0],
  [0x0980, 0x0dff, 'indic', W_INDIC, 0],
  [0x0e00, 0x0eff, 'thai', W_KEEP, 0],
  [0x10a0, 0x10ff, 'georgian', W_GEORGIAN, 0],
  [0x1200, 0x139f, 'ethiopic', W_KEEP, 0],
  [0x1e00, 0x1eff, 'latinExtAdd', W_KEEP, 0],
  [0x2000, 0x2bff, 'symbols', W_RESET, 0],
  [0x200d, 0x200d, 'emojiGlue', W_RESET, 0],
  [0x2500, 0x259f, 'boxDrawing', W_RESET, 0],
  [0x3000, 0x303f, 'cjkPunct', W_RESET, 0],
  [0x3040, 0x30ff, 'kana', W_KEEP, R_CJK],
  [0x3400, 0x4dff, 'han', W_KEEP, R_CJK],
  [HAN_FIRST, HAN_LAST, 'han', W_KEEP, R_CJK, HAN_CHECK],
  [0xac00, 0xd7af, 'hangul', W_KEEP, R_CJK],
  [0xd800, 0xdbff, 'other3', W_RESET, 0, HIGH_SURROGATE],
  [0xe000, 0xf8ff, 'privateUse', W_RESET, 0],
  [0xfe0e, 0xfe0f, 'emojiGlue', W_RESET, 0],
  [0xff00, 0xffef, 'cjkPunct', W_RESET, 0],
];
for (const [first, last, feature, word, run, flags = 0] of SCRIPT_RANGES) {
  SCRIPT.fill(F[feature] | (word << WORD_SHIFT) | (run << RUN_SHIFT) | flags, first, last + 1);
}

/** Accented Latin letters (U+00C0..U+024F but × and ÷) are letters of the word they are in. */
const isLatinLetter = (c: number): boolean => c >= 0xc0 && c <= 0x24f && c !== 0xd7 && c !== 0xf7;

/**
 * The scan in progress (one at a time: it is synchronous). The main loop and the parts it hands a
 * stretch of text to read the block buffer through locals, and call {@link reload} where the block
 * ends: UNITS[j - blockBase] holds text[j] for j < blockLim.
 */
let scanText = '';
let scanEnd = 0;
let blockBase = 0;
let blockLim = 0;
/** Set by each part: the stretch it read lets a random run before it go on after it (base64 glue). */
let keepsRandom = false;
/** Whitespace and punctuation, counted by their parts and added to the features at the end. */
let singleSpaces = 0, wsRuns = 0, wsChars = 0, newlines = 0, punctRuns = 0, punctChars = 0, quotes = 0, backslashes = 0, uEscapes = 0;

const isSpaceUnit = (c: number): boolean => c === 32 || c === 10 || c === 9 || c === 13 || c === 11 || c === 12;

function beginScan(text: string, n: number): void {
  scanText = text;
  scanEnd = n;
  blockLim = 0; // nothing of this text is loaded yet
  singleSpaces = wsRuns = wsChars = newlines = punctRuns = punctChars = quotes = backslashes = uEscapes = 0;
}

/** Add what the parts counted (and the single spaces the loop read itself) to the features. */
function endScan(out: Float64Array, oneSpaces: number): void {
  out[F.singleSpaces]! += singleSpaces + oneSpaces; out[F.wsRuns]! += wsRuns; out[F.wsChars]! += wsChars; out[F.newlines]! += newlines;
  out[F.punctRuns]! += punctRuns; out[F.punctChars]! += punctChars; out[F.quotes]! += quotes; out[F.backslashes]! += backslashes; out[F.uEscapes]! += uEscapes;
  scanText = ''; // the scan never keeps a result alive past the call
}

function reload(j: number): void {
  blockLim = loadBlock(scanText, j, scanEnd);
  blockBase = unitBase;
}

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
 * The loop reads letters and digits itself, a char at a time (most of any text), and hands each
 * stretch of anything else to its part: whitespace, punctuation, other scripts.
 */
export function addRangeFeatures(text: string, start: number, end: number, out: Float64Array): void {
  const n = Math.min(end, text.length);
  const textLength = text.length;
  beginScan(text, n);
  const u = UNITS;
  let base = 0, lim = 0;
  // the words and digit groups of the runs that proved not random
  let words = 0, knownWords = 0, capsWords = 0, titleWords = 0, wordLetters = 0, wordOver3 = 0, wordOver6 = 0, wordOver10 = 0;
  let digitRuns = 0, digitGroups = 0, digitChars = 0, capsPairs = 0, rareBigrams = 0, latinExt = 0, latinInWord = 0;
  // the letter/digit run being read, its words and digit groups held back until we know whether it is random
  let runLen = 0, runDigits = 0, runTrans = 0, runCaps = 0, runNonHex = 0, runCls = -1, rare = 0, glue = false;
  let tWords = 0, tKnown = 0, tCaps = 0, tTitle = 0, tLetters = 0, tOver3 = 0, tOver6 = 0, tOver10 = 0, tDigitRuns = 0, tDigitGroups = 0;
  let wl = 0, wu = 0, firstUp = false, wh = WORD_HASH_SEED, dl = 0, prevLetter = -1;
  // the last run was random, and the `gap` chars since have not ruled out that the next one continues it
  let lastRandom = false, gap = 0, oneSpaces = 0;
  for (let i = Math.max(0, start); ; i++) {
    if (i >= lim && i < n) { reload(i); base = blockBase; lim = blockLim; }
    const c = i < n ? u[i - base]! : 32; // a space past the end closes what is open
    const k = c < 128 ? ASCII_CLASS[c]! : isLatinLetter(c) ? latinCase(c) : NONASCII;
    // a word ends before anything but a letter that goes on with it (a camelCase hump starts one)
    if (wl > 0 && (k >= DIG || (k === UP && runCls === LOW))) {
      tWords++; tLetters += wl;
      if (wl > 1 && isKnown(wh)) tKnown++;
      else if (wl > 1 && wu === wl) tCaps++;
      else {
        if (firstUp) tTitle++;
        if (wl > 3) { tOver3 += wl - 3; if (wl > 6) { tOver6 += wl - 6; if (wl > 10) tOver10 += wl - 10; } }
      }
      wl = 0; wu = 0; firstUp = false; wh = WORD_HASH_SEED;
    }
    // o200k and cl100k split numbers into 1-3 digit pieces
    if (dl > 0 && k !== DIG) { tDigitRuns++; tDigitGroups += ((dl + 2) / 3) | 0; dl = 0; }
    if (k <= DIG) {
      if (runLen === 0) glue = lastRandom && gap === 1;
      if (k === DIG) { prevLetter = -1; dl++; runDigits++; }
      else {
        if (k === UP) {
          if (runCls === UP) runCaps++;
          if (wl === 0 && runLen === 0) firstUp = true;
          wu++;
        }
        let letter = c < 128 ? (c | 32) - 97 : NON_ASCII_LETTER;
        if (prevLetter >= 0) rare += RARE_BIGRAM[prevLetter * BIGRAM_ROW + letter]!;
        wh = Math.imul(wh ^ c, 16777619);
        if (c >= 128) { latinExt++; if (wl > 0) latinInWord++; runNonHex++; }
        else if (IS_HEX[c] === 0) runNonHex++;
        wl++;
        if (runCls !== k && runCls !== -1) runTrans++;
        runCls = k;
        runLen++;
        // hot path: the lower case letters that follow (most of any text) in a tight loop; one cut
        // at a block's end goes on through the general path, with the same features
        let j = i + 1;
        let d = j < lim ? u[j - base]! : 0;
        if (d >= 97 && d <= 122) {
          if (k === UP) runTrans++;
          runCls = LOW;
          do {
            const l = d - 97;
            rare += RARE_BIGRAM[letter * BIGRAM_ROW + l]!;
            letter = l;
            wh = Math.imul(wh ^ d, 16777619);
            runNonHex += IS_NOT_HEX_LOWER[l]!;
            j++;
            d = j < lim ? u[j - base]! : 0;
          } while (d >= 97 && d <= 122);
          wl += j - i - 1;
          runLen += j - i - 1;
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
    if (runLen > 0) {
      // the run ends here: as a UUID (the scan resumes right after it), random, or words and digit groups
      const uuid = runNonHex === 0 && runLen === 8 && c === 45 && isUuidAt(textLength, i - 8);
      if (uuid) {
        out[F.uuids]!++;
        lastRandom = false;
      } else {
        lastRandom = isRandomRun(runLen, runDigits, runTrans, runCaps, runNonHex, rare, glue);
        if (lastRandom) addRandomRun(out, runLen, runDigits, runTrans, runNonHex);
        else {
          words += tWords; knownWords += tKnown; capsWords += tCaps; titleWords += tTitle; wordLetters += tLetters;
          wordOver3 += tOver3; wordOver6 += tOver6; wordOver10 += tOver10; digitRuns += tDigitRuns; digitGroups += tDigitGroups;
          digitChars += runDigits; capsPairs += runCaps; rareBigrams += rare;
          if (runDigits > 0 && runDigits < runLen) addMixedRun(out, runLen, runTrans, runNonHex);
        }
      }
      runLen = runDigits = runTrans = runCaps = runNonHex = rare = 0;
      runCls = prevLetter = -1;
      tWords = tKnown = tCaps = tTitle = tLetters = tOver3 = tOver6 = tOver10 = tDigitRuns = tDigitGroups = 0;
      gap = 0;
      if (uuid) { i += 27; continue; }
    }
    if (i >= n) break;
    if (c === 32 && (i + 1 < lim ? !isSpaceUnit(u[i + 1 - base]!) : i + 1 >= n)) {
      // one space between words (most of prose), without a call
      oneSpaces++;
      lastRandom = false;
      gap++;
      continue;
    }
    // anything else: a stretch of whitespace, punctuation, controls or other scripts, read by its part
    const stretchEnd = k <= WS ? scanSpace(i, n) : k === PUN ? scanPunct(i, n) : k === CTL ? control(i, out) : scanScripts(i, n, out);
    // when the gap matters (a random run may go on after it) the stretch held no escape or pair: a step a char
    gap += stretchEnd - i;
    lastRandom = lastRandom && keepsRandom;
    base = blockBase; lim = blockLim;
    i = stretchEnd - 1; // the loop's i++ lands on the char after the stretch
  }
  out[F.words]! += words; out[F.knownWords]! += knownWords; out[F.capsWords]! += capsWords; out[F.titleWords]! += titleWords; out[F.wordLetters]! += wordLetters;
  out[F.wordOver3]! += wordOver3; out[F.wordOver6]! += wordOver6; out[F.wordOver10]! += wordOver10; out[F.capsPairs]! += capsPairs; out[F.rareBigrams]! += rareBigrams;
  out[F.digitRuns]! += digitRuns; out[F.digitGroups]! += digitGroups; out[F.digitChars]! += digitChars; out[F.latinExt]! += latinExt; out[F.latinInWord]! += latinInWord;
  endScan(out, oneSpaces);
}

/**
 * A run is random when it is long, changes class often, and (unless hex) is full of letter pairs
 * real words avoid, so getElementById10 stays an identifier while base64 does not; or when one
 * char glues it to a random run before it.
 */
function isRandomRun(runLen: number, runDigits: number, runTrans: number, runCaps: number, runNonHex: number, rare: number, glue: boolean): boolean {
  if (runLen >= RANDOM_RUN_MIN_CHARS && runTrans * 3 >= runLen && (runDigits >= 2 || runCaps >= 2) && (runNonHex === 0 || rare >= 2)) return true;
  return glue && ((runDigits > 0 && runDigits < runLen) || runTrans * 4 >= runLen || runLen <= 3);
}

/** A random run counts as one hex run (a hash) or one base64 run, whatever words it looked like. */
function addRandomRun(out: Float64Array, runLen: number, runDigits: number, runTrans: number, runNonHex: number): void {
  if (runNonHex === 0 && runDigits > 0) {
    out[F.hexRuns]!++;
    out[F.hexChars]! += runLen;
  } else {
    out[F.b64Runs]!++;
    out[F.b64Chars]! += runLen;
    out[F.b64Digits]! += runDigits;
    out[F.b64Trans]! += runTrans;
  }
}

/** A short run mixing letters and digits (utf8, x64, 4e47), on top of its words and digit groups. */
function addMixedRun(out: Float64Array, runLen: number, runTrans: number, runNonHex: number): void {
  out[F.mixedRuns]!++;
  out[F.mixedChars]! += runLen;
  out[F.mixedTrans]! += runTrans;
  if (runNonHex === 0) out[F.mixedHexRuns]!++;
}

/** A control char (NUL, BEL, ESC...): one each. */
function control(i: number, out: Float64Array): number {
  out[F.controls]!++;
  keepsRandom = false;
  return i + 1;
}

/** Read a whitespace stretch at i: one space, or a run (indents, tabs, blank lines) with its newlines. */
function scanSpace(i: number, n: number): number {
  const u = UNITS;
  let base = blockBase, lim = blockLim;
  let j = i, onlySpace = true, onlyNewlines = true;
  for (; ; j++) {
    if (j >= lim) {
      if (j >= n) break;
      reload(j); base = blockBase; lim = blockLim;
    }
    const c = u[j - base]!;
    if (c === 32) onlyNewlines = false;
    else if (c === 10) { newlines++; onlySpace = false; }
    else if (c === 9 || c === 13 || c === 11 || c === 12) { onlyNewlines = false; onlySpace = false; }
    else break;
  }
  if (j - i === 1 && onlySpace) singleSpaces++;
  else { wsRuns++; wsChars += j - i; }
  // a wrapped base64 body goes on after a line break, not after a space or a tab
  keepsRandom = onlyNewlines;
  return j;
}

/** Read a punctuation stretch at i, with its quotes and backslashes; a \uXXXX escape is one escape and ends a run. */
function scanPunct(i: number, n: number): number {
  const u = UNITS;
  let base = blockBase, lim = blockLim;
  let j = i, len = 0, glueOnly = true;
  for (;;) {
    if (j >= lim) {
      if (j >= n) break;
      reload(j); base = blockBase; lim = blockLim;
    }
    const c = u[j - base]!;
    if (c >= 128 || ASCII_CLASS[c] !== PUN) break;
    if (B64_GLUE[c] === 0) glueOnly = false;
    if (c === 92) {
      if (j + 5 < n && (u[j + 1 - base]! | 32) === 117 && isHexAt(j + 2) && isHexAt(j + 3) && isHexAt(j + 4) && isHexAt(j + 5)) {
        if (len > 0) { punctRuns++; punctChars += len; len = 0; }
        uEscapes++;
        j += 6;
        continue;
      }
      backslashes++;
    } else if (c === 34) quotes++;
    len++;
    j++;
  }
  if (len > 0) { punctRuns++; punctChars += len; }
  keepsRandom = glueOnly;
  return j;
}

/**
 * Read a run of other non-ASCII chars at i (not accented Latin letters) by their script (SCRIPT):
 * with words of Greek, Cyrillic, RTL and Indic letters, and runs of Greek/Cyrillic and of CJK.
 */
function scanScripts(i: number, n: number, out: Float64Array): number {
  const u = UNITS;
  let base = blockBase, lim = blockLim;
  let j = i, prevWord = W_RESET, prevRun = 0;
  for (;;) {
    if (j >= lim) {
      if (j >= n) break;
      reload(j); base = blockBase; lim = blockLim;
    }
    const c = u[j - base]!;
    if (c < 128 || isLatinLetter(c)) break;
    const e = SCRIPT[c]!;
    if ((e & HIGH_SURROGATE) !== 0) {
      const d = j + 1 < n ? u[j + 1 - base]! : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        // U+1F000..U+1FAFF: high surrogate D83C..D83E
        out[c >= 0xd83c && c <= 0xd83e ? F.emoji : F.astral]!++;
        j++;
      } else out[F.other3]!++;
      prevWord = W_RESET;
      prevRun = 0;
      j++;
      continue;
    }
    out[e & FEATURE_MASK]!++;
    if ((e & NON_RU) !== 0) out[F.cyrillicNonRu]!++;
    else if ((e & HAN_CHECK) !== 0 && (HAN_COMMON[(c - HAN_FIRST) >>> 3]! & (1 << ((c - HAN_FIRST) & 7))) === 0) out[F.hanRare]!++;
    const w = (e >>> WORD_SHIFT) & 7;
    if (w !== W_KEEP) {
      if (w !== W_RESET && w !== prevWord) out[WORD_FEATURE[w]!]!++;
      prevWord = w;
    }
    const r = (e >>> RUN_SHIFT) & 3;
    if (r !== 0 && r !== prevRun) out[RUN_FEATURE[r]!]!++;
    prevRun = r;
    j++;
  }
  keepsRandom = false;
  return j;
}

/** ASCII punctuation after which no tokenizer we use joins with the letter before (exact.ts's SAFE_PUNCT). */
const CUT_PUNCT = new Uint8Array(128);
for (const ch of '!"#$%&()*+,-./:;=?@[\\]^`{|}~') CUT_PUNCT[ch.charCodeAt(0)] = 1;
const isAsciiLetterUnit = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/**
 * How many positions p in [from, to) (p >= 1) are a certain piece boundary for every tokenizer we
 * use: an ASCII letter at p-1 followed by ASCII punctuation from CUT_PUNCT at p, or by a space at p
 * and an ASCII letter at p+1. These are the ASCII cases of exact.ts's isSafeCut (no pattern lets a
 * letter piece take the punctuation or space after it; a space always starts the next word's piece),
 * so a text whose [a, b) holds k of them strictly inside splits into at least k + 1 pieces, and a
 * byte-level BPE spends at least one token per piece: tokens(text[a..b)) >= k + 1, for any text.
 * Read through the same block buffer as the scan (one pass, no charCodeAt).
 */
export function countPieceCuts(text: string, from: number, to: number): number {
  const n = Math.min(to, text.length);
  const u = UNITS;
  let cuts = 0;
  let base = 0;
  let blockEnd = Math.max(1, from);
  for (let p = blockEnd; p < n; p++) {
    // a block holds UNIT_BEHIND units before it and UNIT_AHEAD after: p - 1 and p + 1 are in it
    if (p >= blockEnd) {
      blockEnd = loadBlock(text, p, n);
      base = unitBase;
    }
    const c = u[p - base]!;
    if (c === 32) {
      if (isAsciiLetterUnit(u[p - 1 - base]!) && isAsciiLetterUnit(u[p + 1 - base]!)) cuts++;
    } else if (c < 128 && CUT_PUNCT[c] === 1 && isAsciiLetterUnit(u[p - 1 - base]!)) cuts++;
  }
  return cuts;
}
