import crypto from 'node:crypto';
import { S3_SINGLE_PUT_MAX_BYTES } from './config.js';
import type { S3Objects, CallOptions, Pieces } from './client.js';
import { S3StoreError, md5Hex } from './errors.js';
import { sessionKeys, type S3Location } from './location.js';
import { writeJournal, type JournalFile } from './journal.js';

/**
 * Writing one session's spills into a bucket without ever overwriting another result.
 *
 * Ceph 16 honours `If-None-Match: *` on PutObject (one winner among racers) but silently
 * ignores it on CompleteMultipartUpload and CopyObject. So a stem is owned by whoever creates
 * `long_responses/.claims/<stem>` first (a tiny create-only PUT), and only the owner writes the
 * stem's keys: the payload (create-only PUT, or multipart for large ones), the linked form, and
 * last the sidecar, which is the commit marker. A payload without its sidecar is incomplete.
 *
 * The claim holds a token. A writer that finds a claim with its own token (a `spillway sync`
 * that was interrupted and runs again) resumes instead of taking a new name: that is what makes
 * sync idempotent.
 */

export interface ClaimBody {
  v: 1;
  token: string;
  createdAt: string;
}

export type WriteData = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

export class S3SessionWriter {
  readonly keys: ReturnType<typeof sessionKeys>;
  /** Files written and not yet committed, by name: what the stem's journal entry lists. */
  private readonly written = new Map<string, JournalFile>();

  constructor(
    readonly objects: S3Objects,
    readonly location: S3Location,
    readonly session: string,
    /** The writer's clock, for journal keys (tests give writers skewed clocks). */
    readonly clock: () => number = Date.now,
  ) {
    this.keys = sessionKeys(location, session);
  }

  private note(rel: string, size: number, etag: string): number {
    if (!rel.includes('/')) this.written.set(rel, { size, etag });
    return size;
  }

  /** `s3://bucket/<prefix>/<session>/long_responses/<rel>`. */
  url(rel: string): string {
    return this.objects.url(this.keys.file(rel));
  }

  /**
   * Own `stem`: true when this writer now holds it (new claim, or an old claim with the same
   * token), false when another writer does.
   */
  async claim(stem: string, token: string, o: CallOptions = {}): Promise<'new' | 'resumed' | false> {
    const key = this.keys.claim(stem);
    const body: ClaimBody = { v: 1, token, createdAt: new Date().toISOString() };
    const r = await this.objects.putIfAbsent(key, JSON.stringify(body), { ...o, contentType: 'application/json' });
    if (r.created) return 'new';
    const held = await this.objects.get(key, o);
    if (!held) return false; // claims are never deleted by writers: a vanished one was removed by hand
    try {
      return (JSON.parse(held.toString('utf8')) as ClaimBody).token === token ? 'resumed' : false;
    } catch {
      return false;
    }
  }

  /**
   * Write a file of a stem this writer has claimed. Small data: one create-only PUT (the same bytes
   * already there count as written). Large: streamed by multipart (safe only because the stem is
   * claimed). `resumed`: the claim was made by an earlier run, so what is under the key is that
   * run's unfinished work and is written again.
   */
  async putFile(rel: string, data: WriteData, o: CallOptions & { contentType?: string; resumed?: boolean } = {}): Promise<number> {
    const key = this.keys.file(rel);
    const head = await readHead(data, S3_SINGLE_PUT_MAX_BYTES);
    if (head.done) {
      const body = head.bytes;
      const r = await this.objects.putIfAbsent(key, body, o);
      if (r.created) return this.note(rel, body.byteLength, r.etag);
      const h = await this.objects.head(key, o);
      if (h && h.etag === md5Hex(body)) return this.note(rel, body.byteLength, h.etag); // these very bytes: an earlier run got this far
      // Under a resumed claim the key is ours (a payload the failed spill began): write it again.
      if (o.resumed) {
        return this.note(rel, body.byteLength, await this.objects.putOverwrite(key, body, o));
      }
      throw new S3StoreError('EXISTS', `${this.url(rel)} already holds a different object`);
    }
    let total = 0;
    const counted = async function* (): AsyncGenerator<Uint8Array> {
      total += head.bytes.byteLength;
      yield head.bytes;
      for await (const p of head.rest) {
        const b = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
        total += b.byteLength;
        yield b;
      }
    };
    // Multipart overwrites whatever is there: safe only because the stem is claimed by this writer.
    const etag = await this.objects.upload(key, counted() as Pieces, o);
    return this.note(rel, total, etag);
  }

