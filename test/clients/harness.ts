/**
 * Running the real client binaries (Claude Code, Codex), installed by scripts/install-clients.mjs
 * (which `npm test` runs first) at the versions test/clients/install pins, scripted against the
 * local model doubles: a temporary HOME (and CODEX_HOME), telemetry, auto-update and error reports
 * off, a hard timeout, and every process the run left behind ended by PID.
 *
 * Claude Code starts hooks and MCP servers in process groups of their own, so killing the client's
 * group is not enough: whatever still carries the run's private HOME in its environment is one of
 * ours, and is ended by its PID.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** Where scripts/install-clients.mjs put the clients (not devDependencies: ~900 MB that `npm install` need not carry). */
export const CLIENTS_NM = path.join(process.env.SPILLWAY_CLIENTS_DIR ? path.resolve(process.env.SPILLWAY_CLIENTS_DIR) : path.join(ROOT, '.cache', 'clients'), 'node_modules');
const NM = CLIENTS_NM;

/** Versions the end-to-end tests pin (test/clients/install/package.json); a test checks the binaries report them. */
export const CLAUDE_CODE_VERSION = '2.1.328';
export const CODEX_VERSION = '0.171.0';

/** A client run longer than this is killed (a scripted run takes a few seconds). */
export const CLIENT_RUN_TIMEOUT_MS = 90_000;

function firstExisting(paths: string[]): string {
  for (const p of paths) if (fs.existsSync(p)) return p;
  throw new Error(`client binary not found; looked at ${paths.join(', ')} (run node scripts/install-clients.mjs, which npm test runs first)`);
}

/** The native Claude Code binary (the platform package; bin/claude.exe is the same file once its postinstall ran). */
export function claudeBinary(): string {
  return firstExisting([
    path.join(NM, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`, process.platform === 'win32' ? 'claude.exe' : 'claude'),
    path.join(NM, '@anthropic-ai', 'claude-code', 'bin', 'claude.exe'),
  ]);
}

/** The native Codex binary, run directly rather than through the node launcher, so its PID is the client's. */
export function codexBinary(): string {
  const triple = process.arch === 'arm64' ? 'aarch64-unknown-linux-musl' : 'x86_64-unknown-linux-musl';
  return firstExisting([
    path.join(NM, '@openai', `codex-${process.platform}-${process.arch}`, 'vendor', triple, 'bin', 'codex'),
    path.join(NM, '@openai', 'codex', 'bin', 'codex.js'),
  ]);
}

const made: string[] = [];
// Each run leaves a HOME of a few MB; SPILLWAY_KEEP_CLIENT_RUNS=1 keeps them to look at.
if (process.env.VITEST) {
  afterAll(() => {
    if (process.env.SPILLWAY_KEEP_CLIENT_RUNS) return;
    for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });
}

/** What every client run starts from: a temporary HOME, plain locale, and Spillway's app data inside it. */
export function baseClientEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    USER: process.env.USER ?? 'root',
    LANG: 'C.UTF-8',
    TMPDIR: path.join(home, 'tmp'),
    // The proxy under test writes its spills into the run's own app-data folder.
    SPILLWAY_HOME: path.join(home, 'spillway'),
  };
}

export function tmpDir(prefix: string): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(d);
  return d;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

/** PIDs of live processes whose environment carries `HOME=<home>` (a run's private HOME). */
function pidsWithHome(home: string): number[] {
  const entry = Buffer.from(`HOME=${home}\0`);
  const inner = Buffer.from(`\0HOME=${home}\0`);
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const env = fs.readFileSync(`/proc/${name}/environ`);
      if (env.subarray(0, entry.length).equals(entry) || env.includes(inner)) out.push(Number(name));
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out;
}

/** End every process left from a run (by PID, never by name). */
export function reapRun(home: string): number {
  if (process.platform !== 'linux') return 0;
  const pids = pidsWithHome(home);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  return pids.length;
}

export interface SpawnOptions {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The run's private HOME: whatever still has it when the client exits is ended. */
  home: string;
  timeoutMs?: number;
  stdin?: string;
}

export async function runClient(o: SpawnOptions): Promise<RunResult> {
  const t0 = Date.now();
  const child = spawn(o.command, o.args, { cwd: o.cwd, env: o.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdin!.on('error', () => {});
  child.stdin!.end(o.stdin ?? '');
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  }, o.timeoutMs ?? CLIENT_RUN_TIMEOUT_MS);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => {
    child.on('error', (err) => {
      stderr += String(err);
      resolve([null, null]);
    });
    child.on('close', (c, s) => resolve([c, s]));
  });
  clearTimeout(timer);
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    /* the group is gone */
  }
  reapRun(o.home);
  return { code, signal, stdout, stderr, ms: Date.now() - t0, timedOut };
}

/** Every file under `dir` (relative paths), for copying transcripts out. */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

export function parseJsonLines(text: string): any[] {
  const out: any[] = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t) continue;
    try {
      out.push(JSON.parse(t));
    } catch {
      /* a stray non-JSON line */
    }
  }
  return out;
}

/**
 * With SPILLWAY_EXPORT_TRANSCRIPTS=<dir>, copy a run's transcripts (`~/.claude/projects`,
 * `~/.codex/sessions`) to `<dir>/<client>/<scenario>/` for the importer's fixtures.
 */
export function exportTranscripts(home: string, client: 'claude-code' | 'codex', scenario: string): void {
  const dest = process.env.SPILLWAY_EXPORT_TRANSCRIPTS;
  if (!dest) return;
  const from = client === 'claude-code' ? path.join(home, '.claude', 'projects') : path.join(home, '.codex', 'sessions');
  if (!fs.existsSync(from)) return;
  const to = path.join(dest, client, scenario);
  fs.rmSync(to, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true });
  // Spillway's own session folders from the same run (the spills the transcript's messages point at).
  const spills = path.join(home, 'spillway', 'sessions');
  if (fs.existsSync(spills)) fs.cpSync(spills, path.join(dest, client, `${scenario}.spillway-sessions`), { recursive: true });
}
