import fs from 'node:fs';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { claudeCorrectionFromEnv, DEFAULT_PROFILE, DEFAULT_STRATEGY, PROFILES, countTokens, describeTokens, isBinaryBytes, openUntrustedSync, type Profile, type StrategyName } from '../../pipeline/index.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';
import { countTokensAnthropicApi } from '../../pipeline/estimate/index.js';
import { CHEAP_STRATEGIES, CLAUDE_CORRECTION_ENV, EXACT_STRATEGIES, parseClaudeCorrection } from '../../pipeline/estimate/options.js';
import { calibrateClaudeCorrection, type Calibration } from '../../service/offline.js';

interface EstimateCliOptions {
  json?: boolean;
  profile: Profile;
  strategy: StrategyName;
  exact?: boolean;
  claudeCorrection?: number;
  anthropicModel?: string;
  calibrateFrom?: string;
}

/** One file as the guard sees it: text as text; binary bytes as the base64 a tool would carry them in. */
export function textAsGuardSees(buf: Buffer): { text: string; binary: boolean } {
  if (isBinaryBytes(buf)) return { text: buf.toString('base64'), binary: true };
  return { text: buf.toString('utf8'), binary: false };
}

export interface FileEstimate {
  file: string;
  chars: number;
  bytes: number;
  binary: boolean;
  default: StrategyName;
  profile: Profile;
  estimates: Partial<Record<StrategyName, number>>;
  correction?: number;
  /** With --anthropic-model: Anthropic's count_tokens for that model, and what it implies for the correction. */
  anthropicApi?: { model: string; tokens: number; legacyClaude: number; impliedCorrection: number };
}

/** Every strategy for the chosen profile (its exact tokenizer included); all tokenizers with `exact`. */
export async function estimateFile(file: string, opts: EstimateCliOptions): Promise<FileEstimate> {
  // The one safe open (safe-open.ts): a FIFO (even `<(…)`), socket or device would block or never end.
  const { fd } = openUntrustedSync(file);
  let buf: Buffer;
  try {
    buf = fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  const { text, binary } = textAsGuardSees(buf);
  const report = await describeTokens(text, { profile: opts.profile, claudeCorrection: currentCorrection(opts.claudeCorrection), exact: opts.exact ? PROFILES : [opts.profile] });
  const estimates: Partial<Record<StrategyName, number>> = Object.fromEntries(report.estimates.map((e) => [e.strategy, e.tokens]));
  const correction = report.claudeCorrection;
  let anthropicApi: FileEstimate['anthropicApi'];
  if (opts.anthropicModel) {
    const tokens = await countTokensAnthropicApi(text, { model: opts.anthropicModel, apiKey: process.env.ANTHROPIC_API_KEY });
    const legacyClaude = (await countTokens(text, 'claude', { claudeCorrection: 1 })).tokens;
    anthropicApi = { model: opts.anthropicModel, tokens, legacyClaude, impliedCorrection: legacyClaude ? Number((tokens / legacyClaude).toFixed(4)) : 1 };
  }
  return {
    file,
    chars: text.length,
    bytes: buf.length,
    binary,
    default: opts.strategy,
    profile: opts.profile,
    estimates,
    ...(correction !== 1 && (opts.profile === 'claude' || opts.exact) ? { correction } : {}),
    ...(anthropicApi ? { anthropicApi } : {}),
  };
}

function table(rows: FileEstimate[], strategies: StrategyName[]): string {
  const head = ['file', 'chars', 'bytes', ...strategies.map((s) => (s === rows[0]?.default ? `${s}*` : s))];
  // File names are the user's, or anyone's who named a file: escaped before the widths are measured.
  const body = rows.map((r) => [terminalSafe(r.binary ? `${r.file} (binary→base64)` : r.file), String(r.chars), String(r.bytes), ...strategies.map((s) => (r.estimates[s] === undefined ? '-' : String(r.estimates[s])))]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), ...body.map(line)].join('\n');
}

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '-');

