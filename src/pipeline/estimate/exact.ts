/**
 * Exact token counts from the real tokenizers, loaded lazily (dynamic import) so that nothing on the
 * guard's cheap path pays for them: gpt-tokenizer for o200k_base and cl100k_base, and
 * @anthropic-ai/tokenizer (tiktoken WASM with the legacy Claude vocabulary) for `claude`.
 *
 * Big inputs are counted in chunks cut only where a tokenizer's pre-tokenizer would cut anyway, so the
 * sum is the same number a single call would give, and the event loop gets a turn between chunks.
 */
import type { Estimate, Profile } from '../types.js';
import { corrected, type EstimateOptions } from './options.js';

/** Chars per tokenizer call (a call cannot yield: ~5-10 ms each at this size). */
export const EXACT_CHUNK_CHARS = 32 * 1024;
/** How far past the target a chunk may grow while looking for a safe cut. */
export const EXACT_CHUNK_SEARCH_CHARS = 16 * 1024;
/** The event loop gets a turn after about this many chars counted (a 100 MB input never blocks for long). */
export const EXACT_YIELD_CHARS = 256 * 1024;

export interface CountExactOptions {
  signal?: AbortSignal;
  /** Chars per tokenizer call (default EXACT_CHUNK_CHARS); smaller lets `stop` decide sooner. */
  chunkChars?: number;
  /**
   * Asked after each chunk with the tokens so far and where the counted prefix ends: true stops the
   * count there (the result then covers text[0..end) only); a number sets the next chunk's size.
   */
  stop?: (tokens: number, end: number) => boolean | number;
}

type Counter = (text: string) => number;

const loaded = new Map<Profile, Promise<Counter>>();
const ready = new Map<Profile, Counter>();

/** Special-token text in a tool result is just text: count it as the API would see a user's string. */
const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

async function load(profile: Profile): Promise<Counter> {
  switch (profile) {
    case 'o200k': {
      const m = await import('gpt-tokenizer/encoding/o200k_base');
      return (t) => m.countTokens(t, NO_SPECIAL);
    }
    case 'cl100k': {
      const m = await import('gpt-tokenizer/encoding/cl100k_base');
      return (t) => m.countTokens(t, NO_SPECIAL);
    }
    case 'claude': {
      const mod = (await import('@anthropic-ai/tokenizer')) as unknown as {
        getTokenizer?: () => ClaudeTokenizer;
        default?: { getTokenizer: () => ClaudeTokenizer };
      };
      const getTokenizer = mod.getTokenizer ?? mod.default?.getTokenizer;
      if (!getTokenizer) throw new Error('@anthropic-ai/tokenizer: getTokenizer not found');
      // One encoder for the process: building it parses the whole vocabulary (~150 ms). Same call as
      // the package's own countTokens(), which builds and frees a new one each time.
      const tk = getTokenizer();
      return (t) => tk.encode(t.normalize('NFKC'), 'all').length;
    }
    default:
      throw new TypeError(`unknown profile: ${String(profile)}`);
  }
}

interface ClaudeTokenizer {
  encode(text: string, allowedSpecial?: 'all' | string[]): Uint32Array;
}

/** The tokenizer for a profile, loaded once and cached. */
export function loadTokenizer(profile: Profile): Promise<Counter> {
  let p = loaded.get(profile);
  if (!p) {
    p = load(profile).then((c) => {
      ready.set(profile, c);
      return c;
    });
    p.catch(() => loaded.delete(profile));
    loaded.set(profile, p);
  }
  return p;
}

/** True once the profile's tokenizer has been loaded in this process (tests use it to prove laziness). */
export function isTokenizerLoaded(profile: Profile): boolean {
  return ready.has(profile);
}

const LETTER_RE = /\p{L}/u;
/** ASCII punctuation after which no tokenizer we use joins with the letter before (not ' < > _). */
const SAFE_PUNCT = new Uint8Array(128);
for (const ch of '!"#$%&()*+,-./:;=?@[\\]^`{|}~') SAFE_PUNCT[ch.charCodeAt(0)] = 1;

const isAsciiLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** A letter (\p{L}, any script; not a mark, not half of a surrogate pair) at text[i]. */
function isLetterAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c < 128) return isAsciiLetter(c);
  if (c >= 0xd800 && c <= 0xdfff || Number.isNaN(c)) return false;
  return LETTER_RE.test(text[i]!);
}

