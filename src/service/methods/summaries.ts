/** Summary runs, their scores and their templates: summarize, scoreSummaries, listProviders, listTemplates, saveTemplate, deleteTemplate. */
import crypto from 'node:crypto';
import { appendSummaryRun, MAX_SUMMARY_OUTPUT_TOKENS, metaPathFor, stemTime } from '../../pipeline/index.js';
import type { SummaryOutput, SummaryRun } from '../../pipeline/types.js';
import {
  createSummarizer,
  deleteTemplate as deleteTemplateFile,
  isProviderName,
  listProviders as listSummaryProviders,
  listTemplates as listTemplateFiles,
  ProviderError,
  saveTemplate as saveTemplateFile,
  scoreRuns,
} from '../../summarize/index.js';
import { readBackEvidence } from '../read-back-evidence.js';
import { ServiceError, type PayloadDetail } from '../contract.js';
import { toServiceError, type Handlers, type ServiceContext } from '../context.js';
import { isS3Path } from '../s3-read.js';
import { notReadNote } from '../heavy.js';
import { privatizeFile } from '../private-files.js';
import { errMessage } from '../../pipeline/values.js';

/**
 * Backstop for one summary run. The summarizer enforces its own deadline (SUMMARY_TIMEOUT_MS,
 * retries and map-reduce chunks included); this only guarantees a request can never hang.
 */
export const SUMMARY_BACKSTOP_MS = 10 * 60_000;
/** Summary provider when a request names none: offline, always available. */
export const DEFAULT_SUMMARY_PROVIDER = 'structural';

export type SummaryMethodName = 'summarize' | 'scoreSummaries' | 'listProviders' | 'listTemplates' | 'saveTemplate' | 'deleteTemplate';

/**
 * Payloads longer than this (chars) are not scored by `scoreSummaries`: the anchor pass runs on the
 * service's thread at about 3 MB/s, and a score over part of a payload would call what the rest holds invented.
 */
export const MAX_SCORED_PAYLOAD_CHARS = 4_000_000;

/** The sidecar of a Spillway payload, derived from the payload's own file name (never from the sidecar's content). */
function metaPathOf(d: PayloadDetail): string | undefined {
  if (!d.meta) return undefined;
  try {
    return metaPathFor(d.path);
  } catch {
    return undefined;
  }
}

