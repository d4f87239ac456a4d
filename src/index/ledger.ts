/**
 * The ledger: one record per tool result, computed once at indexing and read by every view
 * (docs/index.md "The ledger"). Four figures, each with where it comes from:
 *
 * | figure | what | provenance |
 * | --- | --- | --- |
 * | full | the raw result: its text's estimate (the index's checked calibrated one) plus its images by pixels | estimated |
 * | as the client | what the client would have put in context without Spillway (src/agents: its own caps, images by pixels) | the rule's: observed, reported or inferred |
 * | entered | what reached the model: the API's usage delta split by the calibrated breakdown where the transcript has it (the timeline writes it back), else estimated | measured / estimated |
 * | kept out | assets cut out (count, bytes, their cost had they entered: pixels for images), and the spilled remainder | estimated |
 *
 * `ledgerOf` is pure and cheap (arithmetic on what the listing has): a listing writes it with each
 * payload row; the estimate of a spill's message is chars / 4 until the background pass (the
 * timeline's, src/timeline/timelines.ts) measures or estimates it.
 */
import { type ImageSize, clientGives, imageSize, imageTokens, imagesTokens, providerOf, ruleById } from '../agents/index.js';
import { DEFAULT_PROFILE, DEFAULT_STRATEGY } from '../pipeline/index.js';
import type { LedgerProvenance, PayloadLedger } from './rows.js';
import type { AssetRef } from '../pipeline/types.js';
import type { PayloadRecord } from './record.js';
import { type Awaitable, type SessionSource, isPromiseLike } from './source.js';
import { base64TokensForChars } from './text.js';

export type LedgerHow = 'measured' | 'estimated';

export interface LedgerFigures {
  full: number;
  client: number;
  clientRule: string;
  entered: number;
  enteredHow: LedgerHow;
  keptAssets: number;
  keptBytes: number;
  keptTokens: number;
  images: number;
}

/** Chars per token of a message the listing has not estimated yet (the `chars4` strategy). */
const MESSAGE_CHARS_PER_TOKEN = 4;

/** Asset sources an image enters the model as an image through (a block, a data URL): priced by pixels had it entered. */
const IMAGE_SOURCES: ReadonlySet<string> = new Set(['mcp-image', 'data-url']);

/**
 * The ledger of one payload record. `client`: the client the call came from (the transcript's, or the
 * spill's sidecar); `model`: the session's, when its turns say (the image rule follows it).
 */
export function ledgerOf(rec: PayloadRecord, client: string | undefined, model: string | undefined): LedgerFigures {
  const provider = providerOf(client, model);
  const images = rec.images ?? [];
  const textTokens = Math.max(0, rec.tokens - (rec.imageTextTokens ?? 0));
  const textChars = Math.max(0, (rec.chars ?? rec.bytes) - (rec.imageChars ?? 0));
  const pixels = imagesTokens(images, provider);
  const full = textTokens + pixels;
  const given = clientGives(client, { tool: rec.tool, chars: textChars, tokens: textTokens, lines: rec.lines ?? Math.ceil(textChars / 80), images }, model);
  // Assets Spillway cut out (a spill's sidecar lists them); a client's own saved images were seen by the model, not kept out.
  const cut = rec.source === undefined || rec.spillId !== undefined ? rec.assets : [];
  let keptBytes = 0;
  let keptTokens = 0;
  cut.forEach((a, i) => {
    keptBytes += a.bytes;
    const size = rec.assetSizes?.[i];
    // An image that would have entered as an image costs its pixels; base64 in text would have cost its text.
    keptTokens += IMAGE_SOURCES.has(a.source) && a.mimeType.startsWith('image/') ? imageTokens(provider, size ?? undefined) : base64TokensForChars(Math.ceil(a.bytes / 3) * 4);
  });
  let entered = full;
  if (rec.action !== 'pass') {
    const chars = rec.message?.length ?? rec.messageChars;
    entered = chars === undefined ? Math.min(full, given.tokens) : Math.ceil(chars / MESSAGE_CHARS_PER_TOKEN);
  }
  return { full, client: given.tokens, clientRule: given.ruleId, entered, enteredHow: 'estimated', keptAssets: cut.length, keptBytes, keptTokens, images: images.length };
}

/** What is left out of `full` besides the assets: the spilled remainder (never negative). */
export function spilledRemainder(f: Pick<LedgerFigures, 'full' | 'entered' | 'keptTokens'>): number {
  return Math.max(0, f.full - f.entered - f.keptTokens);
}

/** Bytes read from an image asset to find its size. */
const IMAGE_HEAD_BYTES = 64 * 1024;

/**
 * The sizes of a record's image assets, from their files' first bytes (a few per spill that cut an
 * image; nothing read for other assets). Synchronous for a local source.
 */
export function assetSizes(source: SessionSource, assets: readonly AssetRef[]): Awaitable<Array<ImageSize | null> | undefined> {
  if (!assets.some((a) => a.mimeType.startsWith('image/'))) return undefined;
  const out: Array<ImageSize | null> = [];
  const pending: Array<Promise<void>> = [];
  assets.forEach((a, i) => {
    out.push(null);
    if (!a.mimeType.startsWith('image/')) return;
    try {
      const r = source.readRange(a.path, 0, IMAGE_HEAD_BYTES);
      const take = (x: { bytes: Buffer }) => {
        const s = imageSize(x.bytes);
        out[i] = s ? { width: s.width, height: s.height } : null;
      };
      if (isPromiseLike(r)) pending.push(Promise.resolve(r).then(take, () => undefined));
      else take(r);
    } catch {
      /* gone, or not a file we may read: priced as an image of unknown size */
    }
  });
  return pending.length ? Promise.all(pending).then(() => out) : out;
}

/** The ledger's columns as getPayload reads them (`p.*`). */
export interface LedgerDbRow {
  bytes: number;
  l_full: number | null;
  l_client: number | null;
  l_client_rule: string | null;
  l_entered: number | null;
  l_entered_how: LedgerProvenance | null;
  l_kept_assets: number;
  l_kept_bytes: number;
  l_kept_tokens: number;
  l_images: number;
}

/** A row's ledger with the provenance of each figure; the rule's label and evidence read from the client registry (the lead updates them there). */
export function ledgerOfRow(r: LedgerDbRow): PayloadLedger | undefined {
  if (r.l_full === null || r.l_entered === null || r.l_client === null) return undefined;
  const rule = ruleById(r.l_client_rule ?? '');
  const entered = r.l_entered;
  return {
    full: { bytes: r.bytes, tokens: r.l_full, profile: `${DEFAULT_STRATEGY} (${DEFAULT_PROFILE}); images by pixels`, images: r.l_images, provenance: 'estimated' },
    asClient: { tokens: r.l_client, rule: r.l_client_rule ?? 'unknown.whole', provenance: rule?.provenance ?? 'inferred', evidence: rule?.evidence ?? 'no rules known for this client: the result whole' },
    entered: { tokens: entered, provenance: r.l_entered_how ?? 'estimated' },
    keptOut: { assets: r.l_kept_assets, bytes: r.l_kept_bytes, assetTokens: r.l_kept_tokens, spilled: spilledRemainder({ full: r.l_full, entered, keptTokens: r.l_kept_tokens }), provenance: 'estimated' },
  };
}

