import crypto from 'node:crypto';
import path from 'node:path';

/**
 * The session layout on disk: the one module the guard, the indexer, the CLI and the UI
 * agree on. The files are the source of truth; the index can always be rebuilt from them.
 *
 * ```
 * <session>/long_responses/<stem>.<ext>          full payload as received (or the linked form when assets were cut out)
 * <session>/long_responses/<stem>.meta.json      PayloadMeta: tool, input, intent, estimates, assets, summary runs
 * <session>/long_responses/<stem>.linked.json    JSON with assets replaced by references (when any)
 * <session>/long_responses/assets/<sha256 prefix><ext>   extracted assets, content-addressed
 * ```
 * `<stem>` is `<UTC time>_<tool>_<input hash>_<seq>`, e.g. `20261130T081530123Z_read_file_3f9a1c2e_0`.
 *
 * A store (store/seam.ts) names the same files by session-relative keys: {@link payloadKey},
 * {@link sidecarKey}, {@link assetKey}; {@link isSafeKey} tells a key that stays inside the session.
 */

export const LONG_RESPONSES_DIR = 'long_responses';
export const ASSETS_DIR = 'assets';
export const META_SUFFIX = '.meta.json';
export const LINKED_SUFFIX = '.linked.json';
/** Hex chars of sha256 used to name an asset file. 32 hex = 128 bits: collisions are not a concern. */
export const ASSET_HASH_PREFIX_CHARS = 32;
/** Hex chars of the tool-input hash inside a stem. */
export const INPUT_HASH_CHARS = 8;
/** Longest sanitized tool name kept in a file name. */
export const MAX_TOOL_NAME_CHARS = 64;

export const STEM_RE = /^(\d{8}T\d{9}Z)_([A-Za-z0-9._-]+)_([0-9a-f]{8})_(\d+)$/;
/** A payload file: `<stem>` or `<stem>.<ext>` (the extension holds no `_`). */
const PAYLOAD_FILE_RE = /^(\d{8}T\d{9}Z_[A-Za-z0-9._-]+_[0-9a-f]{8}_\d+)(?:\.[^_]*)?$/;

export interface SessionPaths {
  session: string;
  longResponses: string;
  assets: string;
}

export function sessionPaths(sessionDir: string): SessionPaths {
  // A session in a bucket (`s3://…`, or `s3:/…` after path.join) is not resolved against the working folder.
  const session = /^s3:\/\/?[^/]/i.test(sessionDir) ? sessionDir : path.resolve(sessionDir);
  const longResponses = path.join(session, LONG_RESPONSES_DIR);
  return { session, longResponses, assets: path.join(longResponses, ASSETS_DIR) };
}

/** `20261130T081530123Z` for a Date, in UTC, sortable as text. */
export function stemTime(date: Date): string {
  const iso = date.toISOString(); // 2026-11-30T08:15:30.123Z
  return iso.replace(/[-:]/g, '').replace('.', '');
}

/**
 * Tool names come from servers and models: keep `[A-Za-z0-9._-]`, collapse the rest to `_`,
 * never start with a dot (no hidden files, no `..`), never empty.
 */
export function sanitizeToolName(name: unknown): string {
  const raw = typeof name === 'string' ? name : '';
  let s = raw.normalize('NFKC').replace(/[^A-Za-z0-9._-]+/g, '_');
  s = s.replace(/\.{2,}/g, '_').replace(/^[._-]+/, '');
  if (s.length > MAX_TOOL_NAME_CHARS) s = s.slice(0, MAX_TOOL_NAME_CHARS);
  s = s.replace(/[._-]+$/, '');
  return s || 'tool';
}

/** Stable short hash of a tool input (any JSON value, or undefined). */
export function inputHash(input: unknown): string {
  let text: string;
  try {
    text = input === undefined ? '' : typeof input === 'string' ? input : JSON.stringify(input) ?? '';
  } catch {
    text = String(input);
  }
  return crypto.createHash('sha256').update(text).digest('hex').slice(0, INPUT_HASH_CHARS);
}

export function makeStem(parts: { time: Date; tool: string; inputHash: string; seq: number }): string {
  return `${stemTime(parts.time)}_${sanitizeToolName(parts.tool)}_${parts.inputHash}_${parts.seq}`;
}

export interface ParsedStem {
  time: Date;
  tool: string;
  inputHash: string;
  seq: number;
}

