import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LineSplitter } from '../../src/integrations/mcp/lines.js';
import { encodePng } from '../helpers/png.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CLI = path.join(ROOT, 'src', 'cli', 'main.ts');
export const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** `node --import tsx --conditions=source src/cli/main.ts <args>` */
export function cliArgs(args: string[]): string[] {
  return ['--import', 'tsx', '--conditions=source', CLI, ...args];
}

/**
 * Cut a buffer at the given fractions of its length (repeated cuts once each). A cut at 0 or at the
 * end gives an empty chunk, as a stream may deliver one.
 */
export function chunkAt(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * buf.length)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(buf.subarray(prev, p));
    prev = p;
  }
  out.push(buf.subarray(prev));
  return out;
}

export function tmpDir(prefix = 'spillway-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * A Claude Code project folder as 2.1.328 lays it out, in a fresh temp folder: `<project>/<session>.jsonl`
 * (empty) and `<project>/<session>/tool-results/`, where it persists a large Bash output.
 */
export function claudeProject(sessionId: string): { project: string; toolResults: string; transcript: string } {
  const project = path.join(tmpDir(), 'projects', '-home-user-work');
  const toolResults = path.join(project, sessionId, 'tool-results');
  fs.mkdirSync(toolResults, { recursive: true });
  const transcript = path.join(project, `${sessionId}.jsonl`);
  fs.writeFileSync(transcript, '');
  return { project, toolResults, transcript };
}

/** Environment for spawned CLIs: app data in a temp folder, never the user's. */
export function testEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, SPILLWAY_HOME: home };
}

/**
 * A raw JSON-RPC peer over a child's stdio: sends exact lines and keeps every received line as
 * bytes, so tests can compare what a server and the proxy write, byte for byte.
 */
export class RawPeer {
  readonly child: ChildProcess;
  readonly lines: Buffer[] = [];
  stderr = '';
  private waiters: Array<{ test: (msg: Record<string, unknown>, raw: Buffer) => boolean; resolve: (v: { msg: Record<string, unknown>; raw: Buffer }) => void }> = [];
  private exited: Promise<number | null>;
  private nextId = 1;

  constructor(command: string, args: string[], env?: NodeJS.ProcessEnv, cwd?: string) {
    this.child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env, cwd });
    const splitter = new LineSplitter({ onLine: (line) => this.onLine(line) });
    this.child.stdout!.on('data', (c: Buffer) => splitter.push(c));
    this.child.stdout!.on('end', () => splitter.end());
    this.child.stderr!.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.child.stdin!.on('error', () => {});
    this.exited = new Promise((resolve) => this.child.on('close', (code) => resolve(code)));
  }

  private onLine(line: Buffer): void {
    this.lines.push(line);
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line.toString('utf8')) as Record<string, unknown>;
    } catch {
      return;
    }
    for (const w of [...this.waiters]) {
      if (w.test(msg, line)) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve({ msg, raw: line });
      }
    }
  }

  send(msg: Record<string, unknown> | string): void {
    this.child.stdin!.write(typeof msg === 'string' ? `${msg}\n` : `${JSON.stringify(msg)}\n`);
  }

  waitFor(test: (msg: Record<string, unknown>, raw: Buffer) => boolean, timeoutMs = 30_000): Promise<{ msg: Record<string, unknown>; raw: Buffer }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; stderr: ${this.stderr.slice(-2000)}`)), timeoutMs);
      this.waiters.push({
        test,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
      });
    });
  }

  /** Send a request and wait for its response (raw bytes included). */
  async request(method: string, params?: unknown, id: number | string = this.nextId++, timeoutMs?: number) {
    const p = this.waitFor((m) => m.id === id && (m.result !== undefined || m.error !== undefined), timeoutMs);
    this.send({ jsonrpc: '2.0', id, method, ...(params !== undefined ? { params } : {}) });
    return p;
  }

  async initialize(capabilities: Record<string, unknown> = {}) {
    const r = await this.request('initialize', { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw-test', version: '1' } }, 0);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return r;
  }

  async close(): Promise<number | null> {
    this.child.stdin!.end();
    const t = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }

  get done(): Promise<number | null> {
    return this.exited;
  }
}

/** A proxy in front of `node <server> ...serverArgs`, as a raw peer. */
export function rawProxy(home: string, proxyArgs: string[], server: string, serverArgs: string[] = []): RawPeer {
  return new RawPeer(process.execPath, cliArgs(['mcp', ...proxyArgs, '--', process.execPath, server, ...serverArgs]), testEnv(home));
}

/** The server alone, as a raw peer. */
export function rawServer(server: string, serverArgs: string[] = []): RawPeer {
  return new RawPeer(process.execPath, [server, ...serverArgs]);
}

/** Every file under a folder, recursively (relative paths). */
export function listFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** A real PNG (RGB, random pixels so it does not compress away) of about `side`² × 3 bytes. */
export function makePng(side: number, seed = 1): Buffer {
  const raw = Buffer.alloc(side * (side * 3 + 1));
  let x = seed;
  for (let i = 0; i < raw.length; i++) {
    if (i % (side * 3 + 1) === 0) raw[i] = 0; // filter: none
    else {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      raw[i] = x >> 16;
    }
  }
  return encodePng(side, side, raw);
}

/** A real WAV: 16-bit mono PCM, a noisy tone. */
export function makeWav(samples: number): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin(i / 7) * 12000 + ((i * 7919) % 2000) - 1000), i * 2);
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'latin1');
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8, 'latin1');
  h.write('fmt ', 12, 'latin1');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(16000, 24);
  h.writeUInt32LE(32000, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'latin1');
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

/** Log-like text: numbered lines with words, ids and a few errors, about `bytes` long. */
export function makeLog(bytes: number): string {
  const words = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
  const lines: string[] = [];
  let size = 0;
  for (let i = 1; size < bytes; i++) {
    const level = i % 97 === 0 ? 'ERROR' : i % 13 === 0 ? 'WARN' : 'INFO';
    const line = `2026-11-30T08:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z ${level} line ${i}: ${words[i % 12]} ${words[(i * 7) % 12]} request id=${(i * 2654435761) % 1e9} took ${i % 500}ms`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join('\n')}\n`;
}

/** An SDK Client over stdio to `spawn command args` (the proxy or a server directly). */
export async function connect(command: string, args: string[], env?: NodeJS.ProcessEnv, capabilities: Record<string, unknown> = {}) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioClientTransport({ command, args, env: (env ?? process.env) as Record<string, string>, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: 'spillway-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

export function connectProxy(home: string, proxyArgs: string[], server: string, serverArgs: string[] = [], capabilities?: Record<string, unknown>) {
  return connect(process.execPath, cliArgs(['mcp', ...proxyArgs, '--', process.execPath, server, ...serverArgs]), testEnv(home), capabilities);
}

export function connectDirect(server: string, serverArgs: string[] = [], capabilities?: Record<string, unknown>) {
  return connect(process.execPath, [server, ...serverArgs], process.env, capabilities);
}

/** The text of a tool result's text blocks. */
export function textOf(result: unknown): string {
  const content = (result as { content?: unknown }).content;
  const blocks = Array.isArray(content) ? (content as Array<{ type?: string; text?: string }>) : [];
  return blocks.filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');
}

/** The spill record the proxy puts in `_meta`. */
export function spillOf(result: unknown): { payloadPath?: string; metaPath?: string; action?: string; tokens?: number } | undefined {
  return (result as { _meta?: Record<string, unknown> })._meta?.['spillway/spill'] as never;
}
