import { ASSETS_DIR, LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile, isSafeKey, parseStem } from '../../layout.js';
import { SpillStoreError, type NameCandidate, type SpillBody, type SpillKey, type SpillStore, type StoreCallOptions } from '../seam.js';
import type { LocalSpillStore } from '../local.js';
import type { S3Objects } from './client.js';
import { resolveS3Settings, s3EnvOf, type S3Settings, type S3StoreOptions } from './config.js';
import { S3StoreError } from './errors.js';
import { formatS3Url, parseS3Url, sessionKeys, sessionNameFor, type S3Location } from './location.js';
import { s3State } from './state.js';
import { queuePending } from './sync.js';
import type { S3SessionWriter } from './writer.js';

/**
 * The storage seam (spill-store.ts) over a bucket: `s3://bucket/prefix` + a session name give
 * keys `<prefix>/<session>/long_responses/…`. Constructed without the SDK (it loads on the first
 * call), so the guard can pick this store from SPILLWAY_STORE and still pass small results
 * through without loading it.
 *
 * - A payload's stem is claimed first (`long_responses/.claims/<stem>`, a create-only PUT):
 *   Ceph 16 ignores If-None-Match on multipart uploads and copies, so the claim is what keeps two
 *   writers apart. Then the payload (one create-only PUT, or multipart when large), then the
 *   sidecar, create-only, last: the commit marker.
 * - Every failure is a SpillStoreError; the store being down, slow or refusing the credentials is
 *   UNAVAILABLE, so the guard hands the spill to the fallback. The store is then skipped for
 *   S3_DOWN_BACKOFF_MS (a burst of spills does not wait out one deadline each); that health, and
 *   the claims failed spills leave, are the process's state, kept in state.ts.
 * - {@link S3SpillStore.fallback} is the local session folder, wrapped so that a spill committed
 *   there is queued for `spillway sync`, with the stem this store had claimed for it.
 */

/** Claims are kept per store, session and stem base (time, tool, input hash). */
const baseOf = (stem: string) => stem.replace(/_\d+$/, '');

export class S3SpillStore implements SpillStore {
  readonly location: string;
  readonly settings: S3Settings;
  readonly storeUrl: string;
  /** Which store's health this is (the same URL on another endpoint is another store). */
  readonly healthKey: string;
  private writerP?: Promise<S3SessionWriter>;
  /** Claim tokens of payloads written and not yet committed, by stem. */
  private readonly tokens = new Map<string, string>();

  constructor(
    url: string | S3Location,
    /** The session's name in the bucket (see sessionNameFor). */
    readonly session: string,
    private readonly opts: S3StoreOptions = {},
  ) {
    this.settings = resolveS3Settings(url, opts);
    this.storeUrl = formatS3Url(this.settings.location);
    this.healthKey = `${this.settings.endpoint ?? this.settings.region} ${this.storeUrl}`;
    this.location = formatS3Url(this.settings.location, sessionKeys(this.settings.location, session).session);
  }

  /** The store for a local session folder: same session name in the bucket as on disk. */
  static forSession(url: string, sessionPath: string, opts: S3StoreOptions = {}): S3SpillStore {
    return new S3SpillStore(url, sessionNameFor(sessionPath), opts);
  }

  /**
   * The store and sidecar key of one spilled object, from its URL
   * (`s3://bucket/<prefix>/<session>/long_responses/<stem>.<ext>`, its sidecar or linked form).
   */
  static locate(url: string, opts: S3StoreOptions = {}): { store: S3SpillStore; metaKey: SpillKey } {
    const loc = parseS3Url(url);
    const segs = loc.prefix.split('/');
    const at = segs.lastIndexOf(LONG_RESPONSES_DIR);
    const c = at >= 1 && at === segs.length - 2 ? classifyLongResponseFile(segs[at + 1]!) : null;
    if (!c) throw new SpillStoreError('REFUSED', `not a spilled object (expected s3://bucket/<prefix>/<session>/${LONG_RESPONSES_DIR}/<stem>.<ext>): ${formatS3Url(loc)}`);
    const store = new S3SpillStore({ bucket: loc.bucket, prefix: segs.slice(0, at - 1).join('/') }, segs[at - 1]!, opts);
    return { store, metaKey: `${LONG_RESPONSES_DIR}/${c.stem}${META_SUFFIX}` };
  }

