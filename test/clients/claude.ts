/**
 * One scripted run of the real Claude Code binary (print mode, stream-json) against the local
 * Anthropic double. The flags and variables are the ones that made runs deterministic here:
 * bypassPermissions with IS_SANDBOX=1 (tests run as root), a private HOME, no telemetry, no
 * nonessential traffic, no auto-update, no error reports; for MCP, tool search off and MCP
 * connected before the first request.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT, baseClientEnv, claudeBinary, listFiles, parseJsonLines, runClient, tmpDir, type RunResult } from './harness.js';

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
    ...baseClientEnv(home),
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

/** A word for a POSIX shell, quoted. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `spillway hook claude-code …` run from this checkout's TypeScript source (tsx), as a hook command line. */
export function sourceHookCommand(args: string[] = []): string {
  const loader = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  return [process.execPath, '--import', loader, '--conditions=source', path.join(ROOT, 'src', 'cli', 'main.ts'), 'hook', 'claude-code', ...args]
    .map(shellQuote)
    .join(' ');
}

/** `spillway mcp … -- <server>` from the source, as an MCP server entry. */
export function sourceSpillwayArgs(args: string[]): string[] {
  const loader = pathToFileURL(path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
  return ['--import', loader, '--conditions=source', path.join(ROOT, 'src', 'cli', 'main.ts'), ...args];
}

/** The transcript's hook attachments (hook_success with its stdout/stderr, hook_non_blocking_error, hook_error_during_execution). */
export function hookAttachments(run: ClaudeRun): any[] {
  return run.transcript.filter((r) => r.type === 'attachment' && typeof r.attachment?.type === 'string' && r.attachment.type.startsWith('hook_')).map((r) => r.attachment);
}

/** The tool_use Claude Code recorded for each tool_use_id, and the tool_result content the transcript kept. */
export function transcriptToolResults(records: any[]): Array<{ id: string; name: string; content: unknown; toolUseResult: unknown }> {
  const names = new Map<string, string>();
  const out: Array<{ id: string; name: string; content: unknown; toolUseResult: unknown }> = [];
  for (const r of records) {
    const content = r.message?.content;
    if (!Array.isArray(content)) continue;
    for (const b of content) {
      if (b?.type === 'tool_use') names.set(b.id, b.name);
      if (b?.type === 'tool_result') out.push({ id: b.tool_use_id, name: names.get(b.tool_use_id) ?? '?', content: b.content, toolUseResult: r.toolUseResult });
    }
  }
  return out;
}
