/**
 * Realistic sessions written by the real binaries, with Spillway installed as a user installs it:
 *
 * - Claude Code 2.1.328 after `spillway setup claude-code --project <cwd> --mcp fs -- <server-filesystem>`
 *   (the hook, bin/spillway.js on the built dist with its fast path, and the server behind `spillway mcp`);
 * - Codex 0.171.0 after `spillway setup codex --mcp fs -- <server-filesystem>` (the proxy; Codex has no hook).
 *
 * Each session mixes what a real one does: a large text read, a big JSON through the shell, base64 of
 * a PNG through the shell, raw bytes of an ELF through the shell, an image read, an MCP read through
 * the proxy, a grep over a tree, small commands, and read-backs of the spills (Read with offset/limit
 * and grep in the shell; spillway_read and spillway_grep through the proxy). The doubles report usage
 * counted from each request (Anthropic's tokenizer, images by pixels).
 *
 * `npx tsx test/clients/realistic.ts` records both sessions again into test/clients/fixtures/realistic/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startAnthropicDouble, type AnthropicDouble, type AnthropicStep } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble, type ResponsesStep } from './doubles/openai-responses.js';
import { imageDims } from './doubles/images.js';
import { runClaudeCode, type ClaudeRun } from './claude.js';
import { codexConfig, runCodex, type CodexRun } from './codex.js';
import { listFiles, ROOT, tmpDir } from './harness.js';
import { anthropicUsage, FILESYSTEM, newUsageLog, partTokens, type UsageLog } from './timeline-runs.js';
import { renamePaths, writeFixture } from './timeline-fixture.js';
import { bigJson, makePngOf, reportLines, sourceTree } from './realistic-inputs.js';

const BIN = path.join(ROOT, 'bin', 'spillway.js');
export const REALISTIC_FIXTURES = path.join(ROOT, 'test', 'clients', 'fixtures', 'realistic');
const RUN_MS = 300_000;

/** Sizes: each over both the client's own threshold and the guard's default limit. */
export const SIZES = {
  /** Read of a text file (Claude Code Read: 25,000 tokens; the guard: a few thousand). */
  reportBytes: 90_000,
  /** `cat` of a lockfile-like JSON (Bash persists over 30,000 chars; Codex cuts at 40,000 bytes). */
  jsonBytes: 400_000,
  /** read_text_file through the proxy. */
  mcpBytes: 150_000,
} as const;
export const IMAGE = { width: 3013, height: 1561 } as const;
/** What the read-backs look for. */
export const NEEDLES = { json: '"node_modules/pkg-777"', mcp: 'line 1234:', tree: 'TODO' } as const;

/** The binary the shell step dumps 3,000 raw bytes of. */
export const ELF = fs.existsSync('/usr/bin/ls') ? '/usr/bin/ls' : '/bin/ls';

export interface Workspace {
  home: string;
  cwd: string;
  data: string;
}

function workspace(prefix: string): Workspace {
  const home = tmpDir(`${prefix}-home-`);
  const cwd = tmpDir(`${prefix}-cwd-`);
  const data = path.join(cwd, 'data');
  fs.mkdirSync(data);
  fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
  fs.writeFileSync(path.join(cwd, 'report.txt'), reportLines(Math.ceil(SIZES.reportBytes / 70)).join('\n').slice(0, SIZES.reportBytes));
  fs.writeFileSync(path.join(cwd, 'package-lock.json'), bigJson(SIZES.jsonBytes));
  fs.writeFileSync(path.join(cwd, 'logo.png'), makePngOf(640, 360));
  fs.writeFileSync(path.join(cwd, 'photo.png'), makePngOf(IMAGE.width, IMAGE.height));
  sourceTree(path.join(cwd, 'src'), 30, 100, NEEDLES.tree);
  let big = '';
  for (let i = 0; big.length < SIZES.mcpBytes; i++) big += `line ${i}: sensor ${i % 31} reads ${(i * 1.7).toFixed(1)} units at station ${i % 11}\n`;
  fs.writeFileSync(path.join(data, 'big.txt'), big);
  return { home, cwd, data };
}

function setup(args: string[], env: NodeJS.ProcessEnv): string {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'lib', 'cli', 'main.js'))) throw new Error('run npm run build:lib first: setup installs bin/spillway.js on the built dist');
  return execFileSync(process.execPath, [BIN, 'setup', ...args], { env: { PATH: '/usr/bin:/bin', ...env }, encoding: 'utf8', timeout: 60_000 });
}

