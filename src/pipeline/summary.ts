import crypto from 'node:crypto';
import type { Estimate, SummarizeFn, SummarizeHook, Summarizer, SummaryRun } from './types.js';
import { MAX_SUMMARY_INPUT_TOKENS, MAX_SUMMARY_OUTPUT_TOKENS, SUMMARY_TIMEOUT_MS } from './limits.js';
import { buildSummaryPrompt } from './prompt.js';
import { estimateTokens } from './estimate/index.js';
import { safeCut, safeCutUp, truncate } from './text.js';
import { errMessage } from './values.js';

/**
 * Runs the optional summary hook with a deadline. The deadline holds even when the hook
 * ignores its AbortSignal: the race settles on time and the hook's late answer is dropped.
 */

/** Chars per token assumed when cutting a payload or a summary to a token budget. */
const CHARS_PER_TOKEN_CUT = 4;
/** Share of an over-long payload kept from its head (the rest from its tail). */
const SUMMARY_HEAD_SHARE = 0.75;

export interface SummaryJob {
  /** Payload text (linked form: assets already replaced). */
  text: string;
  toolName?: string;
  toolInput?: unknown;
  focus?: string;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The guard's estimate of exactly `text` (SummaryRequest.estimate). */
  estimate?: Estimate;
}

export function isSummarizer(h: SummarizeHook): h is Summarizer {
  return typeof h === 'object' && h !== null && typeof (h as Summarizer).summarize === 'function';
}

/** Fit a payload into the summarizer's input budget: head and tail, with a note of the cut. */
export function fitSummaryInput(text: string, maxTokens = MAX_SUMMARY_INPUT_TOKENS): string {
  const maxChars = maxTokens * CHARS_PER_TOKEN_CUT;
  if (text.length <= maxChars) {
    const est = estimateTokens(text).tokens;
    if (est <= maxTokens) return text;
  }
  const est = estimateTokens(text.length > 4 * maxChars ? text.slice(0, 4 * maxChars) : text).tokens;
  const sampleLen = Math.min(text.length, 4 * maxChars);
  const charsPerToken = est > 0 ? sampleLen / est : CHARS_PER_TOKEN_CUT;
  const budget = Math.max(1000, Math.floor(maxTokens * charsPerToken * 0.95));
  if (text.length <= budget) return text;
  const head = safeCut(text, Math.floor(budget * SUMMARY_HEAD_SHARE));
  const tail = safeCutUp(text, text.length - (budget - head));
  return `${text.slice(0, head)}\n… [${text.length - head - (text.length - tail)} chars cut to fit the summarizer] …\n${text.slice(tail)}`;
}

class SummaryTimeout extends Error {
  constructor(ms: number) {
    super(`summary timed out after ${ms} ms`);
    this.name = 'SummaryTimeout';
  }
}

type RunBase = Pick<SummaryRun, 'id' | 'createdAt' | 'focus' | 'provider' | 'model'>;

/** Rejects at the deadline or when the caller aborts; aborts `ac` at the deadline so the hook can stop. */
function deadlineFor(job: SummaryJob, timeoutMs: number, ac: AbortController): { deadline: Promise<never>; clear: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      ac.abort(new SummaryTimeout(timeoutMs));
      reject(new SummaryTimeout(timeoutMs));
    }, timeoutMs);
    timer.unref?.();
    if (job.signal?.aborted) reject(new Error('aborted'));
    else job.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
  deadline.catch(() => undefined);
  return { deadline, clear: () => timer && clearTimeout(timer) };
}

/** The answer trimmed; an empty one is an error. */
function summaryOf(answer: unknown): string {
  const summary = typeof answer === 'string' ? answer.trim() : '';
  if (!summary) throw new Error('the summarizer returned an empty summary');
  return summary;
}

/** Longest summary kept, in chars. */
const MAX_SUMMARY_CHARS = MAX_SUMMARY_OUTPUT_TOKENS * CHARS_PER_TOKEN_CUT;

/**
 * A Summarizer gets the whole payload: it windows, chunks (map-reduce) or streams it itself, so the
 * middle of a big result is not lost to a head-and-tail cut.
 */
async function viaSummarizer(hook: Summarizer, job: SummaryJob, base: RunBase, signal: AbortSignal, deadline: Promise<never>, started: number): Promise<SummaryRun> {
  const req = { text: job.text, toolName: job.toolName, toolInput: job.toolInput, focus: job.focus, maxOutputTokens: MAX_SUMMARY_OUTPUT_TOKENS, ...(job.estimate ? { estimate: job.estimate } : {}) };
  const out = await Promise.race([Promise.resolve().then(() => hook.summarize(req, { signal })), deadline]);
  const summary = truncate(summaryOf(out?.summary), MAX_SUMMARY_CHARS);
  return { ...base, ...out, summary, id: base.id, createdAt: base.createdAt, ms: Date.now() - started, status: 'ok' };
}

/** A bare prompt hook has no way to see the input budget: the payload is fitted for it. */
async function viaPrompt(hook: SummarizeFn, job: SummaryJob, base: RunBase, signal: AbortSignal, deadline: Promise<never>, started: number): Promise<SummaryRun> {
  const payload = fitSummaryInput(job.text);
  const prompt = buildSummaryPrompt({ toolName: job.toolName, toolInput: job.toolInput, focus: job.focus, payload });
  const summary = summaryOf(await Promise.race([Promise.resolve().then(() => hook(prompt, { signal })), deadline]));
  return { ...base, summary: truncate(summary, MAX_SUMMARY_CHARS), inputTokens: estimateTokens(prompt).tokens, outputTokens: estimateTokens(summary).tokens, ms: Date.now() - started, status: 'ok' };
}

/** Run the hook once with a deadline. Never throws: a failure or timeout is a run with its status and error. */
export async function runSummary(hook: SummarizeHook, job: SummaryJob): Promise<SummaryRun> {
  const started = Date.now();
  const timeoutMs = job.timeoutMs && job.timeoutMs > 0 ? job.timeoutMs : SUMMARY_TIMEOUT_MS;
  const ac = new AbortController();
  const onAbort = () => ac.abort(job.signal?.reason);
  job.signal?.addEventListener('abort', onAbort, { once: true });
  const base: RunBase = {
    id: crypto.randomUUID(),
    createdAt: new Date(started).toISOString(),
    focus: job.focus,
    provider: isSummarizer(hook) ? hook.provider : 'hook',
    model: 'unknown',
  };
  const { deadline, clear } = deadlineFor(job, timeoutMs, ac);
  try {
    return isSummarizer(hook) ? await viaSummarizer(hook, job, base, ac.signal, deadline, started) : await viaPrompt(hook, job, base, ac.signal, deadline, started);
  } catch (err) {
    const timeout = err instanceof SummaryTimeout;
    return {
      ...base,
      summary: '',
      inputTokens: 0,
      outputTokens: 0,
      ms: Date.now() - started,
      status: timeout ? 'timeout' : 'error',
      error: truncate(errMessage(err), 500),
    };
  } finally {
    clear();
    job.signal?.removeEventListener('abort', onAbort);
    if (!ac.signal.aborted) ac.abort(new Error('summary finished'));
  }
}