function calibrationTable(c: Calibration): string {
  const out: string[] = [];
  out.push(`${c.files} transcript(s), ${c.calls} call(s), ${c.samples.length} sample(s): the API's growth between two calls vs the legacy claude tokenizer on the tool results that entered`);
  const s = c.skipped;
  out.push(`left out: ${s.small} with under 300 tokens of results, ${s.mostlyOther} mostly other text, ${s.afterCompaction} right after a compaction, ${s.noUsage} without usage, ${s.noText} whose result text is not in the transcript, ${s.implausible} with a ratio no tokenizer explains (outside 0.5 to 3)`);
  if (!c.overall) {
    out.push('no sample: nothing fitted');
    return out.join('\n') + '\n';
  }
  out.push('');
  out.push(`model                          samples  correction  error now (median / p90)  fitted (median / p90)`);
  for (const f of [...c.byModel, ...(c.byModel.length > 1 ? [c.overall] : [])]) {
    out.push(`${f.model.padEnd(30)} ${String(f.samples).padStart(7)}  ${f.correction.toFixed(3).padStart(10)}  ${`${pct(f.before.median)} / ${pct(f.before.p90)}`.padStart(24)}  ${`${pct(f.after.median)} / ${pct(f.after.p90)}`.padStart(21)}`);
  }
  out.push('');
  const fitted = c.overall.correction;
  try {
    parseClaudeCorrection(fitted);
    out.push(`the correction in effect is ${c.current}; to use the fitted one: ${CLAUDE_CORRECTION_ENV}=${fitted.toFixed(3)} (or --claude-correction ${fitted.toFixed(3)})`);
  } catch {
    out.push(`the fitted ${fitted.toFixed(3)} is outside what a tokenizer could explain (0.5 to 3): the usage in these transcripts is not a real model's (a test double's?); not to be used`);
  }
  for (const n of c.notes) out.push(`note: ${n}`);
  return out.join('\n') + '\n';
}

/** The correction in effect: the option, else the env var (ignored when not a sane number), else 1. */
function currentCorrection(opt: number | undefined): number {
  return opt ?? claudeCorrectionFromEnv(process.env) ?? 1;
}

export function register(program: Command): void {
  program
    .command('estimate')
    .description('Estimate the tokens of files with every strategy (binary files: as the base64 a tool result would carry)')
    .argument('[file...]', 'files to estimate')
    .option('--json', 'one JSON line per file: {"file","chars","bytes","default","profile","estimates":{...}}')
    .addOption(new Option('--profile <profile>', 'tokenizer family: o200k (GPT-4o/4.1/5, o-series), cl100k (GPT-4/3.5), claude').choices([...PROFILES]).default(DEFAULT_PROFILE))
    .addOption(
      new Option('--strategy <strategy>', 'the strategy the guard decides with (reported as "default")')
        .choices([...CHEAP_STRATEGIES, ...EXACT_STRATEGIES])
        .default(DEFAULT_STRATEGY),
    )
    .option('--exact', 'also count with every real tokenizer (o200k, cl100k, claude), not only the profile\'s')
    .option('--claude-correction <factor>', 'multiplier for the claude profile (newer Claude models); default $SPILLWAY_CLAUDE_CORRECTION or 1', (v) => {
      try {
        return parseClaudeCorrection(v);
      } catch (err) {
        throw new InvalidArgumentError((err as Error).message);
      }
    })
    .option(
      '--anthropic-model <model>',
      "opt-in, needs ANTHROPIC_API_KEY and the network: also ask Anthropic's count_tokens API for this model and report the implied claude correction",
    )
    .option(
      '--calibrate-from <path>',
      'fit the claude correction on the API usage in Claude Code transcripts there (a .jsonl or a folder such as ~/.claude/projects); prints the fit and its error',
    )
    .action(async (files: string[], opts: EstimateCliOptions) => {
      if (opts.calibrateFrom !== undefined) {
        const c = await calibrateClaudeCorrection(opts.calibrateFrom, { current: currentCorrection(opts.claudeCorrection) });
        // File names and models come from transcripts: escaped.
        if (opts.json) process.stdout.write(jsonLine({ ...c, samples: c.samples.length }) + '\n');
        else process.stdout.write(terminalSafe(calibrationTable(c)));
        if (!files.length) return;
      }
      if (!files.length) throw new InvalidArgumentError('give files to estimate, or --calibrate-from a transcript or folder');
      if (opts.anthropicModel && !process.env.ANTHROPIC_API_KEY) throw new Error('--anthropic-model needs ANTHROPIC_API_KEY');
      const rows: FileEstimate[] = [];
      let failed = 0;
      for (const file of files) {
        try {
          const row = await estimateFile(file, opts);
          if (opts.json) process.stdout.write(jsonLine(row) + '\n');
          rows.push(row);
        } catch (err) {
          failed++;
          const code = (err as NodeJS.ErrnoException).code;
          process.stderr.write(terminalSafe(`spillway estimate: ${file}: ${code === 'ENOENT' || code === 'NOT_FOUND' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (err as Error).message}`) + '\n');
        }
      }
      if (!opts.json && rows.length) {
        const strategies: StrategyName[] = [...CHEAP_STRATEGIES, ...(opts.exact ? PROFILES : [opts.profile])];
        process.stdout.write(table(rows, strategies) + '\n');
        process.stdout.write(`profile ${opts.profile}; * = the strategy the guard decides with\n`);
        for (const r of rows) {
          if (r.anthropicApi) {
            const a = r.anthropicApi;
            process.stdout.write(terminalSafe(`${r.file}: count_tokens(${a.model}) = ${a.tokens}, legacy claude = ${a.legacyClaude}, implied correction ${a.impliedCorrection}`) + '\n');
          }
        }
      }
      if (failed) process.exitCode = 1;
    });
}
