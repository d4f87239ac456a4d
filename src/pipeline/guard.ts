import path from 'node:path';
import type { AssetRef, ContentKind, Estimate, GuardAction, GuardOptions, GuardResult, PayloadMeta, Profile, StrategyName, SummaryRun, ToolResult } from './types.js';
import { DEFAULT_LIMIT_TOKENS, MAX_MESSAGE_CHARS, PREVIEW_CHARS, limitForContextWindow } from './limits.js';
import { KIND_INFO, detectTextFormat } from './detect.js';
import { DEFAULT_PROFILE, DEFAULT_STRATEGY } from './estimate/index.js';
import { LINKED_SUFFIX, inputHash, sanitizeToolName, type SessionPaths } from './layout.js';
import { normalize, preparePayload, textSlices, type Payload, type Subject } from './normalize.js';
import { decide, measure, measureInline, strategyCounts, type DecideContext, type Spill } from './decide.js';
import { extractAssets, linkAssets, linkBinary, type AssetSink, type LinkedPayload } from './extract.js';
import { commitSidecar, nameCandidates, prepareSessionDirs, publishNew, saveAsset, type StemParts, type WriteData } from './store.js';
import { emergency, failed } from './failure.js';
import { buildPreview } from './preview.js';
import { runSummary } from './summary.js';
import { buildMessage } from './message.js';
import { jsonSafe } from './serialize.js';
import { errText } from './errors.js';
import { fmtInt } from './text.js';

/**
 * The guard: pass a tool result through, or spill it to the session and hand back a short
 * message. Never throws on a tool result, and never lets an oversized one through because of
 * an internal error.
 *
 * | call | for |
 * | --- | --- |
 * | {@link guardLargeResult} | one tool result: null (pass it on) or the {@link GuardResult} to show instead |
 * | {@link handleLargeResponse} | a text the caller already knows is large: always spilled |
 * | {@link resolveLimit} | the limit a call decides with (explicit, default, narrowed by the context window) |
 *
 * A spill is a chain of phases, each returning what the next needs: normalize (normalize.ts) →
 * decide and describe (decide.ts) → link assets (extract.ts) → choose the action → publish the
 * payload (store.ts) → summary or preview → message, then the sidecar, written last.
 */

export interface HandleLargeResponseArgs {
  text: string;
  sessionPath: string;
  context?: Pick<GuardOptions, 'toolName' | 'toolInput' | 'intent' | 'limitTokens' | 'contextWindowTokens' | 'profile' | 'strategy'>;
  summarize?: GuardOptions['summarize'];
  summaryTimeoutMs?: number;
  signal?: AbortSignal;
  now?: () => Date;
}

/** The limit a call decides with: explicit, else default, narrowed by the context window. */
export function resolveLimit(o: { limitTokens?: number; contextWindowTokens?: number }): number {
  const base = o.limitTokens !== undefined && Number.isFinite(o.limitTokens) && o.limitTokens > 0 ? Math.floor(o.limitTokens) : DEFAULT_LIMIT_TOKENS;
  return limitForContextWindow(o.contextWindowTokens, base);
}

interface GuardContext extends DecideContext {
  options: GuardOptions;
}

function contextOf(options: GuardOptions): GuardContext {
  const profile: Profile = options?.profile ?? DEFAULT_PROFILE;
  const strategy: StrategyName = options?.strategy ?? DEFAULT_STRATEGY;
  let limit = DEFAULT_LIMIT_TOKENS;
  try {
    limit = resolveLimit(options ?? {});
  } catch {
    /* a hostile options object: the default limit */
  }
  return { options, limit, profile, strategy };
}

/**
 * Guard one tool result. `null`: pass it to the model unchanged. Otherwise the message to show
 * instead, with where everything was saved.
 */
export async function guardLargeResult(result: ToolResult, options: GuardOptions): Promise<GuardResult | null> {
  const ctx = contextOf(options);
  let subject: Subject | null = null;
  let spill: Spill | null = null;
  try {
    subject = normalize(result);
    if (!subject) return null;
    spill = await decide(subject, ctx);
    return spill ? await spillPayload(subject, spill, ctx) : null;
  } catch (err) {
    return emergency(err, subject, spill, ctx);
  }
}

