import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardLargeResult, readMeta, restorePayload, saveAsset, writeFileAtomic, appendSummaryRun, type SummaryRun } from '../../src/pipeline/index.js';
import { fixture, listLong, tmpSession } from './helpers.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const WORDS = 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n'.repeat(4000);
const distinct = (i: number) => `payload #${i} `.padEnd(40, '.') + `line of text for result ${i}\n`.repeat(1200);

describe('writeFileAtomic', () => {
  it('writes through a dot-temp file and renames; exclusive never overwrites', async () => {
    const dir = tmpSession();
    const p = path.join(dir, 'a.txt');
    expect(await writeFileAtomic(p, 'one')).toBe(3);
    await writeFileAtomic(p, ['t', Buffer.from('wo')]);
    expect(fs.readFileSync(p, 'utf8')).toBe('two');
    await expect(writeFileAtomic(p, 'three', { exclusive: true })).rejects.toMatchObject({ code: 'EEXIST' });
    expect(fs.readFileSync(p, 'utf8')).toBe('two');
    expect(fs.readdirSync(dir)).toEqual(['a.txt']); // no temp left behind
  });
});

describe('writeFileAtomic of pieces (one reused buffer)', () => {
  it('writes the exact bytes of strings and bytes of every size, multi-byte characters across the buffer edge included', async () => {
    const dir = tmpSession();
    const chunk = 4 * 1024 * 1024;
    const pieces: Array<string | Uint8Array> = [
      'a'.repeat(chunk - 1),
      'é€😀', // 2, 3 and 4 bytes, the first lands on the buffer's last byte
      Buffer.alloc(10, 1),
      'x'.repeat(chunk + 5), // longer than the buffer: written on its own
      new Uint8Array(chunk + 1).fill(2),
      'ü'.repeat(chunk / 4), // 1 M units, 2 MB: fits once counted
      '',
      '\ud800 lone', // a lone surrogate: U+FFFD, as Buffer.from writes it
      'end',
    ];
    const p = path.join(dir, 'pieces.bin');
    const want = Buffer.concat(pieces.map((x) => (typeof x === 'string' ? Buffer.from(x, 'utf8') : x)));
    expect(await writeFileAtomic(p, pieces)).toBe(want.length);
    expect(fs.readFileSync(p).equals(want)).toBe(true);
  });
});

describe('assets are content-addressed and verified', () => {
  it('dedupes identical assets and repairs a truncated one', async () => {
    const dir = tmpSession();
    const png = fixture('sample.png');
    const a = await saveAsset(dir, png, '.png');
    const b = await saveAsset(dir, png, '.png');
    expect(b.reused).toBe(true);
    expect(a.path).toBe(b.path);
    fs.truncateSync(a.path, 100);
    const c = await saveAsset(dir, png, '.png');
    expect(c.reused).toBe(false);
    expect(fs.readFileSync(c.path).equals(png)).toBe(true);
    // same size, different content: still caught by the hash
    const flipped = Buffer.from(png);
    flipped[200] = flipped[200]! ^ 0xff;
    fs.writeFileSync(a.path, flipped);
    expect((await saveAsset(dir, png, '.png')).reused).toBe(false);
    expect(crypto.createHash('sha256').update(fs.readFileSync(a.path)).digest('hex')).toBe(a.sha256);
  });
});

