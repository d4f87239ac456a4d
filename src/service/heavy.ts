/**
 * The service's CPU-heavy one-off work, free of the index and of the service's state, so it runs
 * the same on the service's thread (small inputs) and in the compute worker (compute.ts):
 *
 *   - estimateText: every cheap estimate, exact tokenizers on request, density shares;
 *   - analyzeContent: what `analyze` does to dropped bytes (detect, estimate, guard, save to a
 *     scratch session);
 *   - structuralRun: the offline structural summary of a payload.
 *
 * Inputs arrive as bytes (a worker gets them transferred, not copied) and are decoded here.
 */
import fs from 'node:fs';
import {
  DEFAULT_STRATEGY,
  PROFILES,
  describeTokens,
  detectContent,
  guardLargeResult,
  handleLargeResponse,
  sniffBinary,
  openUntrusted,
  UntrustedFileError,
  type OpenedUntrusted,
} from '../pipeline/index.js';
import type { AssetRef, ContentKind, GuardResult, Profile, SummaryOutput, SummaryRequest } from '../pipeline/types.js';
import { createSummarizer } from '../summarize/index.js';
import { ServiceError, type AnalyzeResponse, type EstimateResponse } from './contract.js';

/** Bytes of a binary drop whose base64 is estimated (the count is scaled to the whole file). */
export const BINARY_ESTIMATE_SAMPLE_BYTES = 3 * 1024 * 1024;

/** Largest payload read whole for `estimate` / `summarize`; the rest is estimated by scaling. */
export const MAX_WHOLE_READ_BYTES = 64 * 1024 * 1024;

export const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

/** Full estimate of one text (the pipeline's describeTokens), scaled when `text` is a sample of the whole. */
export async function estimateText(text: string, profile: Profile, exact: boolean, scale = 1, claudeCorrection?: number): Promise<Omit<EstimateResponse, 'bytes'>> {
  const r = await describeTokens(text, { profile, claudeCorrection, exact: exact ? PROFILES : [], check: false });
  const parts = r.trust.parts.map((p) => ({ label: p.label, tokens: Math.round(p.tokens * scale) }));
  return {
    chars: Math.round(text.length * scale),
    profile,
    default: DEFAULT_STRATEGY,
    estimates: r.estimates.map((e) => ({ ...e, tokens: Math.round(e.tokens * scale), exact: e.exact && scale === 1 })),
    density: r.density,
    trust: { margin: r.trust.margin, riskTokens: parts.reduce((a, p) => a + p.tokens, 0), parts },
  };
}

export interface AnalyzeContentOptions {
  /** The dropped file's name (the tool column shows `drop:<name>`). */
  name: string;
  /** A fresh scratch session folder, created here; never the user's folder. */
  sessionPath: string;
  limitTokens: number;
  profile: Profile;
  /** The service's SPILLWAY_CLAUDE_CORRECTION (read from its env at the edge), for the claude profile. */
  claudeCorrection?: number;
}

export interface AnalyzeContentResult {
  mimeType: string;
  kind: ContentKind;
  estimate: EstimateResponse;
  decision: AnalyzeResponse['decision'];
  assets: AssetRef[];
  /** The saved payload in the scratch session, when one was written. */
  payloadPath?: string;
}

/** Type, estimates and the guard's decision for dropped bytes; the content is saved to the scratch session. */
export async function analyzeContent(content: Buffer, o: AnalyzeContentOptions): Promise<AnalyzeContentResult> {
  const { sessionPath, limitTokens, profile, claudeCorrection } = o;
  const detection = detectContent(content);
  const sniffed = detection.binary ? await sniffBinary(content) : undefined;
  const mimeType = sniffed?.mimeType ?? detection.mimeType ?? 'application/octet-stream';
  const isText = !detection.binary;
  const text = isText ? content.toString('utf8') : '';
  // A binary file would reach a model as base64: estimate that (on a sample, scaled).
  const sample = isText ? null : content.subarray(0, Math.min(content.length, BINARY_ESTIMATE_SAMPLE_BYTES));
  const estText = sample ? sample.toString('base64') : text;
  const est = await estimateText(estText, profile, false, sample && sample.length > 0 ? content.length / sample.length : 1, claudeCorrection);
  const estimate: EstimateResponse = { ...est, bytes: content.length };

  await fs.promises.mkdir(sessionPath, { recursive: true });
  // The tool column shows what was dropped; the guard sanitizes the name for the file stem.
  const toolName = `drop:${o.name}`;
  const decisionRun: GuardResult | null = await guardLargeResult(isText ? text : content, { sessionPath, toolName, limitTokens, profile, claudeCorrection });
  // A result that passes is still saved to the scratch session (never the user's folder),
  // so the viewer can open it and its assets are listed; the decision stays "pass".
  const saved: GuardResult | null =
    decisionRun ??
    (isText
      ? await handleLargeResponse({ text, sessionPath, context: { toolName, limitTokens, profile, claudeCorrection } })
      : await guardLargeResult(content, { sessionPath, toolName, limitTokens: 1, profile, claudeCorrection }));
  const res: AnalyzeContentResult = {
    mimeType,
    kind: detection.kind,
    estimate,
    decision: decisionRun
      ? { action: decisionRun.action, limitTokens: decisionRun.limitTokens, message: decisionRun.message, estimate: decisionRun.estimate }
      : { action: 'pass', limitTokens, message: null },
    assets: saved?.assets ?? [],
  };
  if (saved?.payloadPath) res.payloadPath = saved.payloadPath;
  return res;
}