/** Lower level: spill a text already known to be large. Never throws. */
export async function handleLargeResponse(args: HandleLargeResponseArgs): Promise<GuardResult> {
  const c = args.context ?? {};
  const { summarize, summaryTimeoutMs, signal, now } = args;
  const ctx = contextOf({ sessionPath: args.sessionPath, ...c, summarize, summaryTimeoutMs, signal, now });
  let subject: Subject | null = null;
  let spill: Spill | null = null;
  try {
    subject = { origin: 'string', text: typeof args.text === 'string' ? args.text : String(args.text), notes: [] };
    spill = await measure(subject.text, ctx, subject.notes);
    return await spillPayload(subject, spill, ctx);
  } catch (err) {
    return emergency(err, subject, spill, ctx);
  }
}

/** Content kind of a payload, and whether a tool's wrapper (Read's line numbers) makes its file plain text. */
function describeFormat(payload: Payload, walkedAsJson: boolean): { kind: ContentKind; fileKind: ContentKind } {
  if (payload.binary) return { kind: 'binary', fileKind: 'binary' };
  if (walkedAsJson) return { kind: 'json', fileKind: 'json' };
  const format = detectTextFormat(payload.text ?? '');
  return { kind: format.kind, fileKind: format.wrappers.length ? 'text' : format.kind };
}

interface Linking {
  linked?: LinkedPayload;
  /** The text was walked as JSON while looking for assets. */
  json: boolean;
}

/** Cut the assets out of a payload; a failure here only means the payload is saved whole (and noted). */
async function linkPhase(payload: Payload, sink: AssetSink): Promise<Linking> {
  try {
    if (payload.binary) return { linked: await linkBinary(payload.binary, sink), json: false };
    if (payload.text === undefined) return { json: false };
    if (!payload.textIsExact) {
      payload.notes.push('the bytes are not valid UTF-8: saved as received, without extracting assets');
      return { json: false };
    }
    const { assets, json } = extractAssets(payload.text);
    return { linked: assets.length ? await linkAssets(payload.text, assets, sink) : undefined, json };
  } catch (err) {
    payload.notes.push(`asset extraction failed (${errText(err)}); the payload is saved whole instead`);
    return { json: false };
  }
}

function localAssetSink(paths: SessionPaths): AssetSink {
  return {
    save: async (bytes, ext, sha) => {
      const saved = await saveAsset(paths.assets, bytes, ext, sha);
      return { path: saved.path, relPath: path.relative(paths.session, saved.path).split(path.sep).join('/') };
    },
  };
}

/** Inline the rest when only the assets made the result too big: it fits the limit and the message. */
async function chooseAction(payload: Payload, linked: LinkedPayload | undefined, estimate: Estimate, ctx: GuardContext) {
  if (!linked || payload.binary || linked.text.length >= MAX_MESSAGE_CHARS) return { action: 'spill' as const };
  const inline = await measureInline(linked.text, ctx, estimate.strategy);
  return inline.tokens <= ctx.limit ? { action: 'inline-assets' as const, inlineTokens: inline.tokens } : { action: 'spill' as const };
}

/** The payload file: the linked form when assets were cut out (sidecar `links` rebuild the original), else the original bytes. */
function payloadFile(payload: Payload, fileKind: ContentKind, linked?: LinkedPayload): { suffix: string; data: WriteData } {
  if (!linked) return { suffix: KIND_INFO[fileKind].ext, data: typeof payload.original === 'string' ? textSlices(payload.original) : payload.original };
  return { suffix: payload.binary || fileKind === 'json' ? LINKED_SUFFIX : KIND_INFO[fileKind].ext, data: linked.pieces };
}

