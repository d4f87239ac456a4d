/**
 * The `claude` profile's correction, fitted from the API's own usage in Claude Code transcripts:
 * the growth of the context between two calls, less what Spillway estimates of everything else
 * that entered (the previous answer, user text), is the API's count of the tool results that
 * entered; the legacy public Claude tokenizer counts the same text. Their ratio, over many
 * results, is the correction the newer model needs (docs/timeline.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { countTokens, isInside, openUntrustedSync } from '../pipeline/index.js';
import { parseClaudeCorrection } from '../pipeline/estimate/options.js';
import { isObj } from '../pipeline/values.js';
import { ClaudeTurns } from './turns-claude.js';

/** Tool results smaller than this (legacy tokens, per call) say little about the ratio: a few tokens of framing swamp them. */
const MIN_SAMPLE_TOKENS = 300;
/** A call whose growth is more than this share other text (answers, user text) measures the tool results too loosely. */
const MAX_OTHER_SHARE = 0.25;
/** Transcripts read from one folder at most, and the largest read. */
const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 256 * 1024 * 1024;

export interface CalibrationSample {
  file: string;
  /** Index of the call in the transcript's main line. */
  call: number;
  model?: string;
  /** The API's count of the tool results that entered with the call (growth less the rest's estimate). */
  api: number;
  /** The legacy public Claude tokenizer's count of the same text. */
  legacy: number;
}

export interface CalibrationFit {
  model: string;
  samples: number;
  /** Median of api / legacy over the samples: robust to a call the subtraction got wrong. */
  correction: number;
  /** Relative error |correction × legacy − api| / api, with the correction in effect and with the fitted one. */
  before: { median: number; p90: number };
  after: { median: number; p90: number };
}

export interface Calibration {
  files: number;
  calls: number;
  samples: CalibrationSample[];
  /** All models together, then one per model. */
  overall?: CalibrationFit;
  byModel: CalibrationFit[];
  /** Calls left out, and why. */
  skipped: { noUsage: number; afterCompaction: number; small: number; mostlyOther: number; noText: number; implausible: number };
  current: number;
  notes: string[];
}

function transcripts(target: string, notes: string[]): string[] {
  const st = fs.lstatSync(target);
  if (st.isFile()) return [target];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (out.length >= MAX_FILES) return;
      const p = path.join(dir, e.name);
      // Linked folders are not followed: a calibration reads the folder it was given.
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && e.name.endsWith('.jsonl') && isInside(target, p)) out.push(p);
    }
  };
  walk(target);
  if (out.length >= MAX_FILES) notes.push(`stopped at ${MAX_FILES} transcripts`);
  return out;
}

function resultText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return c === undefined || c === null ? '' : JSON.stringify(c);
  return c.map((b) => (isObj(b) && typeof b.text === 'string' ? b.text : isObj(b) && b.type === 'image' ? '' : JSON.stringify(b))).join('\n');
}

function readLines(file: string): Buffer[] {
  const { fd } = openUntrustedSync(file);
  let buf: Buffer;
  try {
    if (fs.fstatSync(fd).size > MAX_FILE_BYTES) return [];
    buf = fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const lines: Buffer[] = [];
  let start = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, start)) {
    lines.push(buf.subarray(start, i));
    start = i + 1;
  }
  if (start < buf.length) lines.push(buf.subarray(start));
  return lines;
}

/** Within the bounds a correction may take (the estimator's own). */
function plausible(ratio: number): boolean {
  try {
    parseClaudeCorrection(ratio);
    return true;
  } catch {
    return false;
  }
}

