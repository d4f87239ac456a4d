/**
 * A run: one variant over a dataset, through the job queue (queue.ts). Each item's result is
 * written as it finishes, so a run killed at any point resumes (`resume: runId`) without calling
 * the provider again for finished items; results are also cached across runs by
 * (payload hash, template hash, provider, model, focus). A provider failure is that item's result.
 */
import crypto from 'node:crypto';
import { estimateTokens, MAX_SUMMARY_OUTPUT_TOKENS } from '../pipeline/index.js';
import type { Summarizer } from '../pipeline/types.js';
import type { CachedSummary, ExperimentStore, StoredResult, StoredRun } from '../index/index.js';
import {
  costOf,
  createSummarizer,
  isProviderName,
  listProviders,
  listProvidersProbed,
  loadTemplate,
  PRICING,
  scoreSummary,
  type Pricing,
  type ScoreInput,
  type SummaryScores,
} from '../summarize/index.js';
import { ExperimentError } from './dataset.js';
import { runQueue } from './queue.js';
import type { Budget, FocusPolicy, ItemInput, ItemSource, RunProgress, RunReport, Variant } from './types.js';

/** Items summarized at once when the caller names no number: a provider's rate limits stay far. */
export const DEFAULT_RUN_CONCURRENCY = 4;
/** More at once only queues at the provider. */
export const MAX_RUN_CONCURRENCY = 32;
/**
 * Before any call of a run has finished, an item's output is projected as this share of its input
 * (capped by the summary cap): summaries are short. After that, the mean of what the run's calls
 * really took is the projection.
 */
const FIRST_OUTPUT_SHARE = 0.2;

export interface RunOptions {
  store: ExperimentStore;
  source: ItemSource;
  /** A new run: its dataset and variant. */
  dataset?: string;
  variant?: Variant;
  budget?: Budget;
  /** Resume this run instead: its dataset, variant and budget are the stored ones; its finished items are kept. */
  resume?: string;
  concurrency?: number;
  /** Where keys and base URLs come from (the edge that read them passes them down). */
  env: NodeJS.ProcessEnv;
  templatesDir: string;
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** Told the run's id as soon as it exists (before the first item). */
  onStart?: (run: StoredRun) => void;
  /** Instead of the provider's summarizer (a bench's own); the variant still names what it is. */
  summarizer?: Summarizer;
  /**
   * Where the scores are computed (default: here, scoreSummary). The service passes its compute
   * worker: the anchor pass costs about what a structural summary does, and runs beside the next item's.
   */
  score?: (input: ScoreInput, signal: AbortSignal) => Promise<SummaryScores>;
  maxOutputTokens?: number;
}

export function parseFocusPolicy(s: string): FocusPolicy {
  if (s === 'call' || s === 'none') return s;
  if (s.startsWith('fixed:') && s.length > 'fixed:'.length) return s as FocusPolicy;
  throw new ExperimentError('BAD_REQUEST', `bad focus policy ${JSON.stringify(s)}: use call, none, or fixed:<text>`);
}

function focusFor(policy: FocusPolicy, callFocus: string | undefined): string | undefined {
  if (policy === 'none') return undefined;
  if (policy === 'call') return callFocus?.trim() || undefined;
  return policy.slice('fixed:'.length).trim() || undefined;
}

const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** The cache's key: the same payload, template text, provider, model and focus give the same summary. */
export function cacheKey(k: { payloadHash: string; templateHash: string; provider: string; model: string; focus?: string }): string {
  return sha256(JSON.stringify([k.payloadHash, k.templateHash, k.provider, k.model, k.focus ?? null]));
}

