import { estimateTokens } from '../../pipeline/estimate/index.js';
import { DEFAULT_PROFILE } from '../../pipeline/estimate/options.js';
import { MAX_SUMMARY_OUTPUT_TOKENS } from '../../pipeline/limits.js';
import type { ContentKind, Estimate } from '../../pipeline/types.js';
import { focusTerms } from '../focus.js';
import { STRUCTURAL_CHARS_PER_TOKEN } from '../limits.js';
import { summarizeCsv } from './csv.js';
import { JsonProfiler } from './json.js';
import { summarizeLog } from './log.js';
import { Budget, fmt } from './out.js';
import { htmlToText, summarizeProse } from './prose.js';
import { closeJsonPrefix, detectTextFormat, unwrapText, type TextWrapper } from '../../pipeline/detect.js';

export interface StructuralOptions {
  /** Keywords or a question: ranks what is kept. */
  focus?: string;
  /** Token budget of the summary (default MAX_SUMMARY_OUTPUT_TOKENS). */
  maxOutputTokens?: number;
  /** Skip detection when the caller already knows. */
  kind?: ContentKind;
  /** The guard's estimate of exactly this text: stated instead of a figure of the summary's own. */
  estimate?: Estimate;
}

const WRAPPER_NOTES: Record<TextWrapper, string> = {
  'line-numbers': 'Line-numbered listing (Read / cat -n)',
  'exec-output': 'Command output under an exec header',
};

/** Smallest useful budget; below it the header alone would not fit. */
const MIN_OUTPUT_TOKENS = 64;

/**
 * The offline summary: no network, no key, linear in the payload, bounded output.
 * JSON → schema, stats, where the tokens go; CSV → columns with stats; logs → levels, time span,
 * error and warning lines verbatim; prose/code → outline and extractive sentences. A focus
 * ranks what is kept, and values (numbers, ids, URLs) are always quoted verbatim.
 */