/**
 * True when a pre-tokenizer split is guaranteed between text[i-1] and text[i], for o200k, cl100k and
 * the Claude (GPT-2 style) patterns: a letter followed by punctuation, or a letter followed by one
 * space and a letter, in any script (every pattern starts a word piece at its leading space: ` word`). No
 * pattern lets a letter piece absorb following punctuation or space (only contractions after an
 * apostrophe), no pattern looks behind, and NFKC never composes a letter with what follows here.
 */
function isSafeCut(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c === 32) return isLetterAt(text, i - 1) && isLetterAt(text, i + 1);
  const safePunct = c < 128 ? SAFE_PUNCT[c] === 1 : c === 0x3001 || c === 0x3002;
  if (!safePunct) return false;
  const p = text.charCodeAt(i - 1);
  if (p < 128) return (p >= 65 && p <= 90) || (p >= 97 && p <= 122);
  if (p >= 0xd800 && p <= 0xdfff) return false;
  return LETTER_RE.test(text[i - 1]!);
}

/** Where the chunk starting at `start` ends. */
export function nextCut(text: string, start: number, chunk = EXACT_CHUNK_CHARS, search = EXACT_CHUNK_SEARCH_CHARS): number {
  return cutAfter(text, start, chunk, search).end;
}

/** The end of the chunk from `start`, and whether it had to cut where a pre-tokenizer would not. */
function cutAfter(text: string, start: number, chunk: number, search: number, pieces = false): { end: number; hard: boolean } {
  const n = text.length;
  if (n - start <= chunk) return { end: n, hard: false };
  const from = start + chunk;
  // Outside unbroken runs a cut is never forced before EXACT_CHUNK_CHARS more of searching (Thai, say,
  // has neither spaces nor punctuation for long stretches): a small chunk must not cost exactness.
  const to = Math.min(n, from + (pieces ? search : Math.max(search, EXACT_CHUNK_CHARS)));
  for (let i = from; i < to; i++) if (isSafeCut(text, i)) return { end: i, hard: false };
  if (to === n) return { end: n, hard: false };
  // No safe cut (one huge run without punctuation): cut anyway, never inside a surrogate pair.
  // The count may then differ from a one-shot count by a token at this seam.
  let cut = to;
  const c = text.charCodeAt(cut);
  if (c >= 0xdc00 && c <= 0xdfff) cut--;
  return { end: cut, hard: true };
}

/**
 * An unbroken run this long (letters, symbols or whitespace) makes a single BPE call quadratic in it:
 * 32 K chars of `{}` or of one word take about a second. Texts with one are counted in pieces.
 */
export const PATHOLOGICAL_RUN_CHARS = 2048;
/** Chars per piece for such texts: a run is cut every ~PIECE_CHARS, costing at most a token per cut. */
export const PIECE_CHARS = 512;

/**
 * Pre-tokenizer classes, as o200k/cl100k cut text: whitespace, letters (any non-ASCII counts as a
 * letter: conservative), digits (cut into 1-3 digit pieces, never long), other ASCII symbols.
 */
