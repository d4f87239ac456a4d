import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LineSplitter } from '../../src/integrations/mcp/lines.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CLI = path.join(ROOT, 'src', 'cli', 'main.ts');
export const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');

/** `node --import tsx --conditions=source src/cli/main.ts <args>` */
export function cliArgs(args: string[]): string[] {
  return ['--import', 'tsx', '--conditions=source', CLI, ...args];
}

export function tmpDir(prefix = 'spillway-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
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
