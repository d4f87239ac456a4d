import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import { ALL_STRATEGIES, PROFILES, type Profile, type StrategyName } from '../../pipeline/index.js';
import type { TimelineData } from '../../service/contract.js';
import { contextTimeline } from '../../service/offline.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

const n = (v: number | null | undefined) => (v === null || v === undefined ? '-' : v.toLocaleString('en-US'));

function positive(v: string, prev: number[] = []): number[] {
  const x = Number(v.replace(/[_,]/g, '').replace(/k$/i, '000'));
  if (!Number.isInteger(x) || x <= 0) throw new InvalidArgumentError(`not a positive whole number of tokens: ${v}`);
  return [...prev, x];
}

function csv(t: TimelineData): string {
  const replays = t.replays;
  const head = ['call', 'at', 'kind', 'context', 'input', 'cache_write', 'cache_read', 'output', 'delta', 'residual', 'tool_results', 'compaction_before', ...replays.map((r) => `simulated: ${r.label}`)];
  const compacted = new Set(t.compactions.map((c) => c.turn));
  const esc = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const rows = t.turns.map((x, i) =>
    [i, x.at, x.kind, x.context ?? '', x.input ?? '', x.cacheWrite ?? '', x.cacheRead ?? '', x.output ?? '', x.delta ?? '', x.residual ?? '', x.tools.map((y) => y.name).join(' '), compacted.has(i) ? 1 : 0, ...replays.map((r) => r.contexts[i] ?? '')]
      .map((v) => esc(String(v)))
      .join(','),
  );
  return [head.map(esc).join(','), ...rows].join('\n') + '\n';
}

/** Which message stood in for each replaced result: the real guard's, built offline, or an estimate of it. */
function messagesFrom(x: TimelineData['replays'][number]): string {
  const m = x.messages;
  const said = [m.guard ? `${m.guard} message(s) built by the guard offline` : '', m.saved ? `${m.saved} as saved when spilled` : '', m.fixed ? `${m.fixed} at the usual 600 tokens` : ''].filter(Boolean);
  if (x.pending) said.push(`${x.pending} not built in time`);
  return said.join(', ');
}

function table(t: TimelineData): string {
  const out: string[] = [];
  const r = t.rule;
  out.push(`window ${n(r.window)} (${r.windowSource}), auto-compact trigger ${n(r.trigger)} (${r.triggerSource}: ${r.how})`);
  out.push('');
  out.push('call  context      delta        output  tool results');
  const compacted = new Map(t.compactions.map((c) => [c.turn, c]));
  t.turns.forEach((x, i) => {
    const c = compacted.get(i);
    if (c) out.push(`----  compaction (${c.kind}${c.trigger ? `, ${c.trigger}` : ''}${c.preTokens ? `, ${n(c.preTokens)} before` : ''})`);
    const tools = x.tools.map((y) => `${y.name} ${n(y.tokens)}`).join(', ');
    out.push(`${String(i).padStart(4)}  ${n(x.context).padStart(11)}  ${n(x.delta).padStart(11)}  ${n(x.output).padStart(6)}  ${tools}`);
  });
  out.push('');
  const m = t.measured;
  out.push(`measured: peak ${n(m.peak)}, ${m.compactions} compaction(s), ${m.calls} call(s), $${m.costUsd.toFixed(4)} at the price table`);
  out.push('');
  out.push('top results by cost (tokens × calls in context; paid as the session cached: written, read from the cache, sent again):');
  for (const c of t.topCosts.slice(0, 10)) {
    // Against what the client would have let in anyway (its own caps): what the spill kept out, negative when its message outweighed that.
    const saved = c.savedTokens ? `; kept out vs the client's own ${n(c.clientTokens)}: ${n(c.savedTokens)} ($${(c.savedUsd ?? 0).toFixed(4)})` : '';
    out.push(`  call ${c.turn}: ${c.name} ${n(c.tokens)} × ${c.turnsInContext} = ${n(c.tokens * c.turnsInContext)} (write ${n(c.cacheWriteTokens)}, reads ${n(c.cacheReadTokens)}${c.inputTokens ? `, plain input ${n(c.inputTokens)}` : ''}${saved})`);
  }
  out.push('');
  out.push('simulated (the model might have acted differently):');
  for (const x of t.replays) {
    out.push(`  ${x.label.padEnd(28)} peak ${n(x.peak).padStart(11)}  compactions ${String(x.compactionsAt.length).padStart(2)}${x.compactionsAt.length ? ` (before call ${x.compactionsAt.join(', ')})` : ''}  $${x.costUsd.toFixed(4)}${x.replaced ? `  ${x.replaced} result(s) replaced (${messagesFrom(x)})` : ''}`);
  }
  if (t.warning) out.push('', `warning: ${t.warning}`);
  for (const note of t.notes) out.push(`note: ${note}`);
  return out.join('\n') + '\n';
}

/**
 * `spillway context SESSION_OR_TRANSCRIPT [--limit N]... [--keep-last N]... [--json|--csv]`: the
 * context of each model call as the API measured it, the compactions, what cost most, and what
 * each guard limit would have changed (simulated). docs/timeline.md says where each number comes from.
 */
export function register(program: Command): void {
  program
    .command('context')
    .description('the context per model call of a session, its compactions, and what another limit would have done (simulated)')
    .argument('<session-or-transcript>', 'a transcript file or session folder (indexed first), or a session id or name from the index')
    .option('--limit <tokens>', 'replay the session with the guard at this limit (repeatable)', positive)
    .option('--keep-last <n>', 'replay keeping only the last N tool results whole (repeatable)', positive)
    .option('--auto-compact-pct <pct>', 'the session ran with CLAUDE_AUTOCOMPACT_PCT_OVERRIDE=pct', Number)
    .option('--auto-compact-limit <tokens>', 'the session ran with this auto-compact limit (Codex model_auto_compact_token_limit)', Number)
    .option('--no-auto-compact', 'the session ran with DISABLE_AUTO_COMPACT')
    .addOption(new Option('--strategy <strategy>', 'the estimator the replayed guard decides with (default: the guard\'s)').choices([...ALL_STRATEGIES]))
    .addOption(new Option('--profile <profile>', 'the tokenizer family of the replayed guard (default: the guard\'s)').choices([...PROFILES]))
    .option('--db <file>', 'index database (default: the app-data folder\'s index.sqlite)')
    .option('--json', 'print the whole timeline as JSON')
    .option('--csv', 'print one row per call as CSV, a column per replay')
    .action(async (target: string, opts: { limit?: number[]; keepLast?: number[]; autoCompactPct?: number; autoCompactLimit?: number; autoCompact?: boolean; strategy?: StrategyName; profile?: Profile; db?: string; json?: boolean; csv?: boolean }) => {
      if (opts.json && opts.csv) throw new InvalidArgumentError('--json and --csv: choose one');
      const t = await contextTimeline({
        target,
        env: process.env,
        dbPath: opts.db,
        request: {
          limits: opts.limit,
          keepLast: opts.keepLast,
          autoCompactPct: opts.autoCompactPct,
          autoCompactLimit: opts.autoCompactLimit,
          autoCompactDisabled: opts.autoCompact === false ? true : undefined,
          strategy: opts.strategy,
          profile: opts.profile,
        },
      });
      // Tool names and notes come from transcripts: payload-derived text.
      if (opts.json) process.stdout.write(jsonLine(t) + '\n');
      else if (opts.csv) process.stdout.write(terminalSafe(csv(t)));
      else process.stdout.write(terminalSafe(table(t)));
    });
}