describe('unique names under concurrency', () => {
  it('1,000 concurrent spills in the same millisecond give 1,000 byte-identical payloads', async () => {
    const s = tmpSession();
    const now = () => new Date('2026-11-30T08:00:00.000Z');
    const results = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => guardLargeResult(distinct(i), { sessionPath: s, toolName: 'same', toolInput: { q: 1 }, now, limitTokens: 1000 })),
    );
    const paths = new Set(results.map((r) => r!.payloadPath!));
    expect(paths.size).toBe(1000);
    results.forEach((r, i) => expect(fs.readFileSync(r!.payloadPath!, 'utf8')).toBe(distinct(i)));
    const files = listLong(s);
    expect(files.filter((f) => f.endsWith('.meta.json'))).toHaveLength(1000);
    expect(files.filter((f) => f.startsWith('.'))).toEqual([]); // no temp files left
    const meta = await readMeta(results[999]!.metaPath!);
    expect(meta.payloadFile).toBe(path.basename(results[999]!.payloadPath!));
  }, 120_000);

  it('several processes spilling into one session never collide or overwrite', async () => {
    const s = tmpSession();
    const perChild = 100;
    const children = 4;
    const script = `
      import { guardLargeResult } from ${JSON.stringify(path.join(REPO, 'src/pipeline/index.ts'))};
      const k = Number(process.argv[3]);
      const now = () => new Date('2026-11-30T08:00:00.000Z');
      const mk = (i) => ('child ' + k + ' payload ' + i + ' ').padEnd(40, '.') + 'some data here\\n'.repeat(2000);
      const rs = await Promise.all(Array.from({ length: ${perChild} }, (_, i) => guardLargeResult(mk(i), { sessionPath: process.argv[2], toolName: 'same', now, limitTokens: 1000 })));
      process.stdout.write(JSON.stringify(rs.map((r) => r.payloadPath)));
    `;
    const scriptPath = path.join(s, 'child.mts');
    fs.writeFileSync(scriptPath, script);
    const outs = await Promise.all(
      Array.from({ length: children }, (_, k) =>
        new Promise<string[]>((resolve, reject) => {
          const p = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', scriptPath, s, String(k)], { cwd: REPO });
          let out = '';
          let err = '';
          p.stdout.on('data', (d) => (out += d));
          p.stderr.on('data', (d) => (err += d));
          p.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(err))));
        }),
      ),
    );
    const all = outs.flat();
    expect(new Set(all).size).toBe(children * perChild);
    outs.forEach((paths, k) =>
      paths.forEach((p, i) => expect(fs.readFileSync(p, 'utf8')).toBe(`child ${k} payload ${i} `.padEnd(40, '.') + 'some data here\n'.repeat(2000))),
    );
    expect(listLong(s).filter((f) => f.endsWith('.meta.json'))).toHaveLength(children * perChild);
  }, 180_000);
});

describe('sidecar updates', () => {
  it('appendSummaryRun keeps every run when called concurrently', async () => {
    const s = tmpSession();
    const r = await guardLargeResult(WORDS, { sessionPath: s });
    const run = (i: number): SummaryRun => ({
      id: `run-${i}`,
      createdAt: new Date().toISOString(),
      status: 'ok',
      summary: `summary ${i}`,
      provider: 'test',
      model: 'm',
      inputTokens: 1,
      outputTokens: 1,
      ms: 1,
    });
    await Promise.all(Array.from({ length: 50 }, (_, i) => appendSummaryRun(r!.metaPath!, run(i))));
    const meta = await readMeta(r!.metaPath!);
    expect(meta.summaryRuns.map((x) => x.id).sort()).toEqual(Array.from({ length: 50 }, (_, i) => `run-${i}`).sort());
    expect((await restorePayload(r!.metaPath!)).toString()).toBe(WORDS);
  });
});

