import { appPaths } from '../pipeline/config.js';
import { estimateTokens } from '../pipeline/estimate/index.js';
import { MAX_SUMMARY_INPUT_TOKENS, MAX_SUMMARY_OUTPUT_TOKENS, SUMMARY_TIMEOUT_MS } from '../pipeline/limits.js';
import type { Summarizer, SummaryOutput, SummaryRequest } from '../pipeline/types.js';
import { focusTerms, matchMask, popcount } from './focus.js';
import {
  MAX_PROVIDER_RESPONSE_BYTES,
  MAX_SUMMARY_CHUNKS,
  PROVIDER_MAX_RETRIES,
  SUMMARY_CHUNK_CONCURRENCY,
} from './limits.js';
import { renderPrompt } from './prompt.js';
import { ANTHROPIC_DEFAULT_MODEL, ANTHROPIC_MODELS, anthropicComplete } from './providers/anthropic.js';
import { ProviderError, withRetries } from './providers/http.js';
import { OPENAI_DEFAULT_MODEL, OPENAI_MODELS, openaiComplete } from './providers/openai.js';
import { LOCAL_DEFAULT_BASE_URL, localUnavailable, probeLocal } from './providers/local.js';
import type { Completion, CompletionRequest } from './providers/types.js';
import { detectTextKind } from '../pipeline/detect.js';
import { estimateLargeTokens, structuralSummary } from './structural/index.js';
import { mcpContentText } from './mcp.js';
import { DEFAULT_TEMPLATE, loadTemplate } from './templates.js';
import { PROVIDER_NAMES, type Pricing, type ProviderInfo, type ProviderName, type SummarizerOptions } from './types.js';

export const DEFAULT_MODELS: Record<ProviderName, string> = {
  structural: 'structural',
  anthropic: ANTHROPIC_DEFAULT_MODEL,
  openai: OPENAI_DEFAULT_MODEL,
  // The server's first listed model unless SPILLWAY_LOCAL_MODEL or --model names one.
  local: '',
};

/**
 * Published list prices, dollars per million tokens, for cost per run. Unknown models get no cost (pass `pricing`).
 * Every default model has one (a test holds that): Anthropic's model pages (Haiku 5.5: $0.10/$0.50 up to a
 * 100,000-token prompt, $0.50/$2.50 over it; Sonnet 5.5 $2/$10; Opus 5.5 $4/$20), OpenAI's pricing page for the rest.
 */
