/** Sizes and decisions: estimate, analyze, limitTuner, wasteReport; the evidence for rules: toolEvidence, compareSessions. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { claudeCorrectionFromEnv, DEFAULT_PROFILE, UntrustedFileError, isInside, readUntrusted, resolveLimit, sanitizeToolName, stemTime } from '../../pipeline/index.js';
import { ServiceError, type AnalyzeResponse, type Profile } from '../contract.js';
import type { Handlers, ServiceContext } from '../context.js';
import { MAX_WHOLE_READ_BYTES, estimateText, readHead, utf8Prefix, type AnalyzeContentResult } from '../heavy.js';
import { checkPathText } from '../paths.js';
import { mkdirPrivateNew, privatizeTree } from '../private-files.js';
import { MAX_ANALYZE_BYTES } from '../validate.js';

export type AnalysisMethodName = 'estimate' | 'analyze' | 'limitTuner' | 'wasteReport' | 'toolEvidence' | 'compareSessions';

/** A scratch session folder name: sortable, readable, unique. */
function scratchSessionName(name: string, now: Date): string {
  return `${stemTime(now)}_${sanitizeToolName(name).slice(0, 40)}_${crypto.randomBytes(3).toString('hex')}`;
}

export function analysisMethods(ctx: ServiceContext): Handlers<AnalysisMethodName> {
  /** Index the scratch session an analysis wrote, and find its payload, so the viewer can open it. */
  const indexScratch = async (sessionPath: string): Promise<{ payloadId?: string; sessionId?: string }> => {
    const index = await ctx.idx();
    try {
      const scratchRoot = index.listRoots().find((x) => isInside(x.path, sessionPath));
      await index.scan({ rootId: scratchRoot?.id, scopes: [sessionPath] });
      const session = index.listSessions({ rootId: scratchRoot?.id }).find((s) => path.resolve(s.path) === path.resolve(sessionPath));
      if (!session) return {};
      return { sessionId: session.id, payloadId: index.listPayloads({ sessionId: session.id, limit: 10 }).rows[0]?.id };
    } catch (err) {
      ctx.warn(`indexing the scratch analysis failed: ${(err as Error).message}`);
      return {};
    }
  };

  const payloadProfile = async (id: string): Promise<Profile | undefined> => {
    try {
      return (await (await ctx.idx()).getPayload(id)).figure.profile;
    } catch {
      return undefined; // an unknown id fails below, with the read's own error
    }
  };

  return {
    async estimate(r) {
      // A payload's estimates default to the profile its own figure was counted with (the guard
      // counts for the client's model), so the panel's numbers and the listed figure agree.
      const profile = r.profile ?? (r.payloadId !== undefined ? await payloadProfile(r.payloadId) : undefined) ?? DEFAULT_PROFILE;
      let text: string;
      let bytes: number;
      let scale = 1;
      if (r.text !== undefined) {
        text = r.text;
        bytes = Buffer.byteLength(text, 'utf8');
      } else if (r.path !== undefined) {
        const real = ctx.guard.resolve(r.path, { what: 'path' });
        const { buf, size } = await readHead(real, MAX_WHOLE_READ_BYTES, { hardLinks: ctx.guard.isPickedFile(real) ? 'allow' : 'refuse' });
        text = buf.length < size ? utf8Prefix(buf) : buf.toString('utf8');
        bytes = size;
        if (buf.length < size && buf.length > 0) scale = size / buf.length;
      } else {
        const whole = await ctx.readWholeText(r.payloadId!);
        text = whole.text;
        bytes = whole.totalBytes;
        if (whole.readBytes < whole.totalBytes && whole.readBytes > 0) scale = whole.totalBytes / whole.readBytes;
      }
      const est = await estimateText(text, profile, r.exact ?? false, scale, claudeCorrectionFromEnv(ctx.env));
      return { ...est, bytes };
    },

    async analyze(r, call) {
      await ctx.idx();
      let content: Buffer;
      if (r.path !== undefined) {
        checkPathText(r.path);
        if (!path.isAbsolute(r.path)) throw new ServiceError('BAD_REQUEST', 'a dropped file path must be absolute');
        // Only a root's file, or one the desktop shell saw the user drop or pick (allowDroppedFile).
        const real = ctx.guard.resolve(r.path, { what: 'path' });
        // Read only: the user's file is never written, renamed or touched; opened the one safe way (safe-open.ts).
        content = await readUntrusted(real, { root: '/', hardLinks: ctx.guard.isPickedFile(real) ? 'allow' : 'refuse', maxBytes: MAX_ANALYZE_BYTES }).catch((err: unknown) => {
          if (err instanceof UntrustedFileError && err.code === 'TOO_BIG') throw new ServiceError('BAD_REQUEST', `file is larger than ${MAX_ANALYZE_BYTES} bytes; index its folder as a root instead`);
          if (err instanceof UntrustedFileError && err.code !== 'NOT_FOUND') throw new ServiceError('BAD_REQUEST', err.message);
          throw err;
        });
      } else if (r.base64 !== undefined) {
        content = Buffer.from(r.base64.replace(/\s+/g, ''), r.base64.includes('-') || r.base64.includes('_') ? 'base64url' : 'base64');
        if (content.length > MAX_ANALYZE_BYTES) throw new ServiceError('BAD_REQUEST', `content is larger than ${MAX_ANALYZE_BYTES} bytes`);
      } else {
        content = Buffer.from(r.text!, 'utf8');
      }
      const profile = r.profile ?? DEFAULT_PROFILE;
      const limitTokens = resolveLimit({ limitTokens: r.limitTokens, contextWindowTokens: r.contextWindowTokens });
      const bytes = content.length;
      const sessionPath = path.join(ctx.paths.scratch, scratchSessionName(r.name, new Date()));
      let core: AnalyzeContentResult;
      // A copy of a private file stays private: the folder is new, ours, and 0700 before anything lands in it.
      // Made outside the try: a name that was taken is not ours to remove.
      await mkdirPrivateNew(sessionPath);
      try {
        // Detection, estimates, the guard and the scratch save run off this thread for big drops.
        core = await ctx.compute.analyze(content, { name: r.name, sessionPath, limitTokens, profile, claudeCorrection: claudeCorrectionFromEnv(ctx.env) }, call);
        await privatizeTree(sessionPath);
      } catch (err) {
        // A cancelled or failed analysis leaves no half-written scratch session behind.
        await fs.promises.rm(sessionPath, { recursive: true, force: true }).catch(() => undefined);
        throw err;
      }
      const ids = core.payloadPath ? await indexScratch(sessionPath) : {};
      const res: AnalyzeResponse = {
        name: r.name,
        bytes,
        mimeType: core.mimeType,
        kind: core.kind,
        assets: core.assets,
        estimate: core.estimate,
        decision: core.decision,
      };
      if (ids.payloadId) res.payloadId = ids.payloadId;
      if (ids.sessionId) res.sessionId = ids.sessionId;
      return res;
    },

    async limitTuner(r) {
      return (await ctx.timelines()).limitTunerData({ ...r, limitTokens: resolveLimit({ limitTokens: r.limitTokens, contextWindowTokens: r.contextWindowTokens }) });
    },

    async wasteReport(r) {
      return (await ctx.timelines()).wasteReport({ ...r, limitTokens: r.limitTokens ?? resolveLimit({}) });
    },

    async toolEvidence(r) {
      return (await ctx.idx()).toolEvidence(r);
    },

    async compareSessions(r) {
      return (await ctx.idx()).compareSessions(r);
    },
  };
}
