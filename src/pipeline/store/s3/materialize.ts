import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { LONG_RESPONSES_DIR, META_SUFFIX, classifyLongResponseFile, isSafeKey } from '../../layout.js';
import { isS3Url } from './location.js';
import type { S3SpillStore } from './spill-store.js';

/**
 * A spilled object of one bucket session as a local file, for tools that work on files (the MCP
 * drill-down: read, grep, query). Only keys of that session's `long_responses/` are fetched; the
 * copy is streamed to a private cache folder (never held in memory) and reused while the object's
 * ETag and size are the same.
 */
export class S3Materializer {
  private readonly cached = new Map<string, { etag: string; size: number; file: string }>();

  constructor(
    readonly store: S3SpillStore,
    private readonly cacheDir: () => Promise<string>,
  ) {}

  /** The session key a reference names: its URL under this session, or a file name in long_responses/. Null when it names neither. */
  keyOf(ref: string): string | null {
    let rel: string;
    if (isS3Url(ref)) {
      const base = `${this.store.location}/${LONG_RESPONSES_DIR}/`;
      if (!ref.startsWith(base)) return null;
      rel = ref.slice(base.length);
    } else {
      rel = ref.startsWith(`${LONG_RESPONSES_DIR}/`) ? ref.slice(LONG_RESPONSES_DIR.length + 1) : ref;
    }
    if (!isSafeKey(rel) || rel.includes('/') || !classifyLongResponseFile(rel)) return null;
    return `${LONG_RESPONSES_DIR}/${rel}`;
  }

  /** A local copy of the object `ref` names (its payload when it names the sidecar); null when there is no such object. */
  async fetch(ref: string): Promise<string | null> {
    let key = this.keyOf(ref);
    if (!key) return null;
    if (key.endsWith(META_SUFFIX)) {
      try {
        const meta = JSON.parse(Buffer.from(await this.store.read(key)).toString('utf8')) as { payloadFile?: unknown };
        const k = typeof meta.payloadFile === 'string' ? this.keyOf(meta.payloadFile) : null;
        if (k && !k.endsWith(META_SUFFIX)) key = k;
      } catch {
        /* the sidecar itself */
      }
    }
    const objects = await this.store.objects();
    const fullKey = this.store.fullKey(key);
    const head = await objects.head(fullKey);
    if (!head) return null;
    const hit = this.cached.get(key);
    if (hit && hit.etag === head.etag && hit.size === head.size && fs.existsSync(hit.file)) return hit.file;
    const dir = await this.cacheDir();
    const file = path.join(dir, crypto.createHash('sha256').update(fullKey).digest('hex').slice(0, 24) + path.extname(key));
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    const { stream } = await objects.getStream(fullKey);
    try {
      await pipeline(stream, fs.createWriteStream(tmp, { mode: 0o600 }));
      await fs.promises.rename(tmp, file);
    } catch (err) {
      await fs.promises.unlink(tmp).catch(() => undefined);
      throw err;
    }
    this.cached.set(key, { etag: head.etag, size: head.size, file });
    return file;
  }
}
