import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isConfinedDirSync, openUntrusted, openUntrustedSync, readUntrusted, UntrustedFileError } from '../../src/pipeline/layout.js';
import { HOSTILE_KINDS, closePlanted, outsideSecret, plant } from '../helpers/hostile-files.js';

afterAll(closePlanted);

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-safe-open-')));

const EXPECTED = { fifo: 'NOT_REGULAR', socket: 'NOT_REGULAR', device: 'NOT_REGULAR', hardlink: 'HARD_LINK', symlink: 'LINK' } as const;

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
    return 'opened';
  } catch (err) {
    expect(err).toBeInstanceOf(UntrustedFileError);
    return (err as UntrustedFileError).code;
  }
}

describe('openUntrusted: one way to open a file the user did not write', () => {
  it('opens a regular file, async and sync, and reads it whole', async () => {
    const root = tmp();
    fs.mkdirSync(path.join(root, 'a', 'b'), { recursive: true });
    const f = path.join(root, 'a', 'b', 'x.txt');
    fs.writeFileSync(f, 'hello');
    expect((await readUntrusted(f, { root })).toString()).toBe('hello');
    const { fd, stat } = openUntrustedSync(f, { root });
    expect(stat.size).toBe(5);
    fs.closeSync(fd);
    expect(await codeOf(readUntrusted(f, { root, maxBytes: 4 }))).toBe('TOO_BIG');
  });

  for (const kind of HOSTILE_KINDS) {
    it(`refuses a ${kind} without blocking, async and sync`, async () => {
      const root = tmp();
      const f = path.join(root, 'x.txt');
      await plant(f, kind);
      const t0 = Date.now();
      expect(await codeOf(openUntrusted(f, { root }))).toBe(EXPECTED[kind]);
      expect(await codeOf(() => openUntrustedSync(f, { root }))).toBe(EXPECTED[kind]);
      expect(Date.now() - t0).toBeLessThan(1000);
    });
  }

  for (const kind of HOSTILE_KINDS) {
    it(`refuses a ${kind} put in place after a listing said "regular file" (listedAsFile skips the lstat), without blocking`, async () => {
      const root = tmp();
      const f = path.join(root, 'x.txt');
      fs.writeFileSync(f, 'listed');
      expect(fs.readdirSync(root, { withFileTypes: true })[0]!.isFile()).toBe(true);
      await plant(f, kind);
      // A FIFO opened for reading without O_NONBLOCK would hang here (the test's timeout).
      expect(await codeOf(openUntrusted(f, { root, listedAsFile: true }))).toBe(EXPECTED[kind]);
      expect(await codeOf(() => openUntrustedSync(f, { root, listedAsFile: true }))).toBe(EXPECTED[kind]);
    });
  }

  it('listedAsFile still refuses a file reached through a linked folder, and reads a regular one', async () => {
    const root = tmp();
    const secret = outsideSecret();
    fs.mkdirSync(path.join(root, 'proj'));
    fs.symlinkSync(path.dirname(secret.file), path.join(root, 'proj', 'sid'));
    expect(await codeOf(() => openUntrustedSync(path.join(root, 'proj', 'sid', 'secret.txt'), { root: '/', listedAsFile: true }))).toBe('OUTSIDE');
    const ok = path.join(root, 'proj', 'ok.txt');
    fs.writeFileSync(ok, 'ok');
    const { fd, stat } = openUntrustedSync(ok, { root: '/', listedAsFile: true });
    fs.closeSync(fd);
    expect(stat.size).toBe(2);
  });

  it('without a root (a path the user typed) a hard link is fine, a FIFO still is not', async () => {
    const root = tmp();
    const f = path.join(root, 'x.txt');
    await plant(f, 'hardlink');
    expect((await openUntrusted(f)).stat.nlink).toBe(2);
    await plant(f, 'fifo');
    expect(await codeOf(openUntrusted(f))).toBe('NOT_REGULAR');
  });

  it('refuses a file reached through a linked folder below the root, at any depth', async () => {
    const root = tmp();
    const secret = outsideSecret();
    const elsewhere = path.dirname(secret.file);
    fs.mkdirSync(path.join(root, 'proj'));
    fs.symlinkSync(elsewhere, path.join(root, 'proj', 'sid'));
    const f = path.join(root, 'proj', 'sid', 'secret.txt');
    expect(fs.readFileSync(f, 'utf8')).toBe(secret.text); // the link works for an ordinary reader
    expect(await codeOf(openUntrusted(f, { root }))).toBe('OUTSIDE');
    expect(await codeOf(() => openUntrustedSync(f, { root }))).toBe('OUTSIDE');
    expect(isConfinedDirSync(path.join(root, 'proj', 'sid'), root)).toBe(false);
    expect(isConfinedDirSync(path.join(root, 'proj'), root)).toBe(true);
    // The root itself may be reached through a link: only what is below it is confined.
    const alias = path.join(tmp(), 'alias');
    fs.symlinkSync(root, alias);
    fs.writeFileSync(path.join(root, 'proj', 'ok.txt'), 'ok');
    expect((await readUntrusted(path.join(alias, 'proj', 'ok.txt'), { root: alias })).toString()).toBe('ok');
    expect(await codeOf(readUntrusted(path.join(alias, 'proj', 'ok.txt'), { root: '/' }))).toBe('OUTSIDE');
  });

  it('refuses a path outside the root lexically', async () => {
    const root = tmp();
    expect(await codeOf(openUntrusted(path.join(root, '..', 'x'), { root }))).toBe('OUTSIDE');
    expect(await codeOf(openUntrusted(root, { root }))).toBe('OUTSIDE');
    expect(await codeOf(openUntrusted(path.join(root, 'missing'), { root }))).toBe('NOT_FOUND');
  });
});