export function parseStem(stem: string): ParsedStem | null {
  const m = STEM_RE.exec(stem);
  if (!m) return null;
  const t = m[1]!;
  const iso = `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)}T${t.slice(9, 11)}:${t.slice(11, 13)}:${t.slice(13, 15)}.${t.slice(15, 18)}Z`;
  const time = new Date(iso);
  if (Number.isNaN(time.getTime())) return null;
  return { time, tool: m[2]!, inputHash: m[3]!, seq: Number(m[4]) };
}

/** Classify a file name inside `long_responses/`. */
export function classifyLongResponseFile(
  fileName: string,
): { kind: 'meta' | 'linked' | 'payload'; stem: string } | null {
  if (fileName.startsWith('.')) return null; // temp files are dot-files
  if (fileName.endsWith(META_SUFFIX)) {
    const stem = fileName.slice(0, -META_SUFFIX.length);
    return STEM_RE.test(stem) ? { kind: 'meta', stem } : null;
  }
  if (fileName.endsWith(LINKED_SUFFIX)) {
    const stem = fileName.slice(0, -LINKED_SUFFIX.length);
    return STEM_RE.test(stem) ? { kind: 'linked', stem } : null;
  }
  // Tool names keep dots (`server.tool`), so the stem is not "up to the first dot": it ends at
  // `_<input hash>_<seq>`, and the extension after it has no underscore.
  const m = PAYLOAD_FILE_RE.exec(fileName);
  return m && STEM_RE.test(m[1]!) ? { kind: 'payload', stem: m[1]! } : null;
}

/** Key of a payload (or linked) file: `long_responses/<fileName>`. */
export function payloadKey(fileName: string): string {
  return `${LONG_RESPONSES_DIR}/${fileName}`;
}

/** Key of the sidecar of a stem: `long_responses/<stem>.meta.json`. */
export function sidecarKey(stem: string): string {
  return `${LONG_RESPONSES_DIR}/${stem}${META_SUFFIX}`;
}

/** Key of an asset file: `long_responses/assets/<fileName>` (see {@link assetFileName}). */
export function assetKey(fileName: string): string {
  return `${LONG_RESPONSES_DIR}/${ASSETS_DIR}/${fileName}`;
}

/** A key that cannot lead outside the session: relative, '/'-separated, no empty, `.` or `..` segment, no `\\` or NUL. */
export function isSafeKey(key: unknown): key is string {
  if (typeof key !== 'string' || key === '' || key.includes('\0') || key.includes('\\')) return false;
  return key.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

export function assetFileName(sha256Hex: string, ext: string): string {
  const safeExt = /^\.[A-Za-z0-9]{1,10}$/.test(ext) ? ext.toLowerCase() : '.bin';
  return `${sha256Hex.slice(0, ASSET_HASH_PREFIX_CHARS)}${safeExt}`;
}

/** Temp name in the same folder (same file system, so rename is atomic). Dot-prefixed so watchers skip it. */
export function tempNameFor(finalPath: string): string {
  const dir = path.dirname(finalPath);
  return path.join(dir, `.${path.basename(finalPath)}.${process.pid}.${crypto.randomBytes(6).toString('hex')}.tmp`);
}

export class PathEscapeError extends Error {
  constructor(readonly base: string, readonly requested: string) {
    super(`path escapes its folder: ${JSON.stringify(requested)} is outside ${JSON.stringify(base)}`);
    this.name = 'PathEscapeError';
  }
}

/**
 * Resolve `rel` inside `base` lexically, refusing anything that lands outside
 * (`..`, absolute paths, NUL bytes). Callers that must also defeat symlinks compare
 * `fs.realpath` of both sides with {@link isInside}.
 */
export function confine(base: string, rel: string): string {
  if (typeof rel !== 'string' || rel.includes('\0')) throw new PathEscapeError(base, String(rel));
  const b = path.resolve(base);
  const p = path.resolve(b, rel);
  if (!isInside(b, p)) throw new PathEscapeError(b, rel);
  return p;
}

export function isInside(base: string, candidate: string): boolean {
  const rel = path.relative(path.resolve(base), path.resolve(candidate));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** Reading a file of the layout (or any file the user did not write) goes through one function: safe-open.ts. */
export {
  openUntrusted,
  openUntrustedSync,
  readUntrusted,
  isConfinedDirSync,
  UntrustedFileError,
  UNTRUSTED_OPEN_FLAGS,
  type UntrustedFileErrorCode,
  type UntrustedOpenOptions,
  type OpenedUntrusted,
  type OpenedUntrustedSync,
} from './safe-open.js';
