/** Sessions and payloads: listSessions, listPayloads, getPayload, readPayload, readAsset, revealPath. */
import type { ReadAssetResponse, ReadPayloadResponse, SessionInfo } from '../contract.js';
import type { Handlers, ServiceContext } from '../context.js';
import { MAX_ASSET_INLINE_BYTES } from '../validate.js';

/** readAsset returns base64 up to this size unless the request asks for less (or up to MAX_ASSET_INLINE_BYTES). */
export const DEFAULT_ASSET_INLINE_BYTES = 8 * 1024 * 1024;

export type PayloadMethodName = 'listSessions' | 'listPayloads' | 'getPayload' | 'readPayload' | 'readAsset' | 'revealPath';

export function payloadMethods(ctx: ServiceContext): Handlers<PayloadMethodName> {
  const decorateSession = (s: SessionInfo): SessionInfo => (ctx.isScratch(s.path) ? { ...s, kind: 'scratch' } : s);

  return {
    async listSessions(r) {
      return (await ctx.idx()).listSessions(r).map(decorateSession);
    },

    async listPayloads(r) {
      return (await ctx.idx()).listPayloads(r);
    },

    async getPayload({ id }) {
      const d = await ctx.detailOf(id);
      // The detail names files; check them so a sidecar cannot point the UI outside the roots.
      ctx.confined(d.path, { what: 'payload path', mustExist: false });
      if (d.linkedPath) ctx.confined(d.linkedPath, { what: 'linked payload path', mustExist: false });
      return d;
    },

    async readPayload(r) {
      const { open, binary } = await ctx.contentOpener(r.id, r.variant);
      const w = await ctx.reader.read(open, { start: r.start, end: r.end, startLine: r.startLine, lineCount: r.lineCount }, binary === undefined ? {} : { binary });
      const res: ReadPayloadResponse = {
        text: w.text,
        start: w.start,
        end: w.end,
        totalBytes: w.totalBytes,
        totalLines: w.totalLines,
        totalLinesExact: w.totalLinesExact,
        binary: w.binary,
      };
      if (w.startLine !== undefined) res.startLine = w.startLine;
      if (w.lineCount !== undefined) res.lineCount = w.lineCount;
      if (w.hex !== undefined) res.hex = w.hex;
      return res;
    },

    async readAsset(r) {
      const a = await ctx.openAsset(r.payloadId, r.sha256);
      const res: ReadAssetResponse = { mimeType: a.mimeType, bytes: a.bytes, sha256: a.sha256, path: a.path };
      if (a.bytes <= Math.min(r.maxBytes ?? DEFAULT_ASSET_INLINE_BYTES, MAX_ASSET_INLINE_BYTES)) {
        res.base64 = (await a.read()).toString('base64');
      } else await a.close();
      return res;
    },

    async revealPath(r) {
      if (r.sha256) {
        const a = await ctx.openAsset(r.payloadId, r.sha256);
        await a.close();
        return { path: a.path };
      }
      const d = await ctx.detailOf(r.payloadId);
      return { path: ctx.confined(d.path, { what: 'payload path' }) };
    },
  };
}