  /**
   * A content-addressed asset: reused when the bucket already holds exactly these bytes (the
   * gateway's MD5 ETag of a single PUT matches ours), rewritten when the key holds anything else
   * (a damaged or foreign object under a name that defines its content).
   */
  async putAsset(fileName: string, bytes: Uint8Array, sha256: string, o: CallOptions & { contentType?: string } = {}): Promise<{ reused: boolean }> {
    const rel = `assets/${fileName}`;
    const key = this.keys.file(rel);
    const md5 = md5Hex(bytes);
    const meta = { sha256 };
    if (bytes.byteLength > S3_SINGLE_PUT_MAX_BYTES) {
      const h = await this.objects.head(key, o);
      if (h && h.size === bytes.byteLength && h.metadata.sha256 === sha256) return { reused: true };
      await this.objects.upload(key, [bytes], { ...o, metadata: meta });
      return { reused: false };
    }
    const r = await this.objects.putIfAbsent(key, bytes, { ...o, metadata: meta });
    if (r.created) return { reused: false };
    const h = await this.objects.head(key, o);
    if (h && h.etag === md5) return { reused: true };
    await this.objects.putOverwrite(key, bytes, { ...o, metadata: meta });
    return { reused: false };
  }

  /** The sidecar: written last, create-only. Its presence is what makes the spill complete. */
  async putSidecar(rel: string, json: string, o: CallOptions & { resumed?: boolean } = {}): Promise<void> {
    const key = this.keys.file(rel);
    const r = await this.objects.putIfAbsent(key, json, { ...o, contentType: 'application/json' });
    if (!r.created) {
      const h = o.resumed ? await this.objects.head(key, o) : null;
      if (!h || h.etag !== md5Hex(json)) throw new S3StoreError('EXISTS', `${this.url(rel)} already exists`);
    }
    // Not awaited: the guard's deadline covers this call, and the spill is committed now. A journal
    // write that is slow or lost costs only latency (flushJournal waits for those in flight).
    const j = this.journal(rel, json);
    inFlight.add(j);
    void j.finally(() => inFlight.delete(j));
  }

  /** The committed stem's journal entry (journal.ts); never throws. */
  private async journal(metaRel: string, json: string): Promise<void> {
    const stem = metaRel.slice(0, -'.meta.json'.length);
    const files: Record<string, JournalFile> = {};
    for (const [name, f] of this.written) {
      if (name.startsWith(stem + '.') && name !== metaRel) {
        files[name] = f;
        this.written.delete(name);
      }
    }
    const bytes = Buffer.from(json, 'utf8');
    files[metaRel] = { size: bytes.length, etag: md5Hex(bytes) };
    await writeJournal(this.objects, this.location, { session: this.session, stem, files, sidecar: json }, { now: this.clock() });
  }
}

/** Journal writes still in flight (each bounded by JOURNAL_WRITE_TIMEOUT_MS, none throws). */
const inFlight = new Set<Promise<void>>();

/** Wait for the journal writes in flight (a CLI before it closes its clients; tests before they poll). */
export async function flushJournal(): Promise<void> {
  while (inFlight.size) await Promise.all([...inFlight]);
}

export function newClaimToken(): string {
  return crypto.randomUUID();
}

/** Up to `max` bytes of `data`; `done` when that was all of it, else the rest still to read. */
async function readHead(data: WriteData, max: number): Promise<{ bytes: Buffer; done: boolean; rest: AsyncIterable<string | Uint8Array> }> {
  if (typeof data === 'string') {
    // A string's UTF-8 length is known without encoding it.
    if (Buffer.byteLength(data, 'utf8') <= max) return { bytes: Buffer.from(data, 'utf8'), done: true, rest: empty() };
    return { bytes: Buffer.alloc(0), done: false, rest: slices(data) };
  }
  if (data instanceof Uint8Array) {
    const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (b.byteLength <= max) return { bytes: b, done: true, rest: empty() };
    return { bytes: Buffer.alloc(0), done: false, rest: single(b) };
  }
  const it = (Symbol.asyncIterator in data ? data[Symbol.asyncIterator]() : (data as Iterable<string | Uint8Array>)[Symbol.iterator]()) as
    | AsyncIterator<string | Uint8Array>
    | Iterator<string | Uint8Array>;
  const got: Buffer[] = [];
  let n = 0;
  for (;;) {
    const r = await it.next();
    if (r.done) return { bytes: Buffer.concat(got, n), done: true, rest: empty() };
    const b = typeof r.value === 'string' ? Buffer.from(r.value, 'utf8') : Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    got.push(b);
    n += b.byteLength;
    if (n > max) {
      const rest = (async function* () {
        for (;;) {
          const x = await it.next();
          if (x.done) return;
          yield x.value;
        }
      })();
      return { bytes: Buffer.concat(got, n), done: false, rest };
    }
  }
}

/** A large string as 4 MiB-ish slices that never cut a surrogate pair. */
async function* slices(s: string, size = 4 * 1024 * 1024): AsyncGenerator<string> {
  for (let i = 0; i < s.length; ) {
    let j = Math.min(s.length, i + size);
    const c = s.charCodeAt(j - 1);
    if (j < s.length && c >= 0xd800 && c <= 0xdbff) j--;
    yield s.slice(i, j);
    i = j;
  }
}

async function* empty(): AsyncGenerator<never> {}
async function* single(b: Buffer): AsyncGenerator<Buffer> {
  yield b;
}