  describe(key: SpillKey): string {
    return `${this.location}/${key}`;
  }

  /** The bucket's calls (loads the SDK on first use). */
  async objects(): Promise<S3Objects> {
    return (await this.writer()).objects;
  }

  /** The full object key of a session key. */
  fullKey(key: SpillKey): string {
    return sessionKeys(this.settings.location, this.session).file(this.rel(key));
  }

  private writer(): Promise<S3SessionWriter> {
    this.writerP ??= (async () => {
      const [objects, { S3SessionWriter }] = await Promise.all([s3State.buckets.open(this.settings), import('./writer.js')]);
      return new S3SessionWriter(objects, this.settings.location, this.session, this.opts.clock);
    })();
    this.writerP.catch(() => (this.writerP = undefined));
    return this.writerP;
  }

  /** A file of `long_responses/`: its name there (`x.txt` or `assets/x.png`), or REFUSED. */
  private rel(key: SpillKey): string {
    const segs = isSafeKey(key) ? key.split('/') : [];
    const ok = segs[0] === LONG_RESPONSES_DIR && (segs.length === 2 || (segs.length === 3 && segs[1] === ASSETS_DIR)) && !segs.some((s) => s.startsWith('.'));
    if (!ok) throw new SpillStoreError('REFUSED', `not a key of the session layout: ${JSON.stringify(key)}`, key);
    return segs.slice(1).join('/');
  }

  /** Run one store operation; S3 errors become SpillStoreErrors, and a store found unusable is skipped for a while. */
  private async op<T>(key: SpillKey | undefined, fn: (w: S3SessionWriter) => Promise<T>): Promise<T> {
    const skip = s3State.health.downReason(this.healthKey);
    if (skip) throw new SpillStoreError('UNAVAILABLE', `${this.storeUrl} is unavailable: ${skip}`, key);
    try {
      return await fn(await this.writer());
    } catch (err) {
      if (err instanceof SpillStoreError) throw err;
      if (err instanceof S3StoreError) {
        const code = err.code === 'EXISTS' ? 'EXISTS' : err.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'UNAVAILABLE';
        if (code === 'UNAVAILABLE') s3State.health.markDown(this.healthKey, err.message);
        throw new SpillStoreError(code, err.message, key);
      }
      // The SDK failing to load or to sign (no credentials found): the store cannot be used now.
      const msg = (err as Error)?.message ?? String(err);
      s3State.health.markDown(this.healthKey, msg);
      throw new SpillStoreError('UNAVAILABLE', `${this.storeUrl}: ${msg}`.slice(0, 300), key);
    }
  }

  async putPayload(candidates: Iterable<NameCandidate>, body: () => SpillBody, o: StoreCallOptions = {}): Promise<NameCandidate> {
    return this.op(undefined, async (w) => {
      const token = (await import('./writer.js')).newClaimToken();
      for (const c of candidates) {
        const rel = this.rel(c.key);
        if (!(await w.claim(c.stem, token, o))) continue;
        try {
          await w.putFile(rel, body(), o);
        } catch (err) {
          // The stem is ours but the payload did not make it: sync can resume the claim.
          this.abandon(c.stem, token);
          throw err;
        }
        this.tokens.set(c.stem, token);
        return c;
      }
      throw new SpillStoreError('FAILED', 'no free name');
    });
  }

  async putSidecar(key: SpillKey, json: string, o: StoreCallOptions = {}): Promise<void> {
    const rel = this.rel(key);
    const stem = rel.slice(0, -META_SUFFIX.length);
    const token = this.tokens.get(stem);
    this.tokens.delete(stem);
    try {
      await this.op(key, (w) => w.putSidecar(rel, json, o));
    } catch (err) {
      // The sidecar may even have landed (an answer lost on the way back): sync resumes this
      // claim, and finds it, instead of uploading the spill a second time under another name.
      if (token) this.abandon(stem, token);
      throw err;
    }
    s3State.health.markUp(this.healthKey);
  }