function preTokenClass(c: number): number {
  if (c === 32 || (c >= 9 && c <= 13)) return 0;
  if ((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c >= 0x80) return 1;
  if (c >= 48 && c <= 57) return 2;
  return 3;
}

/**
 * True when `n` chars in a row share a pre-tokenizer class (digits too: Claude's pattern keeps a digit
 * run whole). Checks the last char of each window and walks back while the class holds; a break at k
 * rules out every window starting at or before k, so typical text is crossed in steps of about n.
 */
export function hasLongRun(s: string, n: number): boolean {
  for (let pos = 0; pos + n <= s.length; ) {
    const j = pos + n - 1;
    const cls = preTokenClass(s.charCodeAt(j));
    let k = j - 1;
    while (k >= pos && preTokenClass(s.charCodeAt(k)) === cls) k--;
    if (k < pos) return true;
    pos = k + 1;
  }
  return false;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** An exact count, and how many seams cut a run where the tokenizer itself would not have. */
export interface ExactCount {
  tokens: number;
  /** Each may make the count differ from a one-shot count by about a token (0: identical). */
  hardCuts: number;
  /** End of the counted prefix: text.length unless `stop` ended the count early. */
  end: number;
}

/**
 * Exact token count of `text` for a profile's real tokenizer. Loads the tokenizer on first use.
 * Large texts are counted chunk by chunk with the event loop running in between; a text with an
 * unbroken run of PATHOLOGICAL_RUN_CHARS+ is counted in pieces of ~PIECE_CHARS, so its cost stays
 * linear (a one-shot count of 200 KB of `=` would take minutes).
 */
export async function countExactDetailed(text: string, profile: Profile, opts: CountExactOptions = {}): Promise<ExactCount> {
  const count = ready.get(profile) ?? (await loadTokenizer(profile));
  const pieces = hasLongRun(text, PATHOLOGICAL_RUN_CHARS);
  let chunk = pieces ? PIECE_CHARS : Math.max(PIECE_CHARS, opts.chunkChars ?? EXACT_CHUNK_CHARS);
  if (text.length <= chunk) return { tokens: count(text), hardCuts: 0, end: text.length };
  let search = pieces ? PIECE_CHARS / 4 : Math.min(EXACT_CHUNK_SEARCH_CHARS, chunk / 2);
  let tokens = 0;
  let hardCuts = 0;
  let sinceYield = 0;
  let start = 0;
  while (start < text.length) {
    opts.signal?.throwIfAborted();
    const cut = cutAfter(text, start, chunk, search, pieces);
    tokens += count(text.slice(start, cut.end));
    if (cut.hard) hardCuts++;
    sinceYield += cut.end - start;
    start = cut.end;
    if (start < text.length && opts.stop) {
      const next = opts.stop(tokens, start);
      if (next === true) break;
      if (typeof next === 'number' && !pieces) {
        chunk = Math.max(PIECE_CHARS, Math.min(EXACT_CHUNK_CHARS, Math.floor(next)));
        search = Math.min(EXACT_CHUNK_SEARCH_CHARS, chunk / 2);
      }
    }
    if (start < text.length && sinceYield >= EXACT_YIELD_CHARS) {
      sinceYield = 0;
      await yieldToLoop();
    }
  }
  return { tokens, hardCuts, end: start };
}

export interface CountOptions extends CountExactOptions, Pick<EstimateOptions, 'claudeCorrection'> {
  /** Receives a line when the text had to be counted in pieces (an unbroken run). */
  notes?: string[];
}

/**
 * THE exact count: the profile's real tokenizer, as an Estimate (the Claude correction applied, once).
 * A text counted in pieces (an unbroken run of PATHOLOGICAL_RUN_CHARS+) says so in `notes`.
 */
export async function countTokens(text: string, profile: Profile, opts: CountOptions = {}): Promise<Estimate> {
  const counted = await countExactDetailed(text, profile, { signal: opts.signal, chunkChars: opts.chunkChars });
  if (counted.hardCuts > 0) {
    opts.notes?.push(`counted in pieces (an unbroken run of ${PATHOLOGICAL_RUN_CHARS}+ characters); may differ from one count by up to ${counted.hardCuts} tokens`);
  }
  return { ...corrected(counted.tokens, profile, opts), strategy: profile, profile, exact: true };
}

/** The raw count of the real tokenizer (no correction), for tests and calibration. */
export async function countExact(text: string, profile: Profile, opts: CountExactOptions = {}): Promise<number> {
  return (await countExactDetailed(text, profile, opts)).tokens;
}

/**
 * Optional and never on the default path: Anthropic's count_tokens API through the official SDK, for
 * the model you actually use. Needs `apiKey` (the CLI passes ANTHROPIC_API_KEY) and the network. The count
 * includes the few tokens of the message framing, as the API reports them.
 */
export async function countTokensAnthropicApi(
  text: string,
  opts: { model: string; apiKey?: string; baseURL?: string; signal?: AbortSignal },
): Promise<number> {
  const apiKey = opts.apiKey;
  if (!apiKey) throw new Error('countTokensAnthropicApi: set ANTHROPIC_API_KEY (or pass apiKey)');
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  const client = new Anthropic({ apiKey, baseURL: opts.baseURL });
  const res = await client.messages.countTokens(
    { model: opts.model, messages: [{ role: 'user', content: text }] },
    { signal: opts.signal },
  );
  return res.input_tokens;
}