const quantile = (xs: number[], q: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

function fit(model: string, samples: CalibrationSample[], current: number): CalibrationFit {
  const correction = quantile(samples.map((s) => s.api / s.legacy), 0.5);
  const err = (c: number) => samples.map((s) => Math.abs(c * s.legacy - s.api) / s.api);
  const b = err(current);
  const a = err(correction);
  return { model, samples: samples.length, correction, before: { median: quantile(b, 0.5), p90: quantile(b, 0.9) }, after: { median: quantile(a, 0.5), p90: quantile(a, 0.9) } };
}

/** Reads every Claude Code transcript at `target` (a file or a folder such as ~/.claude/projects) and fits the correction. */
export async function calibrateClaude(target: string, o: { current?: number } = {}): Promise<Calibration> {
  const notes: string[] = [];
  const current = o.current ?? 1;
  const skipped = { noUsage: 0, afterCompaction: 0, small: 0, mostlyOther: 0, noText: 0, implausible: 0 };
  const samples: CalibrationSample[] = [];
  const files = transcripts(path.resolve(target), notes);
  let calls = 0;
  let read = 0;
  for (const file of files) {
    let lines: Buffer[];
    try {
      lines = readLines(file);
    } catch (err) {
      notes.push(`${path.basename(file)}: not read (${(err as Error).message})`);
      continue;
    }
    const reader = new ClaudeTurns();
    const texts = new Map<string, string>();
    lines.forEach((buf, i) => {
      reader.line(buf, i);
      if (!buf.includes('"tool_result"')) return;
      try {
        const rec = JSON.parse(buf.toString('utf8')) as unknown;
        const content = isObj(rec) && isObj(rec.message) ? rec.message.content : undefined;
        if (!Array.isArray(content)) return;
        for (const b of content) if (isObj(b) && b.type === 'tool_result' && typeof b.tool_use_id === 'string') texts.set(b.tool_use_id, resultText(b.content));
      } catch {
        /* the turn reader notes it */
      }
    });
    const r = reader.result();
    if (!r.turns.length) continue;
    read++;
    const hasMain = r.turns.some((t) => t.kind === 'main');
    const line = r.turns.filter((t) => t.kind === (hasMain ? 'main' : 'sidechain'));
    const rebuilt = new Set(r.compactions.filter((c) => c.kind === 'compact').map((c) => line.findIndex((t) => t.seq >= c.seq)));
    calls += line.length;
    for (let i = 1; i < line.length; i++) {
      const t = line[i]!;
      const prev = line[i - 1]!;
      if (!t.tools.length) continue;
      if (t.context === null || prev.context === null) {
        skipped.noUsage++;
        continue;
      }
      if (rebuilt.has(i)) {
        skipped.afterCompaction++;
        continue;
      }
      const growth = t.context - prev.context;
      const other = Object.values(t.parts).reduce((a, b) => a + (b ?? 0), 0);
      if (growth <= 0 || other > MAX_OTHER_SHARE * growth) {
        skipped.mostlyOther++;
        continue;
      }
      const toolTexts = t.tools.map((x) => texts.get(x.id));
      if (toolTexts.some((x) => x === undefined)) {
        skipped.noText++;
        continue;
      }
      let legacy = 0;
      for (const text of toolTexts) legacy += (await countTokens(text!, 'claude', { claudeCorrection: 1 })).tokens;
      if (legacy < MIN_SAMPLE_TOKENS) {
        skipped.small++;
        continue;
      }
      const api = growth - other;
      // A ratio no tokenizer could explain is not the model's count (a proxy or test double inflating usage, a lost line).
      if (!plausible(api / legacy)) {
        skipped.implausible++;
        continue;
      }
      samples.push({ file, call: i, model: t.model, api, legacy });
    }
  }
  if (files.length && !read) notes.push('no Claude Code transcript with usage found');
  const models = [...new Set(samples.map((s) => s.model ?? 'unknown'))].sort();
  return {
    files: read,
    calls,
    samples,
    overall: samples.length ? fit('all', samples, current) : undefined,
    byModel: models.map((m) => fit(m, samples.filter((s) => (s.model ?? 'unknown') === m), current)),
    skipped,
    current,
    notes,
  };
}
