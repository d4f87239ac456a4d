/**
 * One scripted run of the real OpenCode binary (`opencode run --format json`) against the local
 * Chat Completions double. Everything OpenCode reads or writes is inside a private HOME (XDG_CONFIG,
 * DATA, CACHE and STATE under it). Offline by measurement (issue 31): the models.dev fetch is turned
 * off (OPENCODE_DISABLE_MODELS_FETCH), and npm is told it is offline, because OpenCode npm-installs
 * `@opencode-ai/plugin` into each config folder and, with a plugin configured, waits ~70 s for that
 * install when the registry is unreachable; offline, it gives up at once. Auto-update and sharing are
 * off in the project's opencode.json, which points the `local` provider at the double.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import type { ChatDouble } from './doubles/openai-chat.js';
import { baseClientEnv, CLIENTS_NM, parseJsonLines, runClient, tmpDir, type RunResult } from './harness.js';

export const OPENCODE_VERSION = '1.18.33';

export function opencodeBinary(): string {
  const native = path.join(CLIENTS_NM, `opencode-${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`, 'bin', process.platform === 'win32' ? 'opencode.exe' : 'opencode');
  if (fs.existsSync(native)) return native;
  const launcher = path.join(CLIENTS_NM, 'opencode-ai', 'bin', 'opencode.exe');
  if (fs.existsSync(launcher)) return launcher;
  throw new Error(`OpenCode not found at ${native} (run node scripts/install-clients.mjs, which npm test runs first)`);
}

export interface OpenCodeRunOptions {
  baseUrl: string;
  prompt: string;
  cwd: string;
  home?: string;
  /** Merged into the project's opencode.json. */
  config?: Record<string, unknown>;
  /** Run with the project's opencode.json as it is (a test that ran `spillway setup` on it). */
  keepConfig?: boolean;
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface OpenCodeRun extends RunResult {
  home: string;
  /** `$XDG_DATA_HOME/opencode`: opencode.db, tool-output/. */
  dataDir: string;
  configDir: string;
  events: any[];
}

export function opencodeDirs(home: string) {
  return {
    config: path.join(home, '.config'),
    data: path.join(home, '.local', 'share'),
    cache: path.join(home, '.cache'),
    state: path.join(home, '.local', 'state'),
  };
}

export function opencodeProjectConfig(baseUrl: string): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      local: {
        npm: '@ai-sdk/openai-compatible',
        name: 'local double',
        options: { baseURL: `${baseUrl}/v1`, apiKey: 'dummy' },
        models: { m: { name: 'm', limit: { context: 200_000, output: 8192 } } },
      },
    },
    model: 'local/m',
    small_model: 'local/m',
    autoupdate: false,
    share: 'disabled',
    permission: { edit: 'allow', bash: 'allow', webfetch: 'allow', external_directory: 'allow' },
  };
}

export function opencodeEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const d = opencodeDirs(home);
  return {
    ...baseClientEnv(home),
    XDG_CONFIG_HOME: d.config,
    XDG_DATA_HOME: d.data,
    XDG_CACHE_HOME: d.cache,
    XDG_STATE_HOME: d.state,
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    npm_config_offline: 'true',
    NO_COLOR: '1',
    ...extra,
  };
}

export async function runOpenCode(o: OpenCodeRunOptions): Promise<OpenCodeRun> {
  const home = o.home ?? tmpDir('spillway-opencode-home-');
  const d = opencodeDirs(home);
  for (const x of [...Object.values(d), path.join(home, 'tmp')]) fs.mkdirSync(x, { recursive: true });
  const cfgFile = path.join(o.cwd, 'opencode.json');
  if (!o.keepConfig) {
    let existing: Record<string, unknown> = {};
    if (fs.existsSync(cfgFile)) existing = JSON.parse(fs.readFileSync(cfgFile, 'utf8'));
    fs.writeFileSync(cfgFile, JSON.stringify({ ...existing, ...opencodeProjectConfig(o.baseUrl), ...(o.config ?? {}) }, null, 2));
  }
  const r = await runClient({
    command: opencodeBinary(),
    args: ['run', '--format', 'json', o.prompt],
    cwd: o.cwd,
    env: opencodeEnv(home, o.env),
    home,
    timeoutMs: o.timeoutMs,
  });
  return { ...r, home, dataDir: path.join(d.data, 'opencode'), configDir: path.join(d.config, 'opencode'), events: parseJsonLines(r.stdout) };
}

/** The text OpenCode sent the model as the result of call `id` (its `role:"tool"` message); fails the test, with OpenCode's stderr, when there is none. */
export function sentToModel(d: ChatDouble, run: RunResult, id: string): string {
  const m = d.toolMessages().find((t) => t.message.tool_call_id === id)?.message;
  expect(m, `no tool message for ${id}; stderr: ${run.stderr.slice(-2000)}`).toBeDefined();
  return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
}

/**
 * What OpenCode kept of call `callId`'s whole output: the `tool-output/` file its stored tool part
 * names (`state.metadata.outputPath`), which is what Spillway reads. This, not the file the command
 * printed, is the oracle: OpenCode 1.18.33 stops reading a command's output when its exit code
 * arrives, so for a large output its own file and the text it shows may both end early (measured
 * here with no plugin at all: 240,704 or 262,144 bytes kept of a 401,818-byte `cat`).
 */
export function openCodeKept(dataDir: string, callId: string): { path: string; bytes: Buffer } {
  const db = new Database(path.join(dataDir, 'opencode.db'), { readonly: true, fileMustExist: true });
  try {
    const parts = db.prepare("SELECT data FROM part WHERE json_extract(data, '$.type') = 'tool'").all() as Array<{ data: string }>;
    const p = parts.map((x) => JSON.parse(x.data) as { callID?: string; state?: { metadata?: { outputPath?: unknown } } }).find((x) => x.callID === callId);
    const file = p?.state?.metadata?.outputPath;
    expect(typeof file, `no outputPath in OpenCode's stored part for ${callId}`).toBe('string');
    return { path: file as string, bytes: fs.readFileSync(file as string) };
  } finally {
    db.close();
  }
}

/** Whether `kept` is all of `whole`, and else that it is a prefix of it (said on the console: a loss of OpenCode's, not ours). */
export function checkKeptPrefix(kept: Buffer, whole: Buffer, what: string): void {
  if (kept.length !== whole.length) console.log(`${what}: OpenCode itself kept only ${kept.length} of ${whole.length} bytes (its reader stopped at the exit code)`);
  expect(whole.subarray(0, kept.length).equals(kept), `what OpenCode kept of ${what} is a prefix of it`).toBe(true);
}
