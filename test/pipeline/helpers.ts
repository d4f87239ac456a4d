import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const FIXTURES = path.join(import.meta.dirname, 'fixtures');
export const fixture = (name: string): Buffer => fs.readFileSync(path.join(FIXTURES, name));

export function tmpSession(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-'));
}

export function listLong(session: string): string[] {
  const dir = path.join(session, 'long_responses');
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f !== 'assets').sort() : [];
}

/** A deterministic pseudo-random buffer (xorshift), incompressible like real media. */
export function randomBytes(n: number, seed = 1): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}
