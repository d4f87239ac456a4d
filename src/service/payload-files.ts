/**
 * A payload's bytes and assets, opened through the path guard: the content (raw, linked, or the
 * text an importer holds), a whole-read capped at MAX_WHOLE_READ_BYTES, and assets after the
 * checks of assets.ts. The files of recently opened payloads are remembered (the viewer reads
 * many windows, the gallery many assets of one payload) until the index reports a change.
 */
import crypto from 'node:crypto';
import type { AssetRef } from '../pipeline/types.js';
import type { SpillIndex } from '../index/index.js';
import { ServiceError, type PayloadDetail } from './contract.js';
import { findListedAsset, openVerifiedAsset, type OpenedAsset } from './assets.js';
import { MAX_WHOLE_READ_BYTES, utf8PrefixLength } from './heavy.js';
import { bufferSource, fileSource, type ByteSource } from './reader.js';
import { isS3Path, type S3Reads } from './s3-read.js';

/** Confines a path the index gave (context.ts: the path guard, or the registered S3 roots). */
type Confine = (p: string, o: { what: string; mustExist?: boolean }) => string;

/** Payloads whose paths and assets are kept in memory between reads. */
const PAYLOAD_FILE_CACHE_ENTRIES = 256;

export function createPayloadFiles(idx: () => Promise<SpillIndex>, confined: Confine, s3: S3Reads) {
  const cache = new Map<string, { path: string; linkedPath?: string; assets: AssetRef[] }>();

  /** Payload detail from the index (callers confine every path in it before opening one). */
  const detailOf = async (id: string): Promise<PayloadDetail> => {
    const d = await (await idx()).getPayload(id);
    if (cache.size >= PAYLOAD_FILE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(id, { path: d.path, linkedPath: d.linkedPath, assets: d.assets });
    return d;
  };
  const filesOf = async (id: string) => cache.get(id) ?? (await detailOf(id));

  /** The content of a payload as a ByteSource factory, confined. */
  const contentOpener = async (id: string, variant: 'raw' | 'linked' | undefined) => {
    const ix = await idx();
    if (variant === 'linked') {
      const d = await filesOf(id);
      if (!d.linkedPath) throw new ServiceError('NOT_FOUND', `payload ${id} has no linked form`);
      const real = confined(d.linkedPath, { what: 'linked payload path' });
      return { open: () => (isS3Path(real) ? s3.open(real) : fileSource(real)), binary: false as boolean | undefined };
    }
    const c = await ix.payloadContent(id);
    if (c.type === 'file') {
      const real = confined(c.path, { what: 'payload path' });
      // An object is read in windows by Range GET; there is no local file to hand the compute worker.
      if (isS3Path(real)) return { open: () => s3.open(real), binary: undefined };
      return { open: () => fileSource(real), binary: undefined, file: real };
    }
    const buf = Buffer.from(c.text, 'utf8');
    const key = `${id}\0${crypto.createHash('sha1').update(buf).digest('hex')}`;
    return { open: async () => bufferSource(key, buf), binary: undefined };
  };

  /** Up to MAX_WHOLE_READ_BYTES of a payload, cut at a character start; a fresh buffer the caller owns. */
  const readWholeBytes = async (open: () => Promise<ByteSource>): Promise<{ bytes: Buffer; totalBytes: number; readBytes: number }> => {
    const src = await open();
    try {
      const n = Math.min(src.size, MAX_WHOLE_READ_BYTES);
      const buf = await src.read(0, n);
      return { bytes: n < src.size ? buf.subarray(0, utf8PrefixLength(buf)) : buf, totalBytes: src.size, readBytes: buf.length };
    } finally {
      await src.close();
    }
  };

  return {
    detailOf,
    contentOpener,
    readWholeBytes,
    async readWholeText(id: string): Promise<{ text: string; totalBytes: number; readBytes: number }> {
      const w = await readWholeBytes((await contentOpener(id, undefined)).open);
      return { text: w.bytes.toString('utf8'), totalBytes: w.totalBytes, readBytes: w.readBytes };
    },
    /** One asset of one payload, opened after the checks of assets.ts. */
    async openAsset(payloadId: string, sha256: string): Promise<OpenedAsset> {
      const d = await filesOf(payloadId);
      const a = findListedAsset(d.assets, payloadId, sha256);
      let payloadReal: string;
      try {
        payloadReal = confined(d.path, { what: 'payload path' });
      } catch (err) {
        if (err instanceof ServiceError) throw new ServiceError(err.code, `payload ${payloadId} is not readable, nor its assets`);
        throw err;
      }
      return isS3Path(payloadReal) ? s3.openAsset(payloadId, payloadReal, a) : openVerifiedAsset(payloadId, payloadReal, a);
    },
    forget: () => cache.clear(),
  };
}
