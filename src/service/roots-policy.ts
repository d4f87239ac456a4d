/**
 * Which folders may become roots. A root is read access: everything under it can be listed,
 * read and copied into scratch through the contract. So a root is the user's choice, and only
 * ever a place that holds agent sessions.
 *
 * | who asks                                                      | checked                                  |
 * | ------------------------------------------------------------- | ---------------------------------------- |
 * | the CLI (`--root`, `spillway index`), the config file, the desktop Open Folder dialog | hard limits |
 * | the desktop window (`addRoot` over IPC)                        | hard limits + the user's consent: a folder they dropped on the window or picked in a dialog of the main process |
 * | an HTTP client of `spillway serve` (`addRoot` over HTTP)       | refused: roots come from the CLI/config  |
 * | an `s3://bucket/prefix` root, from anyone but the CLI/config   | refused (read with the user's AWS credentials) |
 *
 * Hard limits, for everyone: never the file-system root, a system folder (or anything in one), the
 * user's home itself or a folder above it, a folder holding the app data, or the app data's own
 * files (its `sessions/` and `scratch/` folders are fine).
 *
 * Why the window needs the user's consent, not a folder's looks: a compromised page can name any
 * path, and "looks like a session tree" is cheap to satisfy. A project that keeps spills the way the
 * README shows (`./.spillway/session-42/long_responses`) looked like one as a whole, so the page could
 * make the project a root and read its `.env`. A drop is proven by the main process
 * (`webUtils.getPathForFile` works only on a File the user dropped or picked; see shell/policy.ts),
 * a dialog is the main process's own; a page can fake neither. Consent to a folder covers that folder
 * and what is under it, never its parent.
 *
 * Consent is recorded, so that it outlives the process: `<app data>/root-consent.json` (0600) holds
 * each folder the user gave (`cli`: `serve --root`, `spillway index`; `dialog`: Open Folder; `drop`:
 * a dropped folder the window then added). The default roots (agents' folders, marked auto) and
 * the app data's sessions/ and scratch/ need none. A root in the index without a record (one a
 * window added under the old rule, when looking like a session tree was enough) is forgotten when
 * the service starts, with a warning saying how to add it back, and is never read if it shows up
 * later (another process's database write). So a page that once widened what it reads does not
 * keep the wider view across a restart. Its files are not touched.
 *
 * Why HTTP may not add roots at all: the token is the whole credential of `serve`, and whoever holds
 * it (a page, any local process that read it) must not be able to widen what it reads. A
 * confirmation the page cannot give would have to come through the terminal, which is the CLI
 * already: `spillway serve --root DIR` or `spillway index DIR` (a running serve picks roots added by
 * `spillway index` up at its next listRoots/reindex).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isInside } from '../pipeline/index.js';
import { canonicalS3Root, isS3Path } from '../index/index.js';
import { ServiceError } from './contract.js';
import { checkPrivate, writePrivateFileSync } from './private-files.js';

/** Who is asking for a root (see the table above). */
export type RootSource = 'trusted' | 'window' | 'http';

/** For the window: whether the user consented to this real path (dropped or picked it, or a folder above it). */
export type RootConsent = (realPath: string) => boolean;

/** Folders (and everything under them) that hold the system, never sessions. Compared after realpath. */
export const SYSTEM_DIRS: readonly string[] = [
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/boot',
  '/run',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/usr',
  '/var/cache',
  '/var/lib',
  '/var/lock',
  '/var/log',
  '/var/run',
  '/var/spool',
  '/System',
  '/Library',
  '/cores',
  '/private/etc',
  '/private/var/db',
  '/private/var/log',
  '/private/var/run',
];

function real(p: string): string {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return path.resolve(p);
  }
}

function windowsSystemDirs(env: NodeJS.ProcessEnv): string[] {
  if (process.platform !== 'win32') return [];
  return [env.SystemRoot ?? 'C:\\Windows', env.ProgramFiles, env['ProgramFiles(x86)'], env.ProgramData].filter((d): d is string => !!d);
}