  private abandon(stem: string, token: string): void {
    s3State.claims.leave(`${this.storeUrl}\n${this.session}\n${baseOf(stem)}`, { stem, token });
  }

  /** Only after a sidecar name was taken by a writer that did not claim the stem (claims make this rare). */
  async movePayload(from: SpillKey, candidates: Iterable<NameCandidate>, o: StoreCallOptions = {}): Promise<NameCandidate> {
    const fromRel = this.rel(from);
    return this.op(from, async (w) => {
      const token = (await import('./writer.js')).newClaimToken();
      for (const c of candidates) {
        const rel = this.rel(c.key);
        if (!(await w.claim(c.stem, token, o))) continue;
        const head = await w.objects.head(w.keys.file(fromRel), o);
        if (!head) throw new SpillStoreError('NOT_FOUND', `${this.describe(from)} is gone`, from);
        const { stream } = await w.objects.getStream(w.keys.file(fromRel), undefined, o);
        await w.putFile(rel, stream as AsyncIterable<Uint8Array>, o);
        await w.objects.deleteKeys([w.keys.file(fromRel)], o);
        this.tokens.set(c.stem, token);
        return c;
      }
      throw new SpillStoreError('FAILED', 'no free name');
    });
  }

  async putAsset(key: SpillKey, bytes: Uint8Array, sha256: string, o: StoreCallOptions = {}): Promise<{ reused: boolean }> {
    const rel = this.rel(key);
    if (!rel.startsWith(`${ASSETS_DIR}/`)) throw new SpillStoreError('REFUSED', `not an asset key: ${key}`, key);
    return this.op(key, (w) => w.putAsset(rel.slice(ASSETS_DIR.length + 1), bytes, sha256, o));
  }

  async read(key: SpillKey, o: StoreCallOptions = {}): Promise<Uint8Array> {
    const rel = this.rel(key);
    const b = await this.op(key, (w) => w.objects.get(w.keys.file(rel), o));
    if (!b) throw new SpillStoreError('NOT_FOUND', `${this.describe(key)} does not exist`, key);
    return b;
  }

  async stat(key: SpillKey, o: StoreCallOptions = {}): Promise<{ bytes: number } | null> {
    const rel = this.rel(key);
    const h = await this.op(key, (w) => w.objects.head(w.keys.file(rel), o));
    return h ? { bytes: h.size } : null;
  }

  /**
   * The local session folder as the fallback, wrapped: a spill committed there (its sidecar
   * written) is queued for `spillway sync`, with this store's claim for it when it had one. `env`
   * says where the queue is (SPILLWAY_HOME); none, the same variables as the bucket's settings (s3EnvOf).
   */
  fallback(local: LocalSpillStore, env: NodeJS.ProcessEnv | undefined): SpillStore {
    const store = this;
    return {
      location: local.location,
      describe: (k) => local.describe(k),
      putPayload: (c, b, o) => local.putPayload(c, b, o),
      movePayload: (f, c, o) => local.movePayload(f, c, o),
      putAsset: (k, b, s, o) => local.putAsset(k, b, s, o),
      read: (k, o) => local.read(k, o),
      stat: (k) => local.stat(k),
      async putSidecar(key, json, o) {
        await local.putSidecar(key, json, o);
        const stem = key.slice(LONG_RESPONSES_DIR.length + 1, -META_SUFFIX.length);
        const claim = s3State.claims.take(`${store.storeUrl}\n${store.session}\n${baseOf(stem)}`);
        try {
          await queuePending(
            {
              v: 1,
              store: store.storeUrl,
              session: local.location,
              stem,
              remoteSession: store.session,
              ...(claim && parseStem(claim.stem) ? { remoteStem: claim.stem, token: claim.token } : {}),
              reason: s3State.health.downReason(store.healthKey) ?? 'the store was unavailable',
              at: new Date().toISOString(),
            },
            s3EnvOf(env),
          );
        } catch {
          // The spill is saved and the message says where; `spillway sync --session` still finds it.
        }
      },
    };
  }
}
