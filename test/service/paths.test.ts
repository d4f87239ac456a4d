import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInside, makeStem, sessionPaths } from '../../src/pipeline/index.js';
import { ServiceError } from '../../src/service/contract.js';
import { PathGuard, checkPathText } from '../../src/service/paths.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';

/** Traversal, symlinks and deceptive Unicode against the path guard and the service methods that take paths. */

let tmp: string;
let root: string;
let outside: string;
let guard: PathGuard;

beforeAll(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-paths-')));
  root = path.join(tmp, 'root');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(path.join(root, 'sess', 'long_responses'), { recursive: true });
  fs.mkdirSync(outside, { recursive: true });
  fs.writeFileSync(path.join(root, 'sess', 'ok.txt'), 'ok');
  fs.writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'sess', 'link-out.txt'));
  fs.symlinkSync(outside, path.join(root, 'dir-out'));
  fs.symlinkSync(path.join(root, 'sess', 'ok.txt'), path.join(root, 'link-in.txt'));
  guard = new PathGuard();
  guard.allowDir(root, 'root');
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(ServiceError);
    return (err as ServiceError).code;
  }
}

describe('PathGuard', () => {
  it('allows files inside a root, including symlinks that stay inside', () => {
    expect(guard.resolve(path.join(root, 'sess', 'ok.txt'))).toBe(path.join(root, 'sess', 'ok.txt'));
    expect(guard.resolve(path.join(root, 'link-in.txt'))).toBe(path.join(root, 'sess', 'ok.txt'));
    expect(guard.resolve(path.join(root, 'sess', '..', 'sess', 'ok.txt'))).toBe(path.join(root, 'sess', 'ok.txt'));
  });

  it('refuses `..` traversal, absolute paths elsewhere and relative paths', () => {
    expect(code(() => guard.resolve(path.join(root, '..', 'outside', 'secret.txt')))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolve(`${root}/../../../../etc/passwd`))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolve('/etc/passwd'))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolve('sess/ok.txt'))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolve(`${root}-evil/x`))).toBe('FORBIDDEN_PATH'); // a sibling with the root as prefix
    expect(code(() => guard.resolveUnder(root, '../outside/secret.txt'))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolveUnder(root, '/etc/passwd'))).toBe('FORBIDDEN_PATH');
  });

  it('refuses symlinks (to files or folders) that lead out of the root', () => {
    expect(code(() => guard.resolve(path.join(root, 'sess', 'link-out.txt')))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolve(path.join(root, 'dir-out', 'secret.txt')))).toBe('FORBIDDEN_PATH');
    expect(code(() => guard.resolveUnder(root, 'dir-out/secret.txt'))).toBe('FORBIDDEN_PATH');
  });

  it('refuses NUL bytes, control characters, bidi marks and look-alike dots and slashes', () => {
    for (const bad of [
      `${root}/sess/ok.txt\0.png`,
      `${root}/sess/\u0007ok.txt`,
      `${root}/sess/ok\u202Etxt.exe`, // RIGHT-TO-LEFT OVERRIDE
      `${root}/sess/\u200Fok.txt`, // RIGHT-TO-LEFT MARK
      `${root}/sess/\u2066ok.txt`, // LEFT-TO-RIGHT ISOLATE
      `${root}/sess/ok\u200B.txt`, // ZERO WIDTH SPACE
      `${root}/．．／．．／outside/secret.txt`, // fullwidth full stop and solidus
      `${root}/\uFF0E\uFF0E/outside/secret.txt`,
      `${root}/sess\u2215..\u2215..\u2215outside`, // DIVISION SLASH
      `${root}/\u2024\u2024/outside`, // ONE DOT LEADER
      `${root}/\u2025/outside`, // TWO DOT LEADER
      `${root}/sess\uFF3Cok.txt`, // fullwidth reverse solidus
    ]) {
      expect(code(() => guard.resolve(bad)), JSON.stringify(bad)).toBe('FORBIDDEN_PATH');
    }
    expect(code(() => checkPathText(''))).toBe('BAD_REQUEST');
    expect(code(() => checkPathText('a'.repeat(5000)))).toBe('BAD_REQUEST');
    // Ordinary non-ASCII names are fine.
    expect(checkPathText('/data/セッション/ログ.txt')).toBe('/data/セッション/ログ.txt');
  });

  it('a dropped file is allowed alone, not its folder', () => {
    const g = new PathGuard();
    g.allowFile(path.join(outside, 'secret.txt'), 'dropped');
    expect(g.resolve(path.join(outside, 'secret.txt'))).toBe(path.join(outside, 'secret.txt'));
    fs.writeFileSync(path.join(outside, 'neighbour.txt'), 'n');
    expect(code(() => g.resolve(path.join(outside, 'neighbour.txt')))).toBe('FORBIDDEN_PATH');
  });

  it('property: whatever the input, the answer is a ServiceError or a real path inside the root', () => {
    const segment = fc.oneof(
      fc.constantFrom('..', '.', 'sess', 'ok.txt', 'link-out.txt', 'dir-out', 'secret.txt', 'outside', '', '．．', '\u202E', '\0', '%2e%2e', '~'),
      fc.string({ maxLength: 6 }),
    );
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 8 }), fc.boolean(), (segs, absolute) => {
        const p = absolute ? path.join(root, ...segs.map((s) => s || '_')) : segs.join('/');
        let real: string;
        try {
          real = guard.resolve(p, { mustExist: false });
        } catch (err) {
          expect(err).toBeInstanceOf(ServiceError);
          return;
        }
        expect(isInside(root, real)).toBe(true);
        if (fs.existsSync(real)) expect(isInside(root, fs.realpathSync(real))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('service methods that take or follow paths', () => {
  let svc: InspectorService;
  let home: string;

  beforeAll(async () => {
    home = path.join(tmp, 'home');
    // A Spillway session whose payload file and asset are swapped for symlinks to a secret
    // outside the root after indexing (the indexer itself skips symlinks): the index still
    // lists them, the service must not follow them.
    const sp = sessionPaths(path.join(root, 'sess'));
    fs.mkdirSync(sp.assets, { recursive: true });
    const stem = makeStem({ time: new Date(Date.UTC(2026, 0, 1)), tool: 'evil', inputHash: '00000000', seq: 0 });
    const payloadFile = path.join(sp.longResponses, `${stem}.txt`);
    fs.writeFileSync(payloadFile, 'inside');
    const sha = 'ab'.repeat(32);
    const assetFile = path.join(sp.assets, `${sha.slice(0, 32)}.png`);
    fs.writeFileSync(assetFile, 'inside');
    fs.writeFileSync(
      path.join(sp.longResponses, `${stem}.meta.json`),
      JSON.stringify({
        version: 1,
        id: stem,
        createdAt: '2026-01-01T00:00:00.000Z',
        tool: 'evil',
        action: 'spill',
        payloadFile: `${stem}.txt`,
        payloadIsOriginal: true,
        kind: 'text',
        bytes: 6,
        chars: 6,
        sha256: '0'.repeat(64),
        estimate: { tokens: 2, strategy: 'calibrated', profile: 'o200k', exact: false },
        estimates: { calibrated: 2, chars4: 2, 'craft-density': 2 },
        limitTokens: 1,
        assets: [
          {
            path: path.join(sp.assets, `${sha.slice(0, 32)}.png`),
            relPath: `long_responses/assets/${sha.slice(0, 32)}.png`,
            mimeType: 'image/png',
            bytes: 6,
            sha256: sha,
            jsonPath: '$',
            source: 'base64',
            sniffed: false,
          },
        ],
        message: 'm',
        summaryRuns: [],
      }),
    );
    svc = createInspectorService({ env: process.env, appDataDir: home, roots: [root], transport: 'http', scanOnStart: false, watch: false });
    await svc.ready;
    await svc.reindex({});
    for (const f of [payloadFile, assetFile]) {
      fs.rmSync(f);
      fs.symlinkSync(path.join(outside, 'secret.txt'), f);
    }
  });

  afterAll(async () => {
    await svc.close();
  });

  async function errCode(p: Promise<unknown>): Promise<string> {
    const e = await p.then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ServiceError);
    return (e as ServiceError).code;
  }

  it('never reads a payload or asset whose file is a symlink out of the root', async () => {
    const { rows } = await svc.listPayloads({ tool: 'evil' });
    expect(rows).toHaveLength(1);
    const id = rows[0]!.id;
    expect(await errCode(svc.readPayload({ id }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.estimate({ payloadId: id }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.summarize({ payloadId: id }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.getPayload({ id }))).toBe('FORBIDDEN_PATH');
    const sha = 'ab'.repeat(32);
    const assetErr = await errCode(svc.readAsset({ payloadId: id, sha256: sha }));
    expect(['FORBIDDEN_PATH', 'NOT_FOUND']).toContain(assetErr);
    expect(['FORBIDDEN_PATH', 'NOT_FOUND']).toContain(await errCode(svc.openAsset({ payloadId: id, sha256: sha })));
  });

  it('estimate/analyze by path stay inside roots and app data over HTTP', async () => {
    expect(await errCode(svc.estimate({ path: path.join(outside, 'secret.txt') }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.estimate({ path: path.join(root, 'sess', 'link-out.txt') }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.estimate({ path: `${root}/../outside/secret.txt` }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.estimate({ path: `${root}/sess/ok.txt\0` }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.estimate({ path: 'sess/ok.txt' }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.analyze({ name: 'x', path: path.join(outside, 'secret.txt') }))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.analyze({ name: 'x', path: `${root}/．．/outside/secret.txt` }))).toBe('FORBIDDEN_PATH');
    const ok = await svc.estimate({ path: path.join(root, 'sess', 'ok.txt') });
    expect(ok.bytes).toBe(2);
  });

  it('addRoot refuses deceptive paths, the file-system root and folders holding the app data', async () => {
    expect(await errCode(svc.addTrustedRoot(`${root}/\u202Esess`))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.addTrustedRoot(`${root}\0`))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.addTrustedRoot('/'))).toBe('FORBIDDEN_PATH');
    expect(await errCode(svc.addTrustedRoot(tmp))).toBe('FORBIDDEN_PATH');
  });

  it('templates are names, never paths', async () => {
    for (const name of ['../x', 'a/b', '..', '.hidden', 'x\0', 'ｘ／ｙ', '']) {
      expect(await errCode(svc.saveTemplate({ name, body: 'b' }))).toBe('BAD_REQUEST');
    }
    expect(fs.existsSync(path.join(home, 'x.md'))).toBe(false);
  });
});