/** The absolute payload path a spill message names (in plain text or inside JSON text). */
export function spillPathIn(text: string): string | undefined {
  return /Absolute path: ([^\s"\\]+)/.exec(text)?.[1];
}

/** Text of an Anthropic tool_result block, images as `<image>`. */
export function blockText(block: any): string {
  if (!block) return '';
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return block.content.map((b: any) => (b.type === 'text' ? b.text : `<${b.type}>`)).join('\n');
  return '';
}

function anthropicResultIn(body: any, id: string): any {
  for (const m of body?.messages ?? []) if (Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'tool_result' && b.tool_use_id === id) return b;
  return undefined;
}

/** Tool-use ids of the Claude Code session, in order. */
export const CC = {
  read: 'toolu_01rlread',
  json: 'toolu_01rljson',
  base64: 'toolu_01rlbase64',
  elf: 'toolu_01rlelf',
  image: 'toolu_01rlimage',
  mcp: 'toolu_01rlmcp',
  grep: 'toolu_01rlgrep',
  echo: 'toolu_01rlecho',
  ls: 'toolu_01rlls',
  readBack: 'toolu_01rlreadback',
  grepBack: 'toolu_01rlgrepback',
  spillwayRead: 'toolu_01rlspillread',
  spillwayGrep: 'toolu_01rlspillgrep',
} as const;

export interface ClaudeRealistic {
  ws: Workspace;
  run: ClaudeRun;
  double: AnthropicDouble;
  usage: UsageLog;
}

export async function runClaudeRealistic(): Promise<ClaudeRealistic> {
  const ws = workspace('spillway-rl-cc');
  setup(['claude-code', '--project', ws.cwd, '--mcp', 'fs', '--', process.execPath, FILESYSTEM, ws.data], { HOME: ws.home, SPILLWAY_HOME: path.join(ws.home, 'spillway') });
  const use = (id: string, name: string, input: Record<string, unknown>): AnthropicStep => ({ toolUses: [{ id, name, input }] });
  /** A step that reads the spill an earlier result named (the path from the message the model got). */
  const back = (from: string, make: (spill: string) => AnthropicStep) => (body: any) => make(spillPathIn(blockText(anthropicResultIn(body, from))) ?? 'no-spill-path-in-the-message');
  const steps: Array<AnthropicStep | ((b: any) => AnthropicStep)> = [
    use(CC.read, 'Read', { file_path: path.join(ws.cwd, 'report.txt') }),
    use(CC.json, 'Bash', { command: 'cat package-lock.json', description: 'Show the lockfile' }),
    use(CC.base64, 'Bash', { command: 'base64 logo.png', description: 'Encode the logo' }),
    use(CC.elf, 'Bash', { command: `head -c 3000 ${ELF}`, description: 'First bytes of ls' }),
    use(CC.image, 'Read', { file_path: path.join(ws.cwd, 'photo.png') }),
    use(CC.mcp, 'mcp__fs__read_text_file', { path: path.join(ws.data, 'big.txt') }),
    use(CC.grep, 'Grep', { pattern: NEEDLES.tree, path: path.join(ws.cwd, 'src'), output_mode: 'content', head_limit: 0 }),
    use(CC.echo, 'Bash', { command: 'echo hi', description: 'Say hi' }),
    use(CC.ls, 'Bash', { command: 'ls', description: 'List files' }),
    back(CC.read, (p) => use(CC.readBack, 'Read', { file_path: p, offset: 100, limit: 20 })),
    back(CC.json, (p) => use(CC.grepBack, 'Bash', { command: `grep -n '${NEEDLES.json}' ${p}`, description: 'Find pkg-777 in the saved lockfile' })),
    back(CC.mcp, (p) => use(CC.spillwayRead, 'mcp__fs__spillway_read', { path: p, startLine: 1230, endLine: 1240 })),
    back(CC.mcp, (p) => use(CC.spillwayGrep, 'mcp__fs__spillway_grep', { path: p, pattern: NEEDLES.mcp })),
    { text: 'done' },
  ];
  const usage = newUsageLog();
  const double = await startAnthropicDouble({ steps, usage: anthropicUsage(0, usage) });
  // No --settings and no --mcp-config: only what setup wrote into the project. Grep is named because 2.1.328 leaves it out.
  const run = await runClaudeCode({ baseUrl: double.origin, prompt: 'look around the project', cwd: ws.cwd, home: ws.home, addDirs: [ws.data], args: ['--allowedTools', 'Grep'], timeoutMs: RUN_MS });
  return { ws, run, double, usage };
}

/** Call ids of the Codex session, in order. */
export const CX = {
  read: 'call_rlread',
  json: 'call_rljson',
  base64: 'call_rlbase64',
  elf: 'call_rlelf',
  image: 'call_rlimage',
  grep: 'call_rlgrep',
  echo: 'call_rlecho',
  ls: 'call_rlls',
  mcp: 'call_rlmcp',
  spillwayRead: 'call_rlspillread',
  spillwayGrep: 'call_rlspillgrep',
  grepBack: 'call_rlgrepback',
  readBack: 'call_rlreadback',
} as const;

export interface CodexRealistic {
  ws: Workspace;
  run: CodexRun;
  double: ResponsesDouble;
  /** Input tokens the double reported, per main request. */
  main: number[];
}

export async function runCodexRealistic(): Promise<CodexRealistic> {
  const ws = workspace('spillway-rl-cx');
  const codexHome = path.join(ws.home, '.codex');
  fs.mkdirSync(codexHome, { recursive: true });
  const exec = (callId: string, cmd: string): ResponsesStep => ({ call: { name: 'exec_command', arguments: { cmd }, callId } });
  const mcp = (callId: string, name: string, args: Record<string, unknown>): ResponsesStep => ({ call: { name, namespace: 'mcp__fs', arguments: args, callId } });
  const outputOf = (body: any, id: string): string => {
    const o = (body?.input ?? []).find((i: any) => i?.type === 'function_call_output' && i.call_id === id)?.output;
    return typeof o === 'string' ? o : JSON.stringify(o ?? '');
  };
  const back = (make: (spill: string) => ResponsesStep) => (body: any) => make(spillPathIn(outputOf(body, CX.mcp)) ?? 'no-spill-path-in-the-message');
  // The shell steps come first: Codex connects MCP servers in the background (setup does not make them required).
  const steps: Array<ResponsesStep | ((b: any) => ResponsesStep)> = [
    exec(CX.read, 'cat report.txt'),
    exec(CX.json, 'cat package-lock.json'),
    exec(CX.base64, 'base64 logo.png'),
    exec(CX.elf, `head -c 3000 ${ELF}`),
    { call: { name: 'view_image', arguments: { path: path.join(ws.cwd, 'photo.png') }, callId: CX.image } },
    exec(CX.grep, `grep -rn ${NEEDLES.tree} src`),
    exec(CX.echo, 'echo hi'),
    exec(CX.ls, 'ls'),
    mcp(CX.mcp, 'read_text_file', { path: path.join(ws.data, 'big.txt') }),
    back((p) => mcp(CX.spillwayRead, 'spillway_read', { path: p, startLine: 1230, endLine: 1240 })),
    back((p) => mcp(CX.spillwayGrep, 'spillway_grep', { path: p, pattern: NEEDLES.mcp })),
    // The spill is the MCP result as JSON on one line: -o prints the match, not the whole line (which Codex would cut).
    back((p) => exec(CX.grepBack, `grep -o '${NEEDLES.mcp} [^\\\\]*' ${p}`)),
    back((p) => exec(CX.readBack, `sed -n '1,5p' ${p}`)),
    { text: 'done' },
  ];
  const main: number[] = [];
  let prev: string[] = [];
  const double = await startResponsesDouble({
    steps,
    usage: (body) => {
      const parts = [JSON.stringify(body?.instructions ?? ''), JSON.stringify(body?.tools ?? []), ...(body?.input ?? []).map((i: any) => JSON.stringify(i))];
      let common = 0;
      while (common < parts.length && common < prev.length && parts[common] === prev[common]) common++;
      prev = parts;
      let total = 0;
      let cached = 0;
      parts.forEach((p, i) => {
        const t = partTokens('openai', p);
        total += t;
        if (i < common) cached += t;
      });
      if (Array.isArray(body?.tools) && body.tools.length) main.push(total);
      return { input_tokens: total, cached_tokens: cached };
    },
  });
  fs.writeFileSync(path.join(codexHome, 'config.toml'), codexConfig(double.origin));
  setup(['codex', '--mcp', 'fs', '--', process.execPath, FILESYSTEM, ws.data], { HOME: ws.home, CODEX_HOME: codexHome, SPILLWAY_HOME: path.join(ws.home, 'spillway') });
  const run = await runCodex({ baseUrl: double.origin, prompt: 'look around the project', cwd: ws.cwd, home: ws.home, keepConfig: true, timeoutMs: RUN_MS });
  return { ws, run, double, main };
}

/** An image block or item as `<image WxH media, N base64 chars>`, so a fixture stays text-sized. */
function shrinkImages(v: any): any {
  if (Array.isArray(v)) return v.map(shrinkImages);
  if (!v || typeof v !== 'object') return v;
  if (v.type === 'image' && typeof v.source?.data === 'string') {
    const d = imageDims(Buffer.from(v.source.data.slice(0, 65_536), 'base64'));
    return { ...v, source: { ...v.source, data: `<image ${d?.width}x${d?.height} ${v.source.media_type}, ${v.source.data.length} base64 chars>` } };
  }
  if (v.type === 'input_image' && typeof v.image_url === 'string' && v.image_url.startsWith('data:')) {
    const d = imageDims(Buffer.from(v.image_url.split(',')[1]!.slice(0, 65_536), 'base64'));
    return { ...v, image_url: `<image ${d?.width}x${d?.height}, ${v.image_url.length} chars>` };
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shrinkImages(x)]));
}

