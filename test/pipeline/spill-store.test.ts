import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  guardLargeResult,
  handleLargeResponse,
  LocalSpillStore,
  nameCandidates,
  readMeta,
  restoreFromStore,
  restorePayload,
  SpillStoreError,
  type NameCandidate,
  type SpillBody,
  type SpillKey,
  type SpillStore,
  type StoreCallOptions,
} from '../../src/pipeline/index.js';
import { fixture, listLong, tmpSession } from './helpers.js';

const WORDS = 'lorem ipsum dolor sit amet, consectetur adipiscing elit\n'.repeat(4000);
const sha = (b: Uint8Array | string) => crypto.createHash('sha256').update(b).digest('hex');

async function bytesOf(body: SpillBody): Promise<Buffer> {
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  const parts: Buffer[] = [];
  for await (const p of body as AsyncIterable<string | Uint8Array>) parts.push(Buffer.from(p as never));
  return Buffer.concat(parts);
}

/**
 * A complete store kept in memory, as an object store would be: create-only puts, verified assets,
 * reads by key. `down` makes every call fail as an unreachable store does; `hang` makes every call
 * wait until its signal fires (or forever, with `ignoreSignal`).
 */
class MemoryStore implements SpillStore {
  readonly objects = new Map<SpillKey, Buffer>();
  down: false | 'all' | 'sidecar' = false;
  hang = false;
  ignoreSignal = false;
  calls = 0;
  constructor(readonly location = 'mem://bucket/session') {}

  describe(key: SpillKey): string {
    return `${this.location}/${key}`;
  }

  private async gate(kind: 'payload' | 'sidecar' | 'asset' | 'read', opts?: StoreCallOptions): Promise<void> {
    this.calls++;
    if (this.down === 'all' || (this.down === 'sidecar' && kind === 'sidecar')) throw new SpillStoreError('UNAVAILABLE', `connect ECONNREFUSED ${this.location}`);
    if (this.hang) {
      await new Promise<void>((_, reject) => {
        if (!this.ignoreSignal) opts?.signal?.addEventListener('abort', () => reject(new SpillStoreError('UNAVAILABLE', 'aborted')), { once: true });
      });
    }
  }

  async putPayload(candidates: Iterable<NameCandidate>, body: () => SpillBody, opts?: StoreCallOptions): Promise<NameCandidate> {
    await this.gate('payload', opts);
    const bytes = await bytesOf(body());
    for (const c of candidates) {
      if (this.objects.has(c.key)) continue;
      this.objects.set(c.key, bytes);
      return c;
    }
    throw new SpillStoreError('FAILED', 'no free name');
  }

  async putSidecar(key: SpillKey, json: string, opts?: StoreCallOptions): Promise<void> {
    await this.gate('sidecar', opts);
    if (this.objects.has(key)) throw new SpillStoreError('EXISTS', `${key} exists`, key);
    this.objects.set(key, Buffer.from(json));
  }

  async movePayload(from: SpillKey, candidates: Iterable<NameCandidate>, opts?: StoreCallOptions): Promise<NameCandidate> {
    await this.gate('payload', opts);
    const bytes = this.objects.get(from);
    if (!bytes) throw new SpillStoreError('NOT_FOUND', from, from);
    for (const c of candidates) {
      if (this.objects.has(c.key)) continue;
      this.objects.set(c.key, bytes);
      this.objects.delete(from);
      return c;
    }
    throw new SpillStoreError('FAILED', 'no free name');
  }

  async putAsset(key: SpillKey, bytes: Uint8Array, sha256: string, opts?: StoreCallOptions): Promise<{ reused: boolean }> {
    await this.gate('asset', opts);
    const have = this.objects.get(key);
    if (have && have.length === bytes.length && sha(have) === sha256) return { reused: true };
    this.objects.set(key, Buffer.from(bytes));
    return { reused: false };
  }

  async read(key: SpillKey, opts?: StoreCallOptions): Promise<Buffer> {
    await this.gate('read', opts);
    const b = this.objects.get(key);
    if (!b) throw new SpillStoreError('NOT_FOUND', `${key} not found`, key);
    return b;
  }

  async stat(key: SpillKey): Promise<{ bytes: number } | null> {
    const b = this.objects.get(key);
    return b ? { bytes: b.length } : null;
  }
}

const imageResult = () => {
  const png = fixture('sample.png');
  return {
    png,
    value: { content: [{ type: 'text', text: 'lorem ipsum dolor sit amet '.repeat(4000) }, { type: 'image', data: png.toString('base64'), mimeType: 'image/png' }] },
  };
};