describe('sidecar updates across processes', () => {
  it('appendSummaryRun from several processes at once keeps every run', async () => {
    const s = tmpSession();
    const r = await guardLargeResult(WORDS, { sessionPath: s });
    const children = 4;
    const perChild = 25;
    const script = `
      import { appendSummaryRun } from ${JSON.stringify(path.join(REPO, 'src/pipeline/index.ts'))};
      const k = process.argv[3];
      await Promise.all(Array.from({ length: ${perChild} }, (_, i) => appendSummaryRun(process.argv[2], {
        id: 'p' + k + '-' + i, createdAt: new Date().toISOString(), status: 'ok', summary: 's', provider: 'test',
        model: 'm', inputTokens: 1, outputTokens: 1, ms: 1,
      })));
    `;
    const scriptPath = path.join(s, 'append.mts');
    fs.writeFileSync(scriptPath, script);
    await Promise.all(
      Array.from(
        { length: children },
        (_, k) =>
          new Promise<void>((resolve, reject) => {
            const p = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', scriptPath, r!.metaPath!, String(k)], { cwd: REPO });
            let err = '';
            p.stderr.on('data', (d) => (err += d));
            p.on('close', (code) => (code === 0 ? resolve() : reject(new Error(err))));
          }),
      ),
    );
    const meta = await readMeta(r!.metaPath!);
    const want = Array.from({ length: children }, (_, k) => Array.from({ length: perChild }, (_, i) => `p${k}-${i}`)).flat();
    expect(meta.summaryRuns.map((x) => x.id).sort()).toEqual(want.sort());
    // no lock or temp file is left behind
    expect(fs.readdirSync(path.dirname(r!.metaPath!)).filter((f) => f.startsWith('.'))).toEqual([]);
  }, 120_000);

  it('breaks a lock left by a crashed process', async () => {
    const s = tmpSession();
    const r = await guardLargeResult(WORDS, { sessionPath: s });
    const lock = path.join(path.dirname(r!.metaPath!), `.${path.basename(r!.metaPath!)}.lock`);
    fs.writeFileSync(lock, '99999\n');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    await appendSummaryRun(r!.metaPath!, {
      id: 'after-crash', createdAt: new Date().toISOString(), status: 'ok', summary: 's', provider: 'test',
      model: 'm', inputTokens: 1, outputTokens: 1, ms: 1,
    });
    expect((await readMeta(r!.metaPath!)).summaryRuns.map((x) => x.id)).toEqual(['after-crash']);
    expect(fs.existsSync(lock)).toBe(false);
  });
});

describe('restore refuses what it cannot prove', () => {
  it('detects a damaged asset and a damaged payload', async () => {
    const s = tmpSession();
    const png = fixture('sample.png');
    const r = await guardLargeResult({ content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }] }, { sessionPath: s, limitTokens: 100 });
    expect((await restorePayload(r!.payloadPath!)).toString()).toContain(png.toString('base64'));
    fs.writeFileSync(r!.assets[0]!.path, Buffer.alloc(png.length));
    await expect(restorePayload(r!.payloadPath!)).rejects.toThrow(/damaged/);
    const t = await guardLargeResult(WORDS, { sessionPath: s });
    fs.appendFileSync(t!.payloadPath!, 'tampered');
    await expect(restorePayload(t!.payloadPath!)).rejects.toThrow(/sha256/);
  });

  it('a sidecar cannot point restore outside the session', async () => {
    const s = tmpSession();
    const r = await guardLargeResult(WORDS, { sessionPath: s });
    const meta = JSON.parse(fs.readFileSync(r!.metaPath!, 'utf8'));
    meta.payloadFile = '../../../../etc/passwd';
    fs.writeFileSync(r!.metaPath!, JSON.stringify(meta));
    await expect(restorePayload(r!.metaPath!)).rejects.toThrow(/escapes|outside/);
  });

  it('a long_responses symlink out of the session is refused, not written through', async () => {
    const s = tmpSession();
    const elsewhere = tmpSession();
    fs.symlinkSync(elsewhere, path.join(s, 'long_responses'));
    const r = await guardLargeResult(WORDS, { sessionPath: s, toolName: '../../evil' });
    expect(r!.payloadPath).toBeUndefined();
    expect(r!.message).toMatch(/could NOT be saved/);
    expect(fs.readdirSync(elsewhere).filter((f) => f !== 'assets')).toEqual([]);
  });

  it('tool names are sanitized into the file name and never escape', async () => {
    const s = tmpSession();
    const r = await guardLargeResult(WORDS, { sessionPath: s, toolName: '../../../etc/pass wd\u0000' });
    expect(path.dirname(r!.payloadPath!)).toBe(path.join(s, 'long_responses'));
    expect(path.basename(r!.payloadPath!)).toMatch(/^\d{8}T\d{9}Z_etc_pass_wd_[0-9a-f]{8}_0\.txt$/);
  });
});