export interface RootPolicyContext {
  /** App-data folder and the two folders of it that hold sessions. */
  appData: { root: string; sessions: string; scratch: string };
  /** The user's home (default os.homedir()). */
  home?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Why `realPath` (already resolved through symlinks) may not be a root for anyone, or null when it
 * may. Plain words: the message reaches the user.
 */
export function hardRootRefusal(realPath: string, ctx: RootPolicyContext): string | null {
  if (path.parse(realPath).root === realPath) return 'the file-system root cannot be a sessions root';
  for (const d of [...SYSTEM_DIRS, ...windowsSystemDirs(ctx.env ?? {})]) {
    if (isInside(d, realPath) || isInside(real(d), realPath)) return `${realPath} is a system folder, not a sessions folder`;
  }
  const home = real(ctx.home ?? os.homedir());
  if (isInside(realPath, home)) {
    return realPath === home
      ? 'your home folder itself cannot be a root: add the folder that holds the sessions (for example ~/.claude/projects)'
      : `${realPath} holds your home folder: add the folder that holds the sessions instead`;
  }
  const app = real(ctx.appData.root);
  if (isInside(realPath, app)) return `a root may not be or contain Spillway's app-data folder (${ctx.appData.root})`;
  if (isInside(app, realPath) && !isInside(real(ctx.appData.sessions), realPath) && !isInside(real(ctx.appData.scratch), realPath)) {
    return `only the sessions/ and scratch/ folders of the app data can be roots, not ${realPath}`;
  }
  return null;
}

/**
 * Resolve and check a root for `source`; returns its real path (an S3 root's canonical URL) or throws ServiceError
 * (FORBIDDEN_PATH for policy, NOT_FOUND when it does not exist).
 */
export function checkRoot(p: string, source: RootSource, ctx: RootPolicyContext, consent: RootConsent = () => false): string {
  if (source === 'http') {
    throw new ServiceError(
      'FORBIDDEN_PATH',
      'roots cannot be added over HTTP: restart with `spillway serve --root DIR`, or run `spillway index DIR` and reload',
    );
  }
  if (isS3Path(p)) {
    // A bucket is read with the user's AWS credentials: which one is the user's word, on the command line or in the config.
    if (source !== 'trusted') {
      throw new ServiceError('FORBIDDEN_PATH', 's3:// roots come from the command line or the config: `spillway serve --root s3://bucket/prefix`');
    }
    try {
      return canonicalS3Root(p);
    } catch (err) {
      throw new ServiceError('BAD_REQUEST', (err as Error).message);
    }
  }
  let realPath: string;
  try {
    realPath = fs.realpathSync.native(path.resolve(p));
  } catch {
    throw new ServiceError('NOT_FOUND', `root does not exist: ${p}`);
  }
  const refusal = hardRootRefusal(realPath, ctx);
  if (refusal) throw new ServiceError('FORBIDDEN_PATH', refusal);
  if (source === 'window' && !consent(realPath)) {
    throw new ServiceError('FORBIDDEN_PATH', `${realPath} was not picked or dropped by you: use File → Open Folder…, or drop the folder on the window`);
  }
  return realPath;
}

/** How the user gave a root (see the table above). */
export type ConsentHow = 'cli' | 'dialog' | 'drop';

/** The consent record's file name in the app data. */
export const ROOT_CONSENT_FILE = 'root-consent.json';

interface ConsentDoc {
  version: 1;
  roots: Record<string, { how: ConsentHow; at: string }>;
}

/**
 * The folders the user consented to as roots, kept in a file so that the consent of another
 * process (`spillway index DIR`) and of an earlier run counts too. Read on every check: it is a few
 * lines, and another process may have added to it.
 */
export class RootConsents {
  constructor(readonly file: string) {}

  private read(): ConsentDoc {
    // A record another account owns or can write would be its word for what this one reads: refused (private-files.ts).
    checkPrivate(this.file, 'root consent file');
    try {
      const v = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Partial<ConsentDoc>;
      if (v && typeof v.roots === 'object' && v.roots !== null && !Array.isArray(v.roots)) return { version: 1, roots: v.roots };
    } catch {
      /* none yet, or unreadable: no consent recorded (roots are then added again by the user) */
    }
    return { version: 1, roots: {} };
  }

  /** Whether `realPath` is a folder the user gave, or under one. */
  has(realPath: string): boolean {
    return Object.keys(this.read().roots).some((d) => isInside(d, realPath));
  }

  record(realPath: string, how: ConsentHow): void {
    const doc = this.read();
    if (doc.roots[realPath]) return;
    doc.roots[realPath] = { how, at: new Date().toISOString() };
    writePrivateFileSync(this.file, JSON.stringify(doc, null, 2) + '\n');
  }

  /** The user removed the root: its consent goes with it. */
  forget(realPath: string): void {
    const doc = this.read();
    if (!doc.roots[realPath]) return;
    delete doc.roots[realPath];
    writePrivateFileSync(this.file, JSON.stringify(doc, null, 2) + '\n');
  }
}

/** The consent record of this app data. */
export function rootConsents(appDataRoot: string): RootConsents {
  return new RootConsents(path.join(appDataRoot, ROOT_CONSENT_FILE));
}

/**
 * Whether a registered root is read only with a consent record: not a default root (auto), not
 * the app data's sessions/ or scratch/ (or under them), not a bucket (only the CLI/config ever
 * adds one).
 */
export function rootNeedsConsent(root: { path: string; auto?: boolean }, ctx: RootPolicyContext): boolean {
  if (root.auto || isS3Path(root.path)) return false;
  for (const d of [ctx.appData.sessions, ctx.appData.scratch]) if (isInside(d, root.path) || isInside(real(d), root.path)) return false;
  return true;
}
