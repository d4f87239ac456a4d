/**
 * One scripted run of the real Claude Code binary (print mode, stream-json) against the local
 * Anthropic double. The flags and variables are the ones that made runs deterministic here:
 * bypassPermissions with IS_SANDBOX=1 (tests run as root), a private HOME, no telemetry, no
 * nonessential traffic, no auto-update, no error reports; for MCP, tool search off and MCP
 * connected before the first request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { claudeBinary, listFiles, parseJsonLines, runClient, tmpDir, type RunResult } from './harness.js';

export interface ClaudeRunOptions {
  /** The model double's origin (ANTHROPIC_BASE_URL). */
  baseUrl: string;
  prompt: string;
  cwd: string;
  /** A private HOME; a new temp folder when absent. */
  home?: string;
  /** Passed as `--settings <file>` (e.g. the hooks). */
  settings?: unknown;
  /** `mcpServers` for `--mcp-config` (with `--strict-mcp-config`). */
  mcpServers?: Record<string, { command: string; args?: string[]; env?: Record<string, string> }>;
  addDirs?: string[];
  /** More CLI arguments (e.g. `--tools` to opt into Grep and Glob, which 2.1.328 leaves out by default). */
  args?: string[];
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface ClaudeRun extends RunResult {
  home: string;
  events: any[];
  sessionId?: string;
  /** `~/.claude/projects/<project>/<session>.jsonl` */
  transcriptPath?: string;
  /** Parsed transcript records. */
  transcript: any[];
}

export function claudeEnv(home: string, baseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    USER: process.env.USER ?? 'root',
    LANG: 'C.UTF-8',
    TMPDIR: path.join(home, 'tmp'),
    IS_SANDBOX: '1',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-local-double',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    // Every tool declared up front (not behind ToolSearch), and MCP servers connected before the first request.
    ENABLE_TOOL_SEARCH: 'false',
    MCP_CONNECTION_NONBLOCKING: 'false',
    // The proxy under test writes its spills into the run's own app-data folder.
    SPILLWAY_HOME: path.join(home, 'spillway'),
    ...extra,
  };
}

export async function runClaudeCode(o: ClaudeRunOptions): Promise<ClaudeRun> {
  const home = o.home ?? tmpDir('spillway-cc-home-');
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  const args = ['-p', o.prompt, '--output-format', 'stream-json', '--verbose', '--permission-mode', 'bypassPermissions'];
  if (o.settings !== undefined) {
    const f = path.join(home, 'run-settings.json');
    fs.writeFileSync(f, JSON.stringify(o.settings, null, 2));
    args.push('--settings', f);
  }
  if (o.mcpServers) {
    const f = path.join(home, 'run-mcp.json');
    fs.writeFileSync(f, JSON.stringify({ mcpServers: o.mcpServers }, null, 2));
    args.push('--mcp-config', f, '--strict-mcp-config');
  }
  for (const d of o.addDirs ?? []) args.push('--add-dir', d);
  args.push(...(o.args ?? []));
  const r = await runClient({ command: claudeBinary(), args, cwd: o.cwd, env: claudeEnv(home, o.baseUrl, o.env), home, timeoutMs: o.timeoutMs });
  const events = parseJsonLines(r.stdout);
  const sessionId = events.find((e) => e.type === 'system' && e.subtype === 'init')?.session_id as string | undefined;
  const projects = path.join(home, '.claude', 'projects');
  const rel = listFiles(projects).find((f) => sessionId && path.basename(f) === `${sessionId}.jsonl`);
  const transcriptPath = rel ? path.join(projects, rel) : undefined;
  const transcript = transcriptPath ? parseJsonLines(fs.readFileSync(transcriptPath, 'utf8')) : [];
  return { ...r, home, events, sessionId, transcriptPath, transcript };
}

/** Transcript text that reports a hook answer Claude Code threw away. */
export function shapeWarnings(run: ClaudeRun): string[] {
  const out: string[] = [];
  const all = [fs.existsSync(run.transcriptPath ?? '') ? fs.readFileSync(run.transcriptPath!, 'utf8') : '', run.stdout, run.stderr].join('\n');
  for (const m of all.matchAll(/[^"\n]{0,200}does not match[^"\n]{0,300}/g)) out.push(m[0]);
  return out;
}