export function structuralSummary(text: string, opts: StructuralOptions = {}): string {
  const maxTokens = Math.max(MIN_OUTPUT_TOKENS, Math.floor(opts.maxOutputTokens ?? MAX_SUMMARY_OUTPUT_TOKENS));
  const b = new Budget(maxTokens * STRUCTURAL_CHARS_PER_TOKEN);
  const terms = focusTerms(opts.focus);
  const focus = opts.focus?.trim();
  const format = opts.kind ? { kind: opts.kind, wrappers: [] } : detectTextFormat(text);
  let kind: ContentKind = format.kind;
  const lines = countLines(text);
  const bytes = Buffer.byteLength(text, 'utf8');
  // One figure per message: the guard's, when it measured exactly this text. Otherwise our own, named,
  // so it is not taken for the payload's figure (an MCP result's content, not its envelope; the linked form).
  const e = opts.estimate;
  const size = e
    ? `${fmt(bytes)} bytes, ${fmt(lines)} lines, ~${fmt(e.tokens)} tokens (${e.strategy}${e.exact ? ', exact' : ' estimate'}, ${e.profile})`
    : `${fmt(bytes)} bytes, ${fmt(lines)} lines, ~${fmt(estimateLargeTokens(text))} tokens (calibrated, ${DEFAULT_PROFILE}, of this text)`;
  // A tool's wrapper (Read's line numbers, an exec header): say so once, then digest what it wraps.
  if (format.wrappers.length) {
    b.line(`${format.wrappers.map((w) => WRAPPER_NOTES[w]).join(', ')}; digest of the content inside.`);
    text = unwrapText(text);
  }

  if (kind === 'json') {
    let value: unknown;
    let cut: string | undefined;
    try {
      value = JSON.parse(text);
    } catch (err) {
      // Cut short (a Read the client stopped at its token cap): the schema of the part there is.
      const closed = closeJsonPrefix(text);
      if (closed) {
        try {
          value = JSON.parse(closed.json);
          cut = `cut short after ${fmt(countLines(text.slice(0, closed.cutAt)))} lines: the schema below is of the part shown, the rest is not in this text`;
        } catch {
          /* said below */
        }
      }
      if (!cut) {
        b.line(`JSON that does not parse (${(err as Error).message.slice(0, 120)}), ${size}; summarized as text.`);
        kind = 'text';
      }
    }
    if (kind === 'json') {
      const p = new JsonProfiler(terms);
      const cost = p.walk(value, '$');
      b.line(`JSON ${Array.isArray(value) ? `array of ${fmt((value as unknown[]).length)}${cut ? '+' : ''} items` : value === null ? 'null' : typeof value}, ${size}${cut ? `; ${cut}` : ''}.`);
      p.render(b, cost, { focus });
      return finish(b, maxTokens);
    }
  } else if (kind === 'ndjson') {
    const p = new JsonProfiler(terms);
    let records = 0;
    let bad = 0;
    let cost = 0;
    let pos = 0;
    while (pos < text.length) {
      let end = text.indexOf('\n', pos);
      if (end === -1) end = text.length;
      const line = text.slice(pos, end).trim();
      pos = end + 1;
      if (!line) continue;
      try {
        cost += p.walk(JSON.parse(line), '$[*]');
        records++;
      } catch {
        bad++;
      }
    }
    b.line(`NDJSON: ${fmt(records)} records${bad ? `, ${fmt(bad)} lines that do not parse` : ''}, ${size}.`);
    p.render(b, cost, { focus });
    return finish(b, maxTokens);
  }

  switch (kind) {
    case 'csv':
      b.line(`CSV, ${size}.`);
      summarizeCsv(text, b, terms, focus);
      break;
    case 'log':
      b.line(`Log, ${size}.`);
      summarizeLog(text, b, terms, focus);
      break;
    case 'html':
    case 'xml': {
      const h = htmlToText(text);
      const top = [...h.elements.entries()].sort((a, c) => c[1] - a[1]).slice(0, 12);
      b.line(`${kind.toUpperCase()}, ${size}${h.title ? `; title: ${JSON.stringify(h.title)}` : ''}.`);
      b.line(`Elements: ${top.map(([t, n]) => `${t} ×${fmt(n)}`).join(', ')}${kind === 'html' ? `; ${fmt(h.links)} links` : ''}; visible text ${fmt(h.text.length)} chars.`);
      summarizeProse(h.text, 'markdown', b, terms, focus);
      break;
    }
    case 'binary':
      b.line(`Binary content, ${fmt(bytes)} bytes: nothing to summarize as text.`);
      break;
    default:
      b.line(`${kind === 'code' ? 'Code' : kind === 'markdown' ? 'Markdown' : 'Text'}, ${size}.`);
      summarizeProse(text, kind, b, terms, focus);
  }
  return finish(b, maxTokens);
}

/** Chars above which the header's token count is extrapolated from samples instead of counted over everything. */
const FULL_ESTIMATE_MAX_CHARS = 1024 * 1024;
/** Chars per sample (three samples: head, middle, tail). */
const ESTIMATE_SAMPLE_CHARS = 128 * 1024;

/** Token estimate that stays cheap on huge payloads: head, middle and tail samples, scaled by length. */
export function estimateLargeTokens(text: string): number {
  if (text.length <= FULL_ESTIMATE_MAX_CHARS) return estimateTokens(text).tokens;
  const mid = Math.floor(text.length / 2 - ESTIMATE_SAMPLE_CHARS / 2);
  const samples = [text.slice(0, ESTIMATE_SAMPLE_CHARS), text.slice(mid, mid + ESTIMATE_SAMPLE_CHARS), text.slice(-ESTIMATE_SAMPLE_CHARS)];
  const t = samples.reduce((a, s) => a + estimateTokens(s).tokens, 0);
  return Math.round((t / (3 * ESTIMATE_SAMPLE_CHARS)) * text.length);
}

/** The char budget assumes ~3 chars a token; dense text (CJK, emoji) can cost more, so check with the estimator and cut lines. */
function finish(b: Budget, maxTokens: number): string {
  let out = b.toString();
  if (estimateTokens(out).tokens <= maxTokens) return out;
  const lines = out.split('\n');
  while (lines.length > 1 && estimateTokens(lines.join('\n')).tokens > maxTokens - 8) lines.pop();
  out = lines.join('\n');
  while (estimateTokens(out).tokens > maxTokens - 8 && out.length > 0) out = out.slice(0, Math.floor(out.length * 0.8));
  return `${out}\n…`;
}

function countLines(text: string): number {
  if (!text) return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  if (text.endsWith('\n')) n--;
  return n;
}