/**
 * The first `maxBytes` of a regular file, and its size. `p` is a real path (confined by the
 * caller), opened the one safe way (safe-open.ts): a FIFO, socket, device or link is refused
 * before anything blocks, and so is a hard link unless `hardLinks: 'allow'` (a file the user picked).
 */
export async function readHead(p: string, maxBytes: number, o: { hardLinks?: 'allow' | 'refuse' } = {}): Promise<{ buf: Buffer; size: number }> {
  let opened: OpenedUntrusted;
  try {
    opened = await openUntrusted(p, { root: '/', hardLinks: o.hardLinks });
  } catch (err) {
    if (err instanceof UntrustedFileError) throw new ServiceError(err.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'BAD_REQUEST', err.message);
    throw err;
  }
  const { handle: fh, stat: st } = opened;
  try {
    const len = Math.min(st.size, maxBytes);
    const buf = Buffer.allocUnsafe(len);
    let off = 0;
    while (off < len) {
      const { bytesRead } = await fh.read(buf, off, len - off, off);
      if (bytesRead === 0) break;
      off += bytesRead;
    }
    return { buf: buf.subarray(0, off), size: st.size };
  } finally {
    await fh.close();
  }
}

/** Length of the longest prefix of `buf` that ends on a UTF-8 character boundary (a capped read never ends in half a character). */
export function utf8PrefixLength(buf: Buffer): number {
  let end = buf.length;
  for (let k = 0; k < 3 && end > 0 && (buf[end - 1]! & 0xc0) === 0x80; k++) end--;
  if (end > 0 && buf[end - 1]! >= 0xc0) end--;
  return end === 0 ? buf.length : end;
}

export function utf8Prefix(buf: Buffer): string {
  return buf.subarray(0, utf8PrefixLength(buf)).toString('utf8');
}

/** What a summary's input says about the bytes past MAX_WHOLE_READ_BYTES. */
export function notReadNote(totalBytes: number, readBytes: number): string {
  return readBytes < totalBytes ? `\n[… ${totalBytes - readBytes} more bytes not read]` : '';
}

/** What a structural run needs besides the text (the payload's tool and input, the focus, the cap). */
export type StructuralRequest = Omit<SummaryRequest, 'text'>;

/**
 * The offline structural summary of `bytes` (UTF-8, cut at a character start by the caller),
 * plus `suffix` (a note about bytes not read). The same summarizer `spillway summarize` uses.
 */
export async function structuralRun(bytes: Uint8Array, suffix: string, req: StructuralRequest): Promise<SummaryOutput> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8') + suffix;
  // Structural never touches the network or the signal's deadline; the caller cancels by stopping the thread.
  return createSummarizer({ provider: 'structural' }).summarize({ ...req, text }, { signal: new AbortController().signal });
}

/** structuralRun over a payload file, read here (up to MAX_WHOLE_READ_BYTES) rather than by the caller. */
export async function structuralFile(p: string, req: StructuralRequest): Promise<SummaryOutput> {
  const { buf, size } = await readHead(p, MAX_WHOLE_READ_BYTES);
  const bytes = buf.length < size ? buf.subarray(0, utf8PrefixLength(buf)) : buf;
  return structuralRun(bytes, notReadNote(size, buf.length), req);
}
