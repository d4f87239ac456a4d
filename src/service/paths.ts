import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../pipeline/layout.js';
import { ServiceError } from './contract.js';

/**
 * Where the service may read: registered roots, the app-data folder, and files the user
 * dropped. Every path that comes from a request (or from the index, which a hostile payload
 * could have influenced) is checked here before it is opened.
 *
 * Two passes: a lexical one (NUL, control and bidi characters, look-alike separators, `..`),
 * then a realpath one, so a symlink inside a root that points outside it is refused.
 */

/** Longest path accepted from a request (Linux PATH_MAX). */
export const MAX_PATH_CHARS = 4096;

/** C0/C1 controls and DEL: never legitimate in a path a user picks. */
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Bidi controls and invisible format characters: they make `evil‮gpj.exe` look like
 * `evil.jpg` and hide `..` in plain sight (Trojan Source).
 */
const BIDI_RE = /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;
/** Slashes that no normalization turns into `/` but that read as one (division, fraction, box-drawing slashes). */
const CONFUSABLE_SLASHES = new Set(['\u2215', '\u2044', '\u29f8', '\u29f9', '\u2571', '\u2572', '\u27cb', '\u27cd']);

/**
 * Characters that are not separators or dots but become them under NFKC (fullwidth `．／＼`,
 * ․ ‥ …, small full stop), or that read as slashes.
 */
function hasLookalikeSeparators(p: string): boolean {
  for (const ch of p) {
    if (ch === '.' || ch === '/' || ch === '\\' || ch === ':') continue;
    if (CONFUSABLE_SLASHES.has(ch)) return true;
    const n = ch.normalize('NFKC');
    if (n !== ch && /[./\\:]/.test(n)) return true;
  }
  return false;
}

/** Reject request paths that are malformed or deceptive before touching the file system. */
export function checkPathText(p: unknown, what = 'path'): string {
  if (typeof p !== 'string' || p.length === 0) throw new ServiceError('BAD_REQUEST', `${what} must be a non-empty string`);
  if (p.length > MAX_PATH_CHARS) throw new ServiceError('BAD_REQUEST', `${what} is longer than ${MAX_PATH_CHARS} characters`);
  if (p.includes('\0')) throw new ServiceError('FORBIDDEN_PATH', `${what} contains a NUL byte`);
  if (CONTROL_RE.test(p)) throw new ServiceError('FORBIDDEN_PATH', `${what} contains control characters`);
  if (BIDI_RE.test(p)) throw new ServiceError('FORBIDDEN_PATH', `${what} contains bidirectional or invisible format characters`);
  if (hasLookalikeSeparators(p)) {
    throw new ServiceError('FORBIDDEN_PATH', `${what} contains characters that look like dots or slashes`);
  }
  return p;
}

function realpathOrNull(p: string): string | null {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return null;
  }
}

/**
 * realpath of the nearest existing ancestor joined with the rest: lets us confine a path
 * that does not exist yet (a template about to be written) without trusting a symlinked parent.
 */
export function realpathAllowMissing(p: string): string {
  const abs = path.resolve(p);
  const real = realpathOrNull(abs);
  if (real) return real;
  const parent = path.dirname(abs);
  if (parent === abs) return abs;
  return path.join(realpathAllowMissing(parent), path.basename(abs));
}

export interface AllowedArea {
  /** As given (resolved). */
  path: string;
  /** realpath, computed when the area is added (and refreshed if it did not exist then). */
  real: string;
  /** A single file (a dropped file or a file root) rather than a folder. */
  file: boolean;
  label: string;
}

export class PathGuard {
  private readonly areas = new Map<string, AllowedArea>();

  /** Allow everything under `dir` (a root, the app-data folder). */
  allowDir(dir: string, label: string): void {
    const p = path.resolve(dir);
    this.areas.set(`dir:${p}`, { path: p, real: realpathAllowMissing(p), file: false, label });
  }