/**
 * What the model got: per main request, the usage the double reported and the tool results that were
 * new in it (images shrunk to their size), for the ledger's "entered" checks.
 */
export function modelSaw(kind: 'claude-code' | 'codex', requests: Array<{ body: any }>, usage: number[]): unknown[] {
  const seen = new Set<string>();
  return requests.map((r, turn) => {
    const fresh: unknown[] = [];
    if (kind === 'claude-code') {
      for (const m of r.body.messages ?? []) {
        if (!Array.isArray(m.content)) continue;
        for (const b of m.content) if (b?.type === 'tool_result' && !seen.has(b.tool_use_id)) (seen.add(b.tool_use_id), fresh.push(shrinkImages(b)));
      }
    } else {
      for (const i of r.body.input ?? []) if (i?.type === 'function_call_output' && !seen.has(i.call_id)) (seen.add(i.call_id), fresh.push(shrinkImages(i)));
    }
    return { turn, contextTokens: usage[turn], toolResults: fresh };
  });
}

/** Copy a run into the fixture folder: the transcript, Spillway's session folders, what the model saw. */
export function writeRealisticFixture(kind: 'claude-code' | 'codex', ws: Workspace, requests: Array<{ body: any }>, usage: number[]): string[] {
  const to = path.join(REALISTIC_FIXTURES, kind);
  fs.rmSync(to, { recursive: true, force: true });
  const renames = { home: ws.home, cwd: ws.cwd };
  const from = kind === 'claude-code' ? path.join(ws.home, '.claude', 'projects') : path.join(ws.home, '.codex', 'sessions');
  const written = writeFixture(from, path.join(to, kind === 'claude-code' ? 'projects' : 'sessions'), renames);
  // Spillway's own folders (spills, their sidecars and assets), paths renamed in the text files. The
  // hook gets SPILLWAY_HOME from Claude Code's environment; Codex starts MCP servers with a reduced
  // environment, so the proxy under Codex falls back to the default under HOME.
  for (const spills of [path.join(ws.home, 'spillway', 'sessions'), path.join(ws.home, '.local', 'share', 'spillway', 'sessions')]) for (const rel of listFiles(spills)) {
    const dest = path.join(to, 'spillway-sessions', renamePaths(rel, renames));
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    const buf = fs.readFileSync(path.join(spills, rel));
    const text = /\.(json|txt|md|jsonl|csv)$/.test(rel) && !buf.includes(0) ? renamePaths(buf.toString('utf8'), renames) : undefined;
    fs.writeFileSync(dest, text ?? buf);
    written.push(dest);
  }
  // The checkout the hook command ran from is a path of the recording machine: a neutral one instead.
  for (const f of written) {
    const buf = fs.readFileSync(f);
    if (!buf.includes(0) && buf.includes(ROOT)) fs.writeFileSync(f, buf.toString('utf8').split(ROOT).join('/opt/spillway'));
  }
  const saw = path.join(to, 'model-saw.json');
  fs.writeFileSync(saw, `${renamePaths(JSON.stringify(modelSaw(kind, requests, usage), null, 1), renames)}\n`);
  written.push(saw);
  return written;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const cc = await runClaudeRealistic();
  await cc.double.close();
  console.log(`claude-code: exit ${cc.run.code} in ${cc.run.ms} ms`);
  if (cc.run.code !== 0) throw new Error(cc.run.stderr.slice(-2000));
  writeRealisticFixture('claude-code', cc.ws, cc.double.mainTurns(), cc.usage.main);
  const cx = await runCodexRealistic();
  await cx.double.close();
  console.log(`codex: exit ${cx.run.code} in ${cx.run.ms} ms`);
  if (cx.run.code !== 0) throw new Error(cx.run.stderr.slice(-2000));
  writeRealisticFixture('codex', cx.ws, cx.double.mainTurns(), cx.main);
  const all = listFiles(REALISTIC_FIXTURES);
  const bytes = all.reduce((n, f) => n + fs.statSync(path.join(REALISTIC_FIXTURES, f)).size, 0);
  console.log(`${all.length} files, ${bytes} bytes under ${path.relative(ROOT, REALISTIC_FIXTURES)}`);
}
