/**
 * One scripted run of the real Gemini CLI (`gemini -p … --yolo --output-format json`) against the
 * local Gemini API double: a private HOME whose `~/.gemini/settings.json` selects API-key auth,
 * turns off auto-update, usage statistics, telemetry and folder trust (an untrusted folder turns
 * --yolo back into prompts, which -p cannot answer), and `GOOGLE_GEMINI_BASE_URL` at the double
 * (the CLI accepts http only for a loopback host).
 *
 * The binary is taken from the pinned clients' install (scripts/install-clients.mjs), or from
 * SPILLWAY_GEMINI_CLI (its bundle/gemini.js).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { GeminiUsage } from './doubles/gemini.js';
import { CLIENTS_NM, baseClientEnv, listFiles, parseJsonLines, runClient, tmpDir, type RunResult } from './harness.js';
import { tokensOf } from './timeline-runs.js';

/**
 * The double's usage counted from the real request: every part of it, and as cached the prefix the
 * main request before sent. `main` collects the context of each main request (one with tools), in order.
 */
export function countedUsage(): { usage: (body: any) => GeminiUsage; main: number[] } {
  const main: number[] = [];
  let prev: string[] = [];
  const usage = (body: any): GeminiUsage => {
    const parts = [JSON.stringify(body?.systemInstruction ?? ''), JSON.stringify(body?.tools ?? []), ...(body?.contents ?? []).map((c: any) => JSON.stringify(c))];
    let common = 0;
    while (common < parts.length && common < prev.length && parts[common] === prev[common]) common++;
    const isMain = Array.isArray(body?.tools) && body.tools.length > 0;
    if (isMain) prev = parts;
    let total = 0;
    let cached = 0;
    parts.forEach((p, i) => {
      total += tokensOf(p);
      if (i < common) cached += tokensOf(p);
    });
    if (isMain) main.push(total);
    return { promptTokenCount: total, cachedContentTokenCount: cached };
  };
  return { usage, main };
}

/** The version the fixture in test/index/fixtures/timeline/gemini was written by. */
export const GEMINI_CLI_VERSION = '0.61.0';

export function geminiBinary(): string | undefined {
  const p = process.env.SPILLWAY_GEMINI_CLI ?? path.join(CLIENTS_NM, '@google', 'gemini-cli', 'bundle', 'gemini.js');
  return fs.existsSync(p) ? p : undefined;
}

export const GEMINI_SETTINGS = {
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
};

export interface GeminiRun extends RunResult {
  home: string;
  /** `~/.gemini/tmp/<project>/chats/session-*.jsonl` */
  chats: string[];
}

export async function runGemini(o: { baseUrl: string; prompt: string; cwd: string; home?: string; timeoutMs?: number }): Promise<GeminiRun> {
  const bin = geminiBinary();
  if (!bin) throw new Error('Gemini CLI not found: install @google/gemini-cli or set SPILLWAY_GEMINI_CLI');
  const home = o.home ?? tmpDir('spillway-gemini-home-');
  fs.mkdirSync(path.join(home, '.gemini'), { recursive: true });
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  fs.writeFileSync(path.join(home, '.gemini', 'settings.json'), JSON.stringify(GEMINI_SETTINGS, null, 2));
  const env = { ...baseClientEnv(home), GEMINI_API_KEY: 'local-double-key', GOOGLE_GEMINI_BASE_URL: o.baseUrl, GEMINI_CLI_NO_RELAUNCH: '1', NO_COLOR: '1' };
  const r = await runClient({ command: process.execPath, args: [bin, '-p', o.prompt, '--yolo', '--output-format', 'json'], cwd: o.cwd, env, home, timeoutMs: o.timeoutMs });
  const chats = listFiles(path.join(home, '.gemini', 'tmp'))
    .filter((f) => /\/chats\/session-[^/]+\.jsonl?$/.test(f))
    .map((f) => path.join(home, '.gemini', 'tmp', f));
  return { ...r, home, chats };
}

export { parseJsonLines };
