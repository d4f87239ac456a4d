/**
 * Issue 22, finding 1: a FIFO, a socket, a device node, a hard link or a symbolic link planted
 * where `spillway serve` reads a file (an asset, a payload, `estimate {path}`) is refused, and the
 * server keeps answering. Before the fix a FIFO in `assets/` blocked a libuv thread per read:
 * after four, every file-backed request (readPayload, the UI, assets) hung for good. The server is
 * the real CLI in its own process, so a hang there cannot hang this test's process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { HOSTILE_KINDS, closePlanted, outsideSecret, plant } from '../helpers/hostile-files.js';
import { serveUrl } from '../helpers/serve-url.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts')];
const TOKEN = 'hostile-files-test-token-0123456789abcdef';
/** A refusal, and the next request after it, must both come within this. */
const ANSWER_MS = 1000;

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

let tmp: string;
let root: string;
let child: ChildProcess;
let base: URL;
let stderr = '';

interface Res {
  status: number | 'timeout';
  body: string;
}

async function request(p: string, body?: unknown, ms = ANSWER_MS): Promise<Res> {
  try {
    const r = await fetch(new URL(p, base), {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(ms),
    });
    return { status: r.status, body: await r.text() };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { status: 'timeout', body: '' };
    throw err;
  }
}
const call = (method: string, body: unknown, ms?: number) => request(`/api/${method}`, body, ms);
const result = async (method: string, body: unknown) => JSON.parse((await call(method, body, 30_000)).body).result;

let assetPayload: string;
let asset: { path: string; sha256: string };
let textPayload: { id: string; path: string };
let control: string;
let estimateFile: string;

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-hostile-serve-')));
  root = path.join(tmp, 'root');
  const shot = JSON.stringify({ content: [{ type: 'image', mimeType: 'image/png', data: PNG.toString('base64') }], pad: crypto.randomBytes(30_000).toString('hex') });
  await guardLargeResult(shot, { sessionPath: path.join(root, 'shots'), toolName: 'shot', limitTokens: 1000 });
  await guardLargeResult('victim line\n'.repeat(4000), { sessionPath: path.join(root, 'texts'), toolName: 'victim', limitTokens: 1000 });
  await guardLargeResult('control line\n'.repeat(4000), { sessionPath: path.join(root, 'control'), toolName: 'control', limitTokens: 1000 });
  estimateFile = path.join(root, 'loose', 'notes.txt');
  fs.mkdirSync(path.dirname(estimateFile), { recursive: true });
  fs.writeFileSync(estimateFile, 'words '.repeat(100));

  child = spawn(process.execPath, [...CLI, 'serve', '--root', root, '--db', path.join(tmp, 'index.sqlite'), '--no-default-roots'], {
    cwd: REPO,
    env: { ...process.env, SPILLWAY_HOME: path.join(tmp, 'home'), SPILLWAY_TOKEN: TOKEN, UV_THREADPOOL_SIZE: '4' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await serveUrl(child, () => stderr);
  base = new URL(new URL(url).origin);
  for (let i = 0; i < 200; i++) {
    if ((await result('listPayloads', { limit: 10 })).total >= 3) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const idOf = async (tool: string) => (await result('listPayloads', { tool, limit: 1 })).rows[0].id as string;
  assetPayload = await idOf('shot');
  const d = await result('getPayload', { id: assetPayload });
  asset = d.assets.find((a: { mimeType: string }) => a.mimeType === 'image/png');
  textPayload = { id: await idOf('victim'), path: (await result('getPayload', { id: await idOf('victim') })).path };
  control = await idOf('control');
}, 120_000);

afterAll(async () => {
  child?.kill('SIGKILL');
  await closePlanted();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** After a refusal, another payload still reads at once: no thread of the server is stuck. */
async function stillAnswers(): Promise<void> {
  const r = await call('readPayload', { id: control, start: 0, end: 100 });
  expect(r.status, `readPayload of another payload after the refusal (server stderr: ${stderr.slice(-500)})`).toBe(200);
  expect(JSON.parse(r.body).result.text).toContain('control line');
}

function refused(rs: Res[], secret?: string): void {
  for (const r of rs) {
    expect(r.status, 'answered, with a refusal').not.toBe('timeout');
    expect(r.status as number).toBeGreaterThanOrEqual(400);
    if (secret) expect(r.body).not.toContain(secret);
  }
}

/** Put the original bytes back under `file` (whatever was planted there goes). */
function restore(file: string, bytes: Buffer): void {
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, bytes);
}

describe('serve refuses a file that is not a regular file of its own, and keeps answering', () => {
  for (const kind of HOSTILE_KINDS) {
    it(`an asset that is a ${kind}: readAsset and GET /api/asset refuse it (four at once), and readPayload of another payload answers within 1 s`, async () => {
      const original = fs.readFileSync(asset.path);
      // A hard link to an outside copy of the same bytes: what matters is that it is a second name.
      const outside = outsideSecret();
      fs.writeFileSync(outside.file, original);
      await plant(asset.path, kind, outside.file);
      try {
        const rs = await Promise.all([
          call('readAsset', { payloadId: assetPayload, sha256: asset.sha256 }),
          call('readAsset', { payloadId: assetPayload, sha256: asset.sha256 }),
          request(`/api/asset/${encodeURIComponent(assetPayload)}/${asset.sha256}`),
          request(`/api/asset/${encodeURIComponent(assetPayload)}/${asset.sha256}`),
        ]);
        refused(rs);
        await stillAnswers();
      } finally {
        restore(asset.path, original);
      }
    });

    it(`a payload file that is a ${kind}: readPayload refuses it and leaks nothing, and another payload answers within 1 s`, async () => {
      const original = fs.readFileSync(textPayload.path);
      const secret = outsideSecret();
      await plant(textPayload.path, kind, secret.file);
      try {
        const rs = await Promise.all([0, 1, 2, 3].map(() => call('readPayload', { id: textPayload.id, start: 0, end: 1000 })));
        refused(rs, secret.text);
        await stillAnswers();
      } finally {
        restore(textPayload.path, original);
      }
    });

    it(`estimate {path} of a ${kind} in a root is refused and leaks nothing, and the server answers within 1 s`, async () => {
      const original = fs.readFileSync(estimateFile);
      const secret = outsideSecret('secret '.repeat(5000));
      await plant(estimateFile, kind, secret.file);
      try {
        const rs = await Promise.all([0, 1, 2, 3].map(() => call('estimate', { path: estimateFile })));
        // A leak would show as an estimate of the secret's 35,000 bytes.
        refused(rs, '35000');
        await stillAnswers();
      } finally {
        restore(estimateFile, original);
      }
    });
  }
});