  /** Allow exactly one file (the user dropped or opened it). */
  allowFile(file: string, label: string): void {
    const p = path.resolve(file);
    this.areas.set(`file:${p}`, { path: p, real: realpathAllowMissing(p), file: true, label });
  }

  /** Allow a root, whether it is a folder or a single file. */
  allowRoot(rootPath: string): void {
    let isFile = false;
    try {
      isFile = fs.statSync(rootPath).isFile();
    } catch {
      /* a root that is gone is still a folder for confinement purposes */
    }
    if (isFile) this.allowFile(rootPath, 'root');
    else this.allowDir(rootPath, 'root');
  }

  forget(p: string): void {
    const r = path.resolve(p);
    this.areas.delete(`dir:${r}`);
    this.areas.delete(`file:${r}`);
  }

  /**
   * Whether `real` is a single file the user allowed (dropped, picked, a file root) rather than a
   * file found in a folder: only such a file may have other hard links (a folder's confinement
   * means nothing if a file in it is also a name of one outside).
   */
  isPickedFile(real: string): boolean {
    return this.list().some((a) => a.file && (a.real === real || a.path === real));
  }

  list(): AllowedArea[] {
    return [...this.areas.values()];
  }

  /**
   * The real path of `p` if it lies inside an allowed area, both lexically and after
   * following symlinks; otherwise FORBIDDEN_PATH. With `mustExist` (the default) a missing
   * file is NOT_FOUND.
   */
  resolve(p: string, opts: { mustExist?: boolean; what?: string } = {}): string {
    const what = opts.what ?? 'path';
    checkPathText(p, what);
    if (!path.isAbsolute(p)) throw new ServiceError('FORBIDDEN_PATH', `${what} must be absolute: ${JSON.stringify(p)}`);
    const abs = path.resolve(p);
    const lexical = this.list().some((a) => (a.file ? abs === a.path : isInside(a.path, abs)) || within(a, abs));
    if (!lexical) throw new ServiceError('FORBIDDEN_PATH', `${what} is outside every registered root: ${JSON.stringify(p)}`);
    const mustExist = opts.mustExist ?? true;
    const real = mustExist ? realpathOrNull(abs) : realpathAllowMissing(abs);
    if (real === null) throw new ServiceError('NOT_FOUND', `no such file: ${JSON.stringify(p)}`);
    if (!this.list().some((a) => within(a, real))) {
      throw new ServiceError('FORBIDDEN_PATH', `${what} leads outside every registered root (symlink?): ${JSON.stringify(p)}`);
    }
    return real;
  }

  /** Resolve `rel` against `base` (which must itself be allowed), refusing escapes. */
  resolveUnder(base: string, rel: string, opts: { mustExist?: boolean; what?: string } = {}): string {
    checkPathText(rel, opts.what ?? 'path');
    if (path.isAbsolute(rel)) throw new ServiceError('FORBIDDEN_PATH', `expected a relative path, got ${JSON.stringify(rel)}`);
    const baseReal = this.resolve(base, { mustExist: false, what: 'base' });
    const abs = path.resolve(baseReal, rel);
    if (!isInside(baseReal, abs)) throw new ServiceError('FORBIDDEN_PATH', `path escapes its folder: ${JSON.stringify(rel)}`);
    const real = this.resolve(abs, opts);
    if (!isInside(baseReal, real)) throw new ServiceError('FORBIDDEN_PATH', `path escapes its folder (symlink?): ${JSON.stringify(rel)}`);
    return real;
  }
}

function within(a: AllowedArea, real: string): boolean {
  if (a.file) return real === a.real || real === a.path;
  // A root registered before it existed: refresh its realpath lazily.
  if (!isInside(a.real, real) && fs.existsSync(a.path)) {
    const fresh = realpathOrNull(a.path);
    if (fresh) a.real = fresh;
  }
  return isInside(a.real, real);
}