function checkBudget(b: Budget | undefined): Budget {
  const out: Budget = {};
  for (const k of ['usd', 'tokens'] as const) {
    const v = b?.[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw new ExperimentError('BAD_REQUEST', `budget ${k} must be a number above 0, not ${v}`);
    out[k] = v;
  }
  return out;
}

function pricingOf(provider: string, model: string): Pricing | undefined {
  if (provider === 'structural' || provider === 'local') return { inputPerMTok: 0, outputPerMTok: 0 };
  return PRICING[model];
}

/** The variant as it will run: the provider checked, the model resolved (the provider's default when absent), the template loadable. */
async function resolveVariant(v: Variant, env: NodeJS.ProcessEnv, templatesDir: string, budget: Budget, own: boolean): Promise<Variant> {
  if (!v || typeof v !== 'object') throw new ExperimentError('BAD_REQUEST', 'no variant given');
  if (!isProviderName(v.provider)) throw new ExperimentError('BAD_REQUEST', `unknown provider ${JSON.stringify(v.provider)}: use structural, anthropic, openai or local`);
  const focus = parseFocusPolicy(v.focus ?? 'call');
  try {
    loadTemplate(v.template, templatesDir);
  } catch (err) {
    throw new ExperimentError('BAD_REQUEST', `template ${JSON.stringify(v.template)}: ${(err as Error).message}`);
  }
  let model = v.model?.trim() || '';
  if (!own) {
    const list = v.provider === 'local' ? await listProvidersProbed(env) : listProviders(env);
    const info = list.find((p) => p.name === v.provider)!;
    if (!info.available) throw new ExperimentError('BAD_REQUEST', `${v.provider} is not available: ${info.reason ?? 'not configured'}`);
    model ||= info.defaultModel;
  }
  if (!model) model = v.provider === 'structural' ? 'structural' : '';
  if (!model) throw new ExperimentError('BAD_REQUEST', `no model for ${v.provider}: name one with model=`);
  if (budget.usd !== undefined && !pricingOf(v.provider, model)) {
    throw new ExperimentError('BAD_REQUEST', `model ${model} has no price here, so a dollar budget cannot be kept: give a token budget instead`);
  }
  return { template: v.template, provider: v.provider, model, focus };
}

const newRunId = () => `exp_${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}_${crypto.randomBytes(3).toString('hex')}`;

/** Run (or resume) one variant over a dataset. Resolves when it ends: done, cancelled, or stopped by its budget. */
export async function runExperiment(o: RunOptions): Promise<RunReport> {
  const { store } = o;
  let run: StoredRun;
  let variant: Variant;
  let budget: Budget;
  if (o.resume) {
    const r = store.run(o.resume);
    if (!r) throw new ExperimentError('NOT_FOUND', `no run ${JSON.stringify(o.resume)} (spillway experiment list shows them)`);
    run = r;
    budget = checkBudget(o.budget ?? (r.budget as Budget));
    variant = await resolveVariant(r.variant as Variant, o.env, o.templatesDir, budget, Boolean(o.summarizer));
  } else {
    if (!o.dataset) throw new ExperimentError('BAD_REQUEST', 'no dataset given');
    if (!store.dataset(o.dataset)) throw new ExperimentError('NOT_FOUND', `no dataset ${JSON.stringify(o.dataset)}`);
    budget = checkBudget(o.budget);
    variant = await resolveVariant(o.variant!, o.env, o.templatesDir, budget, Boolean(o.summarizer));
    run = store.createRun({ id: newRunId(), dataset: o.dataset, variant, budget });
  }
  const dataset = store.dataset(run.dataset);
  if (!dataset) throw new ExperimentError('NOT_FOUND', `run ${run.id}'s dataset ${JSON.stringify(run.dataset)} is gone`);
  if (o.resume) store.reopenRun(run.id);
  o.onStart?.(run);

  const prior = new Map(store.results(run.id).map((r) => [r.n, r]));
  const todo = dataset.items.filter((it) => prior.get(it.n)?.status !== 'ok');
  const concurrency = Math.min(MAX_RUN_CONCURRENCY, Math.max(1, Math.floor(o.concurrency ?? DEFAULT_RUN_CONCURRENCY)));
  const model = variant.model!;
  const pricing = pricingOf(variant.provider, model);
  const templateBody = loadTemplate(variant.template, o.templatesDir).body;
  const templateHash = sha256(templateBody);
  const templateTokens = estimateTokens(templateBody).tokens;
  const maxOut = o.maxOutputTokens ?? MAX_SUMMARY_OUTPUT_TOKENS;
  const summarizer =
    o.summarizer ??
    createSummarizer({ provider: variant.provider as never, model, template: variant.template, templatesDir: o.templatesDir, env: o.env, maxOutputTokens: maxOut });

  // What the run has paid: provider calls of earlier processes (a resume) and of this one. Cached results cost nothing.
  const spent = { usd: 0, tokens: 0, calls: 0 };
  for (const r of prior.values()) {
    if (r.status !== 'ok' || r.cached) continue;
    spent.usd += r.costUsd ?? 0;
    spent.tokens += (r.inputTokens ?? 0) + (r.outputTokens ?? 0);
    spent.calls++;
  }
  const reserved = { usd: 0, tokens: 0 };
  const p: RunProgress = {
    runId: run.id,
    total: dataset.items.length,
    // Items with a result: finished, or failed and to be tried again.
    done: dataset.items.filter((it) => prior.has(it.n)).length,
    ok: 0,
    failed: 0,
    cached: 0,
    called: 0,
    spentUsd: 0,
    spentTokens: 0,
  };
  const resumed = dataset.items.length - todo.length;
  // Failures of an earlier process are tried again; until then they count as failed.
  p.failed = dataset.items.filter((it) => prior.get(it.n)?.status === 'error').length;
  p.ok = dataset.items.filter((it) => prior.get(it.n)?.status === 'ok').length;
  const progress = () => {
    p.spentUsd = Math.round(spent.usd * 1e6) / 1e6;
    p.spentTokens = spent.tokens;
    o.onProgress?.({ ...p });
  };
  progress();

  const project = (input: ItemInput): { tokens: number; usd: number } => {
    let inTok: number;
    let outTok: number;
    if (spent.calls > 0) {
      // The run's own mean: the provider's real counts, which the text estimate only approaches.
      const perCall = spent.tokens / spent.calls;
      return { tokens: Math.ceil(perCall), usd: spent.usd / spent.calls };
    } else {
      inTok = estimateTokens(input.text).tokens + templateTokens;
      outTok = Math.min(maxOut, Math.ceil(inTok * FIRST_OUTPUT_SHARE));
    }
    return { tokens: inTok + outTok, usd: costOf(pricing, [{ inputTokens: inTok, outputTokens: outTok }]) ?? 0 };
  };
  const fmt = (n: number) => n.toLocaleString('en-US');
  const over = (proj: { tokens: number; usd: number }): string | undefined => {
    if (budget.tokens !== undefined && spent.tokens + reserved.tokens + proj.tokens > budget.tokens) {
      return `token budget ${fmt(budget.tokens)}: ${fmt(spent.tokens)} spent${reserved.tokens ? `, ${fmt(reserved.tokens)} in flight` : ''}, the next item would take about ${fmt(proj.tokens)}`;
    }
    if (budget.usd !== undefined && spent.usd + reserved.usd + proj.usd > budget.usd) {
      return `dollar budget $${budget.usd}: $${spent.usd.toFixed(6)} spent${reserved.usd ? `, $${reserved.usd.toFixed(6)} in flight` : ''}, the next item would cost about $${proj.usd.toFixed(6)}`;
    }
    return undefined;
  };

  const finishItem = (r: StoredResult, wasFailed: boolean, cache?: { key: string; value: CachedSummary }) => {
    store.putResult(run.id, r, cache);
    p.done += wasFailed ? 0 : 1;
    if (r.status === 'ok') {
      p.ok++;
      if (wasFailed) p.failed--;
    } else if (!wasFailed) p.failed++;
    progress();
  };

  const outcome = await runQueue(todo, {
    concurrency,
    signal: o.signal,
    async work(item, signal, control) {
      const wasFailed = prior.get(item.n)?.status === 'error';
      const base = { n: item.n, payloadId: item.payloadId, focus: item.focus };
      let input: ItemInput;
      try {
        input = await o.source.load(item.payloadId);
      } catch (err) {
        if (signal.aborted) throw err;
        finishItem({ ...base, status: 'error', error: `cannot read the payload: ${(err as Error).message}`, cached: false, finishedAt: new Date().toISOString() }, wasFailed);
        return;
      }
      const focus = focusFor(variant.focus, item.focus);
      const key = cacheKey({ payloadHash: sha256(input.text), templateHash, provider: variant.provider, model, focus });
      const scoreWith = o.score ?? (async (x: ScoreInput) => scoreSummary(x));
      const score = (summary: string, figures: { costUsd?: number; inputTokens: number; outputTokens: number; ms: number }) =>
        scoreWith({
          payload: input.text,
          summary,
          // The call's own focus: what the agent wanted is the yardstick for every variant, whatever it was told.
          focus: item.focus,
          readBacks: input.readBacks,
          profile: input.profile,
          payloadTokens: input.payloadTokens,
          run: figures,
        }, signal);
      const hit = store.cached(key);
      if (hit) {
        p.cached++;
        finishItem({ ...base, status: 'ok', cached: true, cacheKey: key, ...hit, scores: await score(hit.summary, hit), finishedAt: new Date().toISOString() }, wasFailed);
        return;
      }
      // Projected only under a budget: the estimate reads the whole text.
      const proj = budget.tokens !== undefined || budget.usd !== undefined ? project(input) : { tokens: 0, usd: 0 };
      const why = over(proj);
      if (why) return control.stop(why);
      reserved.tokens += proj.tokens;
      reserved.usd += proj.usd;
      const t0 = performance.now();
      p.called++;
      try {
        const out = await summarizer.summarize(
          { text: input.text, toolName: input.tool, toolInput: input.toolInput, focus, template: variant.template, model, maxOutputTokens: maxOut },
          { signal },
        );
        const figures = { summary: out.summary, model: out.model, inputTokens: out.inputTokens, outputTokens: out.outputTokens, costUsd: out.costUsd, ms: out.ms };
        spent.tokens += out.inputTokens + out.outputTokens;
        spent.usd += out.costUsd ?? 0;
        spent.calls++;
        let scores: SummaryScores | undefined;
        try {
          scores = await score(out.summary, figures);
        } finally {
          // Paid for: cached even when scoring fails or is cancelled, so no call is made twice; one commit with its result.
          if (!scores) store.putCache(key, figures);
        }
        finishItem({ ...base, status: 'ok', cached: false, cacheKey: key, ...figures, scores, finishedAt: new Date().toISOString() }, wasFailed, { key, value: figures });
      } catch (err) {
        if (signal.aborted) throw err;
        finishItem(
          { ...base, status: 'error', error: (err as Error).message || String(err), cached: false, cacheKey: key, model, ms: Math.round(performance.now() - t0), finishedAt: new Date().toISOString() },
          wasFailed,
        );
      } finally {
        reserved.tokens -= proj.tokens;
        reserved.usd -= proj.usd;
      }
      // A projection that fell short: the run stops at once, and says by how much it passed.
      if (budget.tokens !== undefined && spent.tokens > budget.tokens) control.stop(`token budget ${fmt(budget.tokens)} passed: ${fmt(spent.tokens)} spent (an item took more than projected)`);
      else if (budget.usd !== undefined && spent.usd > budget.usd) control.stop(`dollar budget $${budget.usd} passed: $${spent.usd.toFixed(6)} spent (an item cost more than projected)`);
    },
  });
  const status: RunReport['status'] = outcome.cancelled ? 'cancelled' : outcome.stopped ? 'budget' : 'done';
  const stopReason = outcome.cancelled ? 'cancelled' : outcome.stopped;
  store.finishRun(run.id, status, stopReason);
  progress();
  return { ...p, spentUsd: Math.round(spent.usd * 1e6) / 1e6, spentTokens: spent.tokens, status, stopReason, resumed, variant, dataset: run.dataset };
}
