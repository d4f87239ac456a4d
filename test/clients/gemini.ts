/**
 * One scripted run of the real Gemini CLI (`gemini -p … --yolo --output-format json`) against the
 * local Gemini API double: a private HOME with `~/.gemini/settings.json` (API-key auth, telemetry,
 * usage statistics and auto-update off), the workspace trusted through GEMINI_CLI_TRUST_WORKSPACE,
 * and GOOGLE_GEMINI_BASE_URL pointing at the double.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, runClient, tmpDir, type RunResult } from './harness.js';

export const GEMINI_CLI_VERSION = '0.61.0';
export const GEMINI_BUNDLE = path.join(ROOT, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');

export interface GeminiRunOptions {
  baseUrl: string;
  prompt: string;
  cwd: string;
  home?: string;
  mcpServers?: Record<string, { command: string; args?: string[]; trust?: boolean }>;
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface GeminiRun extends RunResult {
  home: string;
  /** `~/.gemini/tmp/<project>/chats/session-….jsonl` files this run wrote. */
  chats: string[];
}

export async function runGemini(o: GeminiRunOptions): Promise<GeminiRun> {
  const home = o.home ?? tmpDir('spillway-gemini-home-');
  const dir = path.join(home, '.gemini');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'settings.json'),
    JSON.stringify(
      {
        security: { auth: { selectedType: 'gemini-api-key' } },
        telemetry: { enabled: false },
        privacy: { usageStatisticsEnabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        ...(o.mcpServers ? { mcpServers: o.mcpServers } : {}),
      },
      null,
      2,
    ),
  );
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    GEMINI_API_KEY: 'local-double',
    GOOGLE_GEMINI_BASE_URL: o.baseUrl,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
    SPILLWAY_HOME: path.join(home, 'spillway'),
    ...o.env,
  };
  const r = await runClient({ command: process.execPath, args: [GEMINI_BUNDLE, '-p', o.prompt, '--yolo', '--output-format', 'json'], cwd: o.cwd, env, home, timeoutMs: o.timeoutMs });
  const chats: string[] = [];
  const walk = (d: string) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/^session-.*\.jsonl?$/.test(e.name)) chats.push(p);
    }
  };
  walk(path.join(dir, 'tmp'));
  return { ...r, home, chats };
}