export const PRICING: Readonly<Record<string, Pricing>> = {
  'claude-haiku-5-5': { inputPerMTok: 0.1, outputPerMTok: 0.5, longPrompt: { overTokens: 100_000, inputPerMTok: 0.5, outputPerMTok: 2.5 } },
  'claude-sonnet-5-5': { inputPerMTok: 2, outputPerMTok: 10 },
  'claude-opus-5-5': { inputPerMTok: 4, outputPerMTok: 20 },
  'claude-haiku-4-5': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-haiku-4-5-20251001': { inputPerMTok: 1, outputPerMTok: 5 },
  'claude-sonnet-4-5': { inputPerMTok: 3, outputPerMTok: 15 },
  'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2 },
  'gpt-5-nano': { inputPerMTok: 0.05, outputPerMTok: 0.4 },
  'gpt-4.1-mini': { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  'gpt-4o-mini': { inputPerMTok: 0.15, outputPerMTok: 0.6 },
};

const LOCAL_PRICING: Pricing = { inputPerMTok: 0, outputPerMTok: 0 };

/** Tokens the template and fences add around a chunk; keeps each call inside the window. */
const PROMPT_OVERHEAD_TOKENS = 1_500;
/** Chars per output token used for the local output cap (generous: the API's max_tokens is the real cap). */
const OUTPUT_CHARS_PER_TOKEN = 5;

export function isProviderName(x: unknown): x is ProviderName {
  return typeof x === 'string' && (PROVIDER_NAMES as readonly string[]).includes(x);
}

interface Resolved {
  apiKey?: string;
  baseURL?: string;
  model: string;
}

function resolve(provider: ProviderName, opts: Partial<SummarizerOptions>, env: NodeJS.ProcessEnv): Resolved {
  const nonEmpty = (...xs: Array<string | undefined>) => xs.find((x) => typeof x === 'string' && x.trim() !== '');
  if (provider === 'anthropic') {
    return {
      apiKey: nonEmpty(opts.apiKey, env.ANTHROPIC_API_KEY),
      baseURL: nonEmpty(opts.baseURL, env.ANTHROPIC_BASE_URL),
      model: nonEmpty(opts.model, env.SPILLWAY_ANTHROPIC_MODEL) ?? ANTHROPIC_DEFAULT_MODEL,
    };
  }
  if (provider === 'openai') {
    return {
      apiKey: nonEmpty(opts.apiKey, env.OPENAI_API_KEY),
      baseURL: nonEmpty(opts.baseURL, env.OPENAI_BASE_URL),
      model: nonEmpty(opts.model, env.SPILLWAY_OPENAI_MODEL) ?? OPENAI_DEFAULT_MODEL,
    };
  }
  if (provider === 'local') {
    return {
      apiKey: nonEmpty(opts.apiKey, env.SPILLWAY_LOCAL_API_KEY),
      baseURL: nonEmpty(opts.baseURL, env.SPILLWAY_LOCAL_BASE_URL) ?? LOCAL_DEFAULT_BASE_URL,
      model: nonEmpty(opts.model, env.SPILLWAY_LOCAL_MODEL) ?? '',
    };
  }
  return { model: 'structural' };
}

/** What each provider offers here and now (keys present?), for the inspector and `--provider` help. */
export function listProviders(env: NodeJS.ProcessEnv): ProviderInfo[] {
  const a = resolve('anthropic', {}, env);
  const o = resolve('openai', {}, env);
  const l = resolve('local', {}, env);
  return [
    { name: 'structural', models: ['structural'], defaultModel: 'structural', available: true },
    {
      name: 'anthropic',
      models: [...new Set([a.model, ...ANTHROPIC_MODELS])],
      defaultModel: a.model,
      available: Boolean(a.apiKey || a.baseURL),
      ...(a.apiKey || a.baseURL ? {} : { reason: 'ANTHROPIC_API_KEY is not set' }),
    },
    {
      name: 'openai',
      models: [...new Set([o.model, ...OPENAI_MODELS])],
      defaultModel: o.model,
      available: Boolean(o.apiKey || o.baseURL),
      ...(o.apiKey || o.baseURL ? {} : { reason: 'OPENAI_API_KEY or OPENAI_BASE_URL is not set' }),
    },
    // Not probed here (this list is synchronous): listProvidersProbed asks the server.
    { name: 'local', models: l.model ? [l.model] : [], defaultModel: l.model, available: false, reason: `not probed yet (${l.baseURL})` },
  ];
}

/** listProviders, with the local server asked for its models: available when it answers, else why not. */
export async function listProvidersProbed(env: NodeJS.ProcessEnv): Promise<ProviderInfo[]> {
  const l = resolve('local', {}, env);
  const probe = await probeLocal(l.baseURL!, l.apiKey);
  return listProviders(env).map((p) =>
    p.name !== 'local'
      ? p
      : {
          name: 'local',
          models: [...new Set([...(l.model ? [l.model] : []), ...probe.models])],
          defaultModel: l.model || probe.models[0] || '',
          available: probe.ok,
          ...(probe.ok ? {} : { reason: `${l.baseURL}: ${probe.reason}` }),
        },
  );
}

/** Dollars for the run's calls, each at the rate its own prompt size bills at (a long prompt's tier is per request). */
export function costOf(pricing: Pricing | undefined, calls: ReadonlyArray<{ inputTokens: number; outputTokens: number }>): number | undefined {
  if (!pricing) return undefined;
  let usd = 0;
  for (const c of calls) {
    const rate = pricing.longPrompt && c.inputTokens > pricing.longPrompt.overTokens ? pricing.longPrompt : pricing;
    usd += (c.inputTokens * rate.inputPerMTok + c.outputTokens * rate.outputPerMTok) / 1e6;
  }
  return Math.round(usd * 1e6) / 1e6;
}

/**
 * A Summarizer for the guard, the CLI and the inspector. Every run reports provider, model,
 * template, focus, tokens in/out, latency and cost. Cloud calls are bounded: one deadline for the
 * whole run (retries and chunks included), retries that honour `retry-after`, and an output cap
 * enforced while streaming. Failures throw a ProviderError; the guard then falls back to a preview.
 */
export function createSummarizer(opts: SummarizerOptions): Summarizer {
  if (!isProviderName(opts.provider)) {
    throw new ProviderError(`unknown summary provider ${JSON.stringify(opts.provider)} (use ${PROVIDER_NAMES.join(', ')})`, 'config');
  }
  const provider = opts.provider;
  const env = opts.env ?? {};
  const resolved = resolve(provider, opts, env);
  const timeoutMs = opts.timeoutMs ?? (Number(env.SPILLWAY_SUMMARY_TIMEOUT_MS) || SUMMARY_TIMEOUT_MS);
  const templatesDir = opts.templatesDir ?? appPaths(env).templates;

  return {
    provider,
    async summarize(given: SummaryRequest, { signal }: { signal: AbortSignal }): Promise<SummaryOutput> {
      const started = performance.now();
      // An MCP result is read by its content (a no-op on anything else, and on text already unwrapped).
      const text = mcpContentText(given.text);
      // The guard's figure counts the text it was given: not the MCP content read out of it.
      const req = { ...given, text, estimate: text === given.text ? given.estimate : undefined };
      if (signal?.aborted) throw new ProviderError('summary cancelled', 'aborted');
      const maxOut = Math.max(16, Math.min(req.maxOutputTokens || Infinity, opts.maxOutputTokens ?? MAX_SUMMARY_OUTPUT_TOKENS));
      const focus = req.focus?.trim() || undefined;
      if (provider === 'structural') {
        const summary = structuralSummary(req.text, { focus, maxOutputTokens: maxOut, estimate: req.estimate });
        return {
          summary,
          provider,
          model: 'structural',
          focus,
          inputTokens: estimateLargeTokens(req.text),
          outputTokens: estimateTokens(summary).tokens,
          ms: Math.round(performance.now() - started),
          costUsd: 0,
        };
      }
      let model = req.model?.trim() || resolved.model;
      if (provider === 'local' && !model) {
        // No model named: the server's first, as Ollama's own CLI would need one named; a down server says so here.
        const probe = await probeLocal(resolved.baseURL!, resolved.apiKey);
        if (!probe.ok) throw localUnavailable(probe);
        model = probe.models[0]!;
      }
      const templateName = req.template ?? opts.template ?? DEFAULT_TEMPLATE;
      const template = loadTemplate(templateName, templatesDir);
      const deadline = Date.now() + timeoutMs;
      const run = new AbortController();
      const timer = setTimeout(() => run.abort(new DOMException('summary deadline', 'TimeoutError')), timeoutMs);
      const onAbort = () => run.abort(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const complete = provider === 'anthropic' ? anthropicComplete : openaiComplete;
      let inTok = 0;
      let outTok = 0;
      const calls: Array<{ inputTokens: number; outputTokens: number }> = [];
      const call = async (system: string, user: string, maxTokens: number): Promise<Completion> => {
        const res = await withRetries(
          () => {
            const remaining = deadline - Date.now();
            const creq: CompletionRequest = {
              system,
              user,
              model,
              maxTokens,
              maxChars: maxTokens * OUTPUT_CHARS_PER_TOKEN,
              maxResponseBytes: MAX_PROVIDER_RESPONSE_BYTES,
              apiKey: resolved.apiKey,
              baseURL: resolved.baseURL,
              stream: opts.stream ?? true,
              signal: run.signal,
              timeoutMs: Math.max(1, remaining),
            };
            return complete(creq);
          },
          { maxRetries: opts.maxRetries ?? PROVIDER_MAX_RETRIES, deadline, signal: run.signal },
        );
        const c = { inputTokens: res.inputTokens ?? estimateTokens(system + user).tokens, outputTokens: res.outputTokens ?? estimateTokens(res.text).tokens };
        calls.push(c);
        inTok += c.inputTokens;
        outTok += c.outputTokens;
        return res;
      };
      try {
        const kind = detectTextKind(req.text);
        const window = Math.max(2_000, opts.maxInputTokens ?? MAX_SUMMARY_INPUT_TOKENS);
        // Floor at 8 chars a token (no tokenizer packs more): a bad estimate must never send a huge payload in one call.
        const payloadTokens = Math.max(estimateLargeTokens(req.text), Math.ceil(req.text.length / 8));
        let summary: string;
        let chunks: SummaryOutput['chunks'];
        let finalModel = model;
        if (payloadTokens + PROMPT_OVERHEAD_TOKENS <= window) {
          const p = renderPrompt(template.body, { payload: req.text, focus, tool: req.toolName, toolInput: req.toolInput, kind, maxTokens: maxOut });
          const res = await call(p.system, p.user, maxOut);
          finalModel = res.model;
          summary = res.text.trim() + (res.truncated ? '\n[summary cut at the output cap]' : '');
        } else {
          const mr = await mapReduce(req.text, {
            window,
            payloadTokens,
            focus,
            tool: req.toolName,
            kind,
            maxOut,
            templateBody: template.body,
            reduceBody: loadTemplate('reduce', templatesDir).body,
            call,
          });
          summary = mr.summary;
          chunks = mr.chunks;
          finalModel = mr.model ?? model;
        }
        if (!summary.trim()) throw new ProviderError('provider returned an empty summary', 'bad-reply');
        // A local model costs no API money; its price is the user's own hardware, not ours to guess.
        const pricing = opts.pricing ?? (provider === 'local' ? LOCAL_PRICING : PRICING[finalModel] ?? PRICING[model]);
        return {
          summary,
          provider,
          model: finalModel,
          template: template.name,
          focus,
          inputTokens: inTok,
          outputTokens: outTok,
          ms: Math.round(performance.now() - started),
          costUsd: costOf(pricing, calls),
          ...(chunks ? { chunks } : {}),
        };
      } catch (err) {
        // "provider unreachable" says nothing about where; for a local server, say where it looked and what to start.
        if (provider === 'local' && err instanceof ProviderError && err.kind === 'network') {
          throw localUnavailable({ baseURL: resolved.baseURL!, ok: false, models: [], reason: err.message });
        }
        throw err;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
    },
  };
}

interface MapReduceCtx {
  window: number;
  payloadTokens: number;
  focus?: string;
  tool?: string;
  kind: string;
  maxOut: number;
  templateBody: string;
  reduceBody: string;
  call: (system: string, user: string, maxTokens: number) => Promise<Completion>;
}

/** Split at line ends into pieces of about `chunkChars`. */
export function chunkText(text: string, chunkChars: number): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + chunkChars);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      if (nl > start + chunkChars * 0.8) end = nl + 1;
    }
    out.push({ start, end });
    start = end;
  }
  return out;
}