/** A summary when the model will not see the content itself; else (or when it fails) a preview. */
async function summaryOrPreview(action: Exclude<GuardAction, 'pass'>, source: string | undefined, kind: ContentKind, payload: Payload, assets: AssetRef[], ctx: GuardContext) {
  const o = ctx.options;
  let summary: SummaryRun | undefined;
  if (action === 'spill' && o.summarize && source !== undefined) {
    summary = await runSummary(o.summarize, { text: source, toolName: o.toolName, toolInput: o.toolInput, focus: o.intent, timeoutMs: o.summaryTimeoutMs, signal: o.signal });
    if (summary.status !== 'ok') payload.notes.push(`summary ${summary.status}: ${summary.error ?? ''}`.trim());
  }
  if (action === 'inline-assets' || summary?.status === 'ok') return { summary };
  const preview = source !== undefined ? buildPreview(source, kind, PREVIEW_CHARS) : `(binary: ${assets[0]?.mimeType ?? 'application/octet-stream'}, ${fmtInt(payload.byteLength)} bytes)`;
  return { summary, preview };
}

async function spillPayload(subject: Subject, spill: Spill, ctx: GuardContext): Promise<GuardResult> {
  const o = ctx.options;
  const now = o.now?.() ?? new Date();
  const payload = preparePayload(subject, spill.text, spill.textBytes);
  const estimates = strategyCounts(payload.text, spill, ctx.profile);
  let paths: SessionPaths;
  try {
    paths = await prepareSessionDirs(o.sessionPath);
  } catch (err) {
    return failed(err, payload, payload.text, describeFormat(payload, false).kind, spill.estimate, ctx);
  }
  const { linked, json } = await linkPhase(payload, localAssetSink(paths));
  const { kind, fileKind } = describeFormat(payload, json);
  const choice = await chooseAction(payload, linked, spill.estimate, ctx);
  const file = payloadFile(payload, fileKind, linked);
  const parts: StemParts = { time: now, tool: sanitizeToolName(o.toolName), inputHash: inputHash(o.toolInput) };
  let published: { stem: string; path: string };
  try {
    published = await publishNew(paths.longResponses, nameCandidates(parts, file.suffix), file.data);
  } catch (err) {
    return failed(err, payload, linked?.text ?? payload.text, kind, spill.estimate, ctx);
  }
  const assets = linked?.assets ?? [];
  const shown = await summaryOrPreview(choice.action, payload.binary ? undefined : (linked?.text ?? payload.text), kind, payload, assets, ctx);
  const messageFor = (payloadPath: string) =>
    buildMessage({
      action: choice.action,
      toolName: o.toolName,
      estimate: spill.estimate,
      estimateSampled: spill.sampled !== undefined,
      limitTokens: ctx.limit,
      kind,
      bytes: payload.byteLength,
      sessionPath: paths.session,
      payloadPath,
      assets,
      summary: shown.summary,
      preview: shown.preview,
      inlineText: choice.action === 'inline-assets' ? linked?.text : undefined,
      inlineTokens: choice.inlineTokens,
    });
  const metaFor = (stem: string, payloadPath: string, message: string): PayloadMeta => ({
    version: 1,
    id: stem,
    createdAt: now.toISOString(),
    tool: o.toolName ?? parts.tool,
    ...(o.toolInput !== undefined ? { toolInput: jsonSafe(o.toolInput) } : {}),
    ...(o.intent ? { intent: o.intent } : {}),
    action: choice.action,
    payloadFile: path.basename(payloadPath),
    payloadIsOriginal: !linked,
    ...(linked ? { linkedFile: path.basename(payloadPath) } : {}),
    kind,
    bytes: payload.byteLength,
    chars: payload.text?.length ?? payload.byteLength,
    sha256: payload.sha256,
    estimate: spill.estimate,
    estimates,
    limitTokens: ctx.limit,
    assets,
    message,
    summaryRuns: shown.summary ? [shown.summary] : [],
    ...(payload.notes.length ? { errors: [...payload.notes] } : {}),
    origin: payload.origin,
    ...(linked?.links.length ? { links: linked.links } : {}),
  });
  const committed = await commitSidecar(paths.longResponses, published, nameCandidates(parts, file.suffix), messageFor, metaFor, payload.notes);
  return {
    action: choice.action,
    message: committed.message,
    estimate: spill.estimate,
    limitTokens: ctx.limit,
    payloadPath: committed.payloadPath,
    ...(linked ? { linkedPath: committed.payloadPath } : {}),
    ...(committed.metaPath ? { metaPath: committed.metaPath } : {}),
    assets,
    ...(shown.summary ? { summary: shown.summary } : {}),
    errors: payload.notes,
  };
}