describe('LocalSpillStore: the local side of the seam', () => {
  it('claims names create-only (EEXIST: the next candidate), refuses taken sidecars, keys outside the session and symlinked folders', async () => {
    const s = tmpSession();
    const store = new LocalSpillStore(s);
    const parts = { time: new Date('2026-11-30T08:00:00.000Z'), tool: 't', inputHash: '00000000' };
    const a = await store.putPayload(nameCandidates(parts, '.txt'), () => 'one');
    fs.writeFileSync(path.join(s, 'long_responses', a.key.split('/')[1]!.replace('_0.', '_1.')), 'someone else');
    const b = await store.putPayload(nameCandidates(parts, '.txt'), () => ['t', Buffer.from('wo')]);
    expect(b.key).not.toBe(a.key);
    expect(fs.readFileSync(store.describe(b.key), 'utf8')).toBe('two');
    expect(store.describe(a.key)).toBe(path.join(s, ...a.key.split('/')));
    await store.putSidecar(`long_responses/${a.stem}.meta.json`, '{}');
    await expect(store.putSidecar(`long_responses/${a.stem}.meta.json`, '{"x":1}')).rejects.toMatchObject({ code: 'EXISTS' });
    expect(fs.readFileSync(path.join(s, 'long_responses', `${a.stem}.meta.json`), 'utf8')).toBe('{}');
    for (const bad of ['../x', 'long_responses/../../x', '/etc/passwd', 'a\\b', 'a//b', '']) {
      await expect(store.read(bad)).rejects.toMatchObject({ code: 'REFUSED' });
    }
    await expect(store.read('long_responses/nope.txt')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await store.stat('long_responses/nope.txt')).toBeNull();
    expect(await store.stat(b.key)).toEqual({ bytes: 3 });
    const elsewhere = tmpSession();
    const s2 = tmpSession();
    fs.symlinkSync(elsewhere, path.join(s2, 'long_responses'));
    await expect(new LocalSpillStore(s2).putPayload(nameCandidates(parts, '.txt'), () => 'x')).rejects.toMatchObject({ code: 'REFUSED' });
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    expect(listLong(s).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('streams an async body, and verifies assets by hash (a truncated copy is rewritten, an intact one reused)', async () => {
    const s = tmpSession();
    const store = new LocalSpillStore(s);
    async function* chunks() {
      for (let i = 0; i < 100; i++) yield `chunk ${i}\n`;
    }
    const c = await store.putPayload(nameCandidates({ time: new Date(), tool: 'stream', inputHash: '00000000' }, '.txt'), () => chunks());
    expect(fs.readFileSync(store.describe(c.key), 'utf8')).toBe(Array.from({ length: 100 }, (_, i) => `chunk ${i}\n`).join(''));
    const png = fixture('sample.png');
    const key = `long_responses/assets/${sha(png).slice(0, 32)}.png`;
    expect(await store.putAsset(key, png, sha(png))).toEqual({ reused: false });
    expect(await store.putAsset(key, png, sha(png))).toEqual({ reused: true });
    fs.truncateSync(store.describe(key), 10);
    expect(await store.putAsset(key, png, sha(png))).toEqual({ reused: false });
    expect(Buffer.from(await store.read(key)).equals(png)).toBe(true);
  });

  it('honours an aborted signal as UNAVAILABLE and writes nothing', async () => {
    const s = tmpSession();
    const ac = new AbortController();
    ac.abort();
    await expect(
      new LocalSpillStore(s).putPayload(nameCandidates({ time: new Date(), tool: 't', inputHash: '00000000' }, '.txt'), () => 'x', { signal: ac.signal }),
    ).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(listLong(s)).toEqual([]);
  });
});

describe('the guard writes through the store it is given', () => {
  it('a non-file store gets payload, assets and sidecar (last) as keys, and restores byte-exact from it', async () => {
    const mem = new MemoryStore();
    const s = tmpSession();
    const { png, value } = imageResult();
    const r = (await guardLargeResult(value, { sessionPath: s, store: mem, toolName: 'shot', limitTokens: 4000 }))!;
    expect(r.action).toBe('spill');
    expect(listLong(s)).toEqual([]); // nothing on the local disk
    const keys = [...mem.objects.keys()];
    expect(keys.at(-1)).toMatch(/^long_responses\/\d{8}T\d{9}Z_shot_[0-9a-f]{8}_0\.meta\.json$/); // the sidecar came last
    expect(keys).toContain(`long_responses/assets/${sha(png).slice(0, 32)}.png`);
    expect(r.payloadPath).toBe(`mem://bucket/session/${keys.find((k) => k.endsWith('.linked.json'))}`);
    expect(r.assets[0]!.path).toBe(`mem://bucket/session/long_responses/assets/${sha(png).slice(0, 32)}.png`);
    expect(r.message).toContain(r.payloadPath!);
    expect(r.message).toContain('in session mem://bucket/session');
    const metaKey = keys.at(-1)!;
    expect((await restoreFromStore(mem, metaKey)).toString()).toBe(JSON.stringify(value));
    // handleLargeResponse takes the same store
    const h = await handleLargeResponse({ text: 'small text', sessionPath: s, store: mem, context: { toolName: 'h' } });
    expect(h.payloadPath).toMatch(/^mem:\/\/bucket\/session\/long_responses\/\d{8}T\d{9}Z_h_[0-9a-f]{8}_0\.txt$/);
    expect(listLong(s)).toEqual([]);
  });
});

describe('fallback when the store is unavailable', () => {
  it('a store that is down: the spill goes to the fallback, the message says where it really went, restore works there', async () => {
    const mem = new MemoryStore();
    mem.down = 'all';
    const local = tmpSession();
    const { value } = imageResult();
    const r = (await guardLargeResult(value, { sessionPath: '/nonexistent', store: mem, fallbackStore: new LocalSpillStore(local), limitTokens: 4000 }))!;
    expect(mem.objects.size).toBe(0);
    expect(r.payloadPath!.startsWith(path.join(local, 'long_responses') + path.sep)).toBe(true);
    expect(r.message).toContain(`Absolute path: ${r.payloadPath}`);
    expect(r.message).toMatch(/The store mem:\/\/bucket\/session was unavailable \(UNAVAILABLE: connect ECONNREFUSED[^)]*\); the result was saved to the fallback \S+ instead\./);
    expect(r.message).toContain(local);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(JSON.stringify(value));
    const meta = await readMeta(r.metaPath!);
    expect(meta.errors?.join('\n')).toMatch(/was unavailable/);
    expect(meta.message).toBe(r.message);
  });

  it('a store that takes the payload but fails on the sidecar: everything is redone on the fallback', async () => {
    const mem = new MemoryStore();
    mem.down = 'sidecar';
    const local = tmpSession();
    const r = (await guardLargeResult(WORDS, { sessionPath: local, store: mem, fallbackStore: new LocalSpillStore(local) }))!;
    expect(r.metaPath).toBeDefined();
    expect(fs.existsSync(r.metaPath!)).toBe(true);
    expect((await restorePayload(r.payloadPath!)).toString()).toBe(WORDS);
    expect(r.message).toMatch(/was unavailable/);
    // the primary holds a payload without its sidecar: incomplete by the layout's rule, never shown as a spill
    expect([...mem.objects.keys()].some((k) => k.endsWith('.meta.json'))).toBe(false);
  });

  it('a store that hangs and ignores its signal is abandoned at the deadline', async () => {
    const mem = new MemoryStore();
    mem.hang = true;
    mem.ignoreSignal = true;
    const local = tmpSession();
    const t0 = Date.now();
    const r = (await guardLargeResult(WORDS, { sessionPath: local, store: mem, fallbackStore: new LocalSpillStore(local), storeTimeoutMs: 300 }))!;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(r.message).toMatch(/timed out after 300 ms/);
    expect(fs.readFileSync(r.payloadPath!, 'utf8')).toBe(WORDS);
  });

  it('no fallback: the model is told the result could not be saved, and why; it never gets the payload', async () => {
    const mem = new MemoryStore();
    mem.down = 'all';
    const r = (await guardLargeResult(WORDS, { sessionPath: tmpSession(), store: mem }))!;
    expect(r.payloadPath).toBeUndefined();
    expect(r.message).toMatch(/could NOT be saved: UNAVAILABLE: connect ECONNREFUSED/);
    expect(r.message.length).toBeLessThan(WORDS.length / 10);
  });

  it('a store error other than UNAVAILABLE does not fall back (a refused folder stays refused)', async () => {
    const s = tmpSession();
    fs.symlinkSync(tmpSession(), path.join(s, 'long_responses'));
    const fallback = tmpSession();
    const r = (await guardLargeResult(WORDS, { sessionPath: s, fallbackStore: new LocalSpillStore(fallback) }))!;
    expect(r.message).toMatch(/could NOT be saved: REFUSED/);
    expect(listLong(fallback)).toEqual([]);
  });
});