export function summaryMethods(ctx: ServiceContext): Handlers<SummaryMethodName> {
  const { env, paths } = ctx;

  /** Run the summary; a failure is a run too (status error/timeout), a cancellation is not. */
  const runSummary = async (r: { payloadId: string; focus?: string; provider: string; model?: string; template?: string }, detail: PayloadDetail, signal?: AbortSignal): Promise<SummaryRun> => {
    const { provider } = r;
    const info = listSummaryProviders(env).find((p) => p.name === provider);
    const content = await ctx.contentOpener(r.payloadId, undefined);
    let summarizer;
    try {
      summarizer = createSummarizer({ provider: provider as never, model: r.model, template: r.template, templatesDir: paths.templates, env });
    } catch (err) {
      throw new ServiceError('BAD_REQUEST', (err as Error).message);
    }
    const createdAt = new Date().toISOString();
    const id = `run_${stemTime(new Date())}_${crypto.randomBytes(4).toString('hex')}`;
    const t0 = performance.now();
    const backstop = AbortSignal.timeout(SUMMARY_BACKSTOP_MS);
    const all = signal ? AbortSignal.any([backstop, signal]) : backstop;
    try {
      const fields = {
        toolName: detail.row.tool,
        toolInput: detail.meta?.toolInput ?? detail.source?.toolInput,
        focus: r.focus,
        template: r.template,
        model: r.model,
        maxOutputTokens: MAX_SUMMARY_OUTPUT_TOKENS,
      };
      // The offline summary is CPU work (seconds on 50 MB): off this thread. Providers wait on the network.
      let out: SummaryOutput;
      if (provider === 'structural' && content.file) {
        // The worker reads the file itself: this thread never holds the 50 MB.
        out = await ctx.compute.structuralFile(content.file, fields, { signal: all });
      } else {
        const whole = await ctx.readWholeBytes(content.open);
        const suffix = notReadNote(whole.totalBytes, whole.readBytes);
        out =
          provider === 'structural'
            ? await ctx.compute.structural(whole.bytes, suffix, fields, { signal: all })
            : await summarizer.summarize({ ...fields, text: whole.bytes.toString('utf8') + suffix }, { signal: all });
      }
      return { ...out, id, createdAt, status: 'ok' };
    } catch (err) {
      // The caller gave up, or the service is closing: nothing to record, the run never finished.
      if (signal?.aborted) throw new ServiceError('UNAVAILABLE', 'the summary was cancelled');
      if (ctx.isClosed()) throw new ServiceError('UNAVAILABLE', 'the service is closed');
      const timedOut = (err instanceof ProviderError && err.kind === 'timeout') || backstop.aborted;
      return {
        summary: '',
        provider,
        model: r.model ?? info?.defaultModel ?? provider,
        ...(r.template ? { template: r.template } : {}),
        ...(r.focus ? { focus: r.focus } : {}),
        inputTokens: 0,
        outputTokens: 0,
        ms: Math.round(performance.now() - t0),
        id,
        createdAt,
        status: timedOut ? 'timeout' : 'error',
        error: errMessage(err),
      };
    }
  };

  return {
    async summarize(r, call) {
      const index = await ctx.idx();
      const provider = r.provider ?? DEFAULT_SUMMARY_PROVIDER;
      if (!isProviderName(provider)) throw new ServiceError('BAD_REQUEST', `unknown provider ${JSON.stringify(provider)}`);
      const info = listSummaryProviders(env).find((p) => p.name === provider);
      if (info && !info.available) throw new ServiceError('UNAVAILABLE', `${provider} is not available: ${info.reason ?? 'not configured'}`);
      const detail = await index.getPayload(r.payloadId);
      const run = await runSummary({ ...r, provider }, detail, call?.signal);
      // The sidecar is the record (Spillway sessions); imported read-only sessions have none, so
      // their runs go to app data. Either way the index can be rebuilt without losing a run.
      // A bucket is never written to (S3 roots are read-only): runs on its payloads go to app data too.
      const metaPath = detail.meta && detail.path && !detail.readOnly && !isS3Path(detail.path) ? metaPathOf(detail) : undefined;
      if (metaPath) {
        try {
          ctx.guard.resolve(metaPath, { what: 'meta path' });
          await appendSummaryRun(metaPath, run);
        } catch (err) {
          ctx.warn(`could not append the run to ${metaPath}: ${(err as Error).message}`);
        }
      } else {
        await ctx.keepImportedRun(r.payloadId, run).catch((err: unknown) => ctx.warn(`could not keep the run for ${r.payloadId}: ${(err as Error).message}`));
      }
      index.addSummaryRun(r.payloadId, run);
      ctx.emitter.emit('onDidSummarize', { payloadId: r.payloadId, run });
      return run;
    },

    async scoreSummaries({ payloadId, focus }) {
      const index = await ctx.idx();
      const detail = await index.getPayload(payloadId);
      const readBacks = detail.readBacks?.length ?? 0;
      if (detail.summaryRuns.length === 0) return { runs: [], readBacks, payloadChars: 0 };
      const whole = await ctx.readWholeText(payloadId);
      const tooBig = whole.readBytes < whole.totalBytes || whole.text.length > MAX_SCORED_PAYLOAD_CHARS;
      if (detail.binary || tooBig) {
        const note = detail.binary ? 'a binary payload has no anchors to score' : `the payload is over ${MAX_SCORED_PAYLOAD_CHARS.toLocaleString('en-US')} chars: not scored here`;
        return { runs: detail.summaryRuns.map((r) => ({ runId: r.id, note })), readBacks, payloadChars: whole.text.length, note };
      }
      const ok = detail.summaryRuns.filter((r) => r.status === 'ok' || r.status === 'fallback');
      const scored = scoreRuns({
        payload: whole.text,
        // The payload's one figure (the header's), so compression divides by the number shown everywhere.
        payloadTokens: detail.figure.tokens,
        profile: detail.figure.profile,
        readBacks: readBackEvidence(detail.readBacks, whole.text),
        runs: ok.map((r) => ({ summary: r.summary, focus: focus ?? r.focus, run: r })),
      });
      const byId = new Map(ok.map((r, i) => [r.id, scored[i]!]));
      return {
        runs: detail.summaryRuns.map((r) => {
          const scores = byId.get(r.id);
          return scores ? { runId: r.id, scores } : { runId: r.id, note: `the run ended ${r.status}: no summary to score` };
        }),
        readBacks,
        payloadChars: whole.text.length,
      };
    },

    async listProviders() {
      return listSummaryProviders(env);
    },

    async listTemplates() {
      await ctx.idx();
      return listTemplateFiles(paths.templates);
    },

    async saveTemplate({ name, body }) {
      await ctx.idx();
      try {
        const saved = saveTemplateFile(paths.templates, name, body);
        // Only the file just written: templates the user wrote by hand there keep their mode.
        if (saved.path) await privatizeFile(saved.path);
        return saved;
      } catch (err) {
        throw toServiceError(err);
      }
    },

    async deleteTemplate({ name }) {
      await ctx.idx();
      try {
        deleteTemplateFile(paths.templates, name);
      } catch (err) {
        throw toServiceError(err);
      }
      return { ok: true as const };
    },
  };
}
