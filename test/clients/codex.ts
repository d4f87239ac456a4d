/**
 * One scripted run of the real Codex binary (`codex exec --json`) against the local Responses API
 * double. CODEX_HOME is a private folder with a config.toml that points `model_provider` at the
 * double (`wire_api = "responses"`), turns off the update check, analytics and feedback, never asks
 * for approval and runs tools without a sandbox (the test machine has no user namespaces to
 * spare, and the tools only touch temp folders).
 */
import fs from 'node:fs';
import path from 'node:path';
import { baseClientEnv, codexBinary, listFiles, parseJsonLines, runClient, tmpDir, type RunResult } from './harness.js';

export interface CodexRunOptions {
  /** The double's origin; Codex posts to `<origin>/v1/responses`. */
  baseUrl: string;
  prompt: string;
  cwd: string;
  home?: string;
  /** Extra TOML appended to config.toml (e.g. `[mcp_servers.fs]` tables). */
  configToml?: string;
  /** Keep the config.toml already in `<home>/.codex` (e.g. one `spillway setup codex` edited). */
  keepConfig?: boolean;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** More `codex exec` flags, before the prompt (e.g. `--dangerously-bypass-hook-trust`). */
  execArgs?: string[];
}

export interface CodexRun extends RunResult {
  home: string;
  codexHome: string;
  events: any[];
  /** `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-….jsonl` files written by this run. */
  rollouts: string[];
  rollout: any[];
}

/** A TOML basic string. */
export function tomlString(s: string): string {
  return JSON.stringify(s);
}

export function codexConfig(baseUrl: string): string {
  return [
    'model = "gpt-5.5"',
    'model_provider = "spillway_double"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[model_providers.spillway_double]',
    'name = "local Responses API double"',
    `base_url = ${tomlString(`${baseUrl}/v1`)}`,
    'wire_api = "responses"',
    'env_key = "SPILLWAY_DOUBLE_KEY"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
}

export function codexEnv(home: string, codexHome: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...baseClientEnv(home),
    CODEX_HOME: codexHome,
    SPILLWAY_DOUBLE_KEY: 'sk-local-double',
    NO_COLOR: '1',
    RUST_LOG: 'error',
    ...extra,
  };
}

export async function runCodex(o: CodexRunOptions): Promise<CodexRun> {
  const home = o.home ?? tmpDir('spillway-codex-home-');
  const codexHome = path.join(home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  if (!o.keepConfig) fs.writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(o.baseUrl) + (o.configToml ? `\n${o.configToml}\n` : ''));
  const before = new Set(listFiles(path.join(codexHome, 'sessions')));
  const args = ['exec', '--json', '--skip-git-repo-check', ...(o.execArgs ?? []), '--cd', o.cwd, o.prompt];
  const r = await runClient({ command: codexBinary(), args, cwd: o.cwd, env: codexEnv(home, codexHome, o.env), home, timeoutMs: o.timeoutMs });
  const rollouts = listFiles(path.join(codexHome, 'sessions'))
    .filter((f) => !before.has(f) && f.endsWith('.jsonl'))
    .map((f) => path.join(codexHome, 'sessions', f));
  const rollout = rollouts.flatMap((f) => parseJsonLines(fs.readFileSync(f, 'utf8')));
  return { ...r, home, codexHome, events: parseJsonLines(r.stdout), rollouts, rollout };
}