/**
 * Payloads larger than the window: chunk, summarize the chunks that matter most for the focus
 * (or an even spread without one; the first chunk always), then merge. Never more than
 * MAX_SUMMARY_CHUNKS calls; the summary says which parts were skipped.
 */
async function mapReduce(text: string, ctx: MapReduceCtx): Promise<{ summary: string; chunks: NonNullable<SummaryOutput['chunks']>; model?: string }> {
  const charsPerToken = text.length / Math.max(1, ctx.payloadTokens);
  const chunkChars = Math.max(1_000, Math.floor((ctx.window - PROMPT_OVERHEAD_TOKENS) * charsPerToken));
  const all = chunkText(text, chunkChars);
  const terms = focusTerms(ctx.focus);
  let picked: number[];
  if (all.length <= MAX_SUMMARY_CHUNKS) picked = all.map((_, i) => i);
  else if (terms.length) {
    const scores = all.map((c, i) => {
      const lower = text.slice(c.start, c.end).toLowerCase();
      let hits = 0;
      for (const t of terms) for (let p = lower.indexOf(t.stem); p !== -1 && hits < 10_000; p = lower.indexOf(t.stem, p + 1)) hits++;
      return { i, score: popcount(matchMask(lower, terms)) * 1e6 + hits };
    });
    const best = scores.filter((s) => s.i !== 0).sort((a, b) => b.score - a.score || a.i - b.i).slice(0, MAX_SUMMARY_CHUNKS - 1);
    picked = [0, ...best.map((s) => s.i)].sort((a, b) => a - b);
  } else {
    const step = (all.length - 1) / (MAX_SUMMARY_CHUNKS - 1);
    picked = [...new Set(Array.from({ length: MAX_SUMMARY_CHUNKS }, (_, k) => Math.round(k * step)))];
  }
  const perChunkOut = Math.max(200, Math.min(ctx.maxOut, Math.floor((ctx.window - PROMPT_OVERHEAD_TOKENS) / picked.length / 2)));
  const results: Array<{ i: number; text?: string; error?: string; model?: string }> = [];
  let next = 0;
  const worker = async () => {
    while (next < picked.length) {
      const i = picked[next++]!;
      const c = all[i]!;
      const p = renderPrompt(ctx.templateBody, {
        payload: text.slice(c.start, c.end),
        focus: ctx.focus,
        tool: ctx.tool,
        kind: ctx.kind,
        maxTokens: perChunkOut,
        part: `This is part ${i + 1} of ${all.length} of a larger result (chars ${c.start}–${c.end}).`,
      });
      try {
        const r = await ctx.call(p.system, p.user, perChunkOut);
        results.push({ i, text: r.text.trim(), model: r.model });
      } catch (err) {
        if (err instanceof ProviderError && (err.kind === 'timeout' || err.kind === 'aborted' || err.kind === 'config')) throw err;
        results.push({ i, error: (err as Error).message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SUMMARY_CHUNK_CONCURRENCY, picked.length) }, worker));
  results.sort((a, b) => a.i - b.i);
  const ok = results.filter((r) => r.text);
  if (!ok.length) throw new ProviderError(`every chunk failed: ${results[0]?.error ?? 'no result'}`, 'http');
  const skipped = all.length - ok.length;
  const skippedNote = skipped
    ? `${skipped} of ${all.length} parts were not summarized${all.length > MAX_SUMMARY_CHUNKS ? ` (at most ${MAX_SUMMARY_CHUNKS} are; ${terms.length ? 'the ones matching the focus best were chosen' : 'an even spread was chosen'})` : ''}; read the saved file for the rest.`
    : '';
  const notes = ok.map((r) => `## Part ${r.i + 1} of ${all.length}\n${r.text}`).join('\n\n');
  let summary: string;
  let model = ok[0]!.model;
  try {
    const p = renderPrompt(ctx.reduceBody, {
      payload: `${notes}${skippedNote ? `\n\nNote: ${skippedNote}` : ''}`,
      focus: ctx.focus,
      tool: ctx.tool,
      kind: ctx.kind,
      maxTokens: ctx.maxOut,
    });
    const r = await ctx.call(p.system, p.user, ctx.maxOut);
    summary = r.text.trim();
    model = r.model;
  } catch (err) {
    if (err instanceof ProviderError && (err.kind === 'timeout' || err.kind === 'aborted')) throw err;
    summary = notes.slice(0, ctx.maxOut * OUTPUT_CHARS_PER_TOKEN);
  }
  if (skippedNote) summary += `\n\n(${skippedNote})`;
  return { summary, chunks: { total: all.length, summarized: ok.length, skipped }, model };
}
