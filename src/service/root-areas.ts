/**
 * What the registered roots let the service read, kept in the path guard (folders and files) or
 * in S3Reads (`s3://` roots): granted once per root, forgotten with it, and refused for a root
 * that roots-policy.ts no longer allows (one an older version stored, or a hand-edited database
 * holds: listed, never read).
 */
import path from 'node:path';
import { ASSETS_DIR, LINKED_SUFFIX, LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile } from '../pipeline/index.js';
import { isS3Path, sideFilesDirsOf } from '../index/index.js';
import type { RootInfo } from './contract.js';
import type { PathGuard } from './paths.js';
import { hardRootRefusal, rootNeedsConsent, type RootConsents, type RootPolicyContext } from './roots-policy.js';
import type { S3Reads } from './s3-read.js';

export function createRootAreas(guard: PathGuard, s3: S3Reads, policy: RootPolicyContext, warn: (m: string) => void, consents?: RootConsents) {
  const granted = new Set<string>();

  /**
   * A folder root: everything under it. A single file: the file, plus what belongs to it: a
   * spilled payload's sidecar, linked form and assets folder; a Claude Code transcript's persisted
   * tool-results folder.
   */
  const allow = (root: RootInfo): void => {
    if (granted.has(root.path)) return;
    // A bucket prefix: every key under it, read-only (the path guard knows files, not URLs).
    if (isS3Path(root.path)) {
      granted.add(root.path);
      s3.allowRoot(root.path);
      return;
    }
    const refusal = hardRootRefusal(root.path, policy);
    if (refusal) {
      warn(`root ${root.path} is not read: ${refusal}`);
      return;
    }
    // A root another process registered without the user's consent (the start forgets those it finds).
    if (consents && rootNeedsConsent(root, policy) && !consents.has(root.path)) {
      warn(`root ${root.path} is not read: nobody consented to it (File → Open Folder…, a drop, or \`spillway index DIR\`)`);
      return;
    }
    granted.add(root.path);
    guard.allowRoot(root.path);
    if (root.kind !== 'file') return;
    const dir = path.dirname(root.path);
    const c = classifyLongResponseFile(path.basename(root.path));
    if (c && path.basename(dir) === LONG_RESPONSES_DIR) {
      guard.allowFile(path.join(dir, c.stem + META_SUFFIX), 'root sidecar');
      guard.allowFile(path.join(dir, c.stem + LINKED_SUFFIX), 'root linked form');
      guard.allowDir(path.join(dir, ASSETS_DIR), 'root assets');
    } else if (root.path.endsWith('.jsonl')) {
      for (const d of sideFilesDirsOf(root.path)) guard.allowDir(d, 'transcript tool results');
    }
  };

  return {
    allow,
    forget(root: RootInfo): void {
      granted.delete(root.path);
      if (isS3Path(root.path)) s3.forget(root.path);
      else guard.forget(root.path);
    },
    /** Grant every root the index lists (roots `spillway index DIR` added from another process too). */
    sync(roots: RootInfo[]): RootInfo[] {
      for (const r of roots) allow(r);
      return roots;
    },
  };
}
