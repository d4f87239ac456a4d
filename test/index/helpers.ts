import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { type IndexEvent, type OpenIndexOptions, type SpillIndex, openIndex } from '../../src/index/index.js';

export const REPO = path.resolve(import.meta.dirname, '..', '..');
/** Real agent transcripts (read-only in CI: copy before modifying). */
export const FIXTURES = path.resolve(REPO, '..', 'shared', 'fixtures', 'agent-sessions');
export const CLAUDE_PROJECTS = path.join(FIXTURES, 'claude-code', 'projects');
export const CLI = path.join(REPO, 'src', 'cli', 'main.ts');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

export function tmpDir(prefix = 'spillway-index-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

/** An index on a real SQLite file in a temp folder, closed after the test. Events are collected. */
export function tmpIndex(dbPath = path.join(tmpDir('spillway-db-'), 'index.sqlite'), o: Omit<OpenIndexOptions, 'dbPath' | 'onEvent'> = {}): { index: SpillIndex; events: IndexEvent[]; dbPath: string } {
  const events: IndexEvent[] = [];
  const index = openIndex({ ...o, dbPath, onEvent: (e) => events.push(e) });
  cleanups.push(() => index.close());
  return { index, events, dbPath };
}

/** Copy a fixture tree to a writable temp folder (the shared fixtures are read-only). */
export function copyTree(src: string, dest: string): string {
  fs.cpSync(src, dest, { recursive: true });
  // cpSync keeps the read-only mode of the sources: make the copy writable.
  const walk = (p: string) => {
    const st = fs.statSync(p);
    fs.chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) walk(path.join(p, n));
  };
  walk(dest);
  return dest;
}

export async function waitFor<T>(fn: () => T | undefined | false, timeoutMs: number, what: string): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
