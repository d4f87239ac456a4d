import type { Command } from 'commander';
import { Option } from 'commander';
import type { CompareSessionsResponse, SessionGroupFigures, ToolEvidence, ToolEvidenceResponse } from '../../service/contract.js';
import { indexFolders, sessionEvidence } from '../../service/offline.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

const n = (v: number) => v.toLocaleString('en-US');
const pct = (v: number | null) => (v === null ? '-' : `${Math.round(v * 100)}%`);

function toolLine(t: ToolEvidence): string {
  return `${t.tool.padEnd(32)} ${n(t.calls).padStart(7)} ${n(t.spills).padStart(7)} ${pct(t.spillRate).padStart(6)} ${n(t.spillsReadBack).padStart(9)} ${pct(t.readBackRate).padStart(6)} ${n(t.readBackCalls).padStart(7)} ${n(t.readBackTokens).padStart(9)} ${n(t.sessions).padStart(8)}`;
}

function evidenceTable(e: ToolEvidenceResponse): string {
  const out: string[] = [];
  const head = `${'tool'.padEnd(32)} ${'calls'.padStart(7)} ${'spills'.padStart(7)} ${'rate'.padStart(6)} ${'read back'.padStart(9)} ${'rate'.padStart(6)} ${'rb calls'.padStart(7)} ${'rb tokens'.padStart(9)} ${'sessions'.padStart(8)}`;
  out.push(`${n(e.totals.sessions)} sessions, ${n(e.totals.calls)} calls, ${n(e.totals.spills)} spills, ${n(e.totals.spillsReadBack)} read back (${n(e.totals.readBackCalls)} calls, ${n(e.totals.readBackTokens)} tokens)`);
  out.push('', head);
  for (const t of e.tools) out.push(toolLine(t));
  if (e.servers.length) {
    out.push('', 'MCP servers:', head);
    for (const t of e.servers) out.push(toolLine(t));
  }
  const used = e.tools.filter((t) => t.settings.length);
  if (used.length) {
    out.push('', 'settings the spills ran with (spills, sessions):');
    for (const t of used) for (const s of t.settings) out.push(`  ${t.tool}: ${s.label} (${n(s.spills)}, ${n(s.sessions)})`);
  }
  const read = e.tools.filter((t) => t.parts.length);
  if (read.length) {
    out.push('', 'read back most:');
    for (const t of read) out.push(`  ${t.tool}: ${t.parts.map((p) => `${p.part} ×${p.count}`).join(', ')}`);
  }
  out.push('', `suggestions (only with ${n(e.thresholds.minSpills)}+ spills in ${n(e.thresholds.minSessions)}+ sessions):`);
  if (!e.suggestions.length) out.push('  none: no tool has enough evidence, or its read-back rate says nothing either way');
  for (const s of e.suggestions) out.push(`  ${s.text}`);
  return out.join('\n') + '\n';
}

function groupLine(g: SessionGroupFigures): string {
  return `${g.label}\n  ${n(g.sessions)} sessions (${g.from?.slice(0, 10) ?? '-'} to ${g.to?.slice(0, 10) ?? '-'}), ${n(g.calls)} calls, spill rate ${pct(g.spillRate)} (${n(g.spills)}), read-back rate ${pct(g.readBackRate)} (${n(g.spillsReadBack)}; ${n(g.readBackCalls)} calls, ${n(g.readBackTokens)} tokens), kept out ${n(g.keptOutTokens)} tokens, entered ${n(g.enteredTokens)} tokens`;
}

function compareTable(c: CompareSessionsResponse): string {
  const what = c.by === 'date' ? `before and from ${c.since}` : 'by the rule recorded in their spills';
  return [`sessions ${what}${c.tool ? `, ${c.tool} calls only` : ''}:`, ...(c.groups.length ? c.groups.map(groupLine) : ['  no sessions'])].join('\n') + '\n';
}

/**
 * `spillway evidence [FOLDER...] [--by rule|date --since DATE] [--tool NAME] [--json]`: across the
 * indexed sessions (the folders given are indexed first), per tool and MCP server, how often it
 * spilled and how often a spill was read back, what reading back cost, the settings used, and
 * suggestions; with `--by`, sessions before and after a rule change. A verb of its own: `spillway
 * context` is one session's timeline, this is every session's evidence (docs/inspector.md).
 */
export function register(program: Command): void {
  program
    .command('evidence')
    .description('per tool and MCP server: spills, spills read back and what reading back cost, the settings used, suggested rules; sessions before and after a rule change')
    .argument('[folders...]', 'index these folders (or s3:// prefixes) first, as `spillway index` does')
    .addOption(new Option('--by <how>', 'also compare sessions: by the rule recorded in their spills, or before and from --since').choices(['rule', 'date']))
    .option('--since <date>', 'with --by date: an ISO date or time (2026-12-01, 2026-12-01T10:00:00Z)')
    .option('--tool <name>', 'compare this tool\'s calls only (its name as listed, e.g. Bash or mcp__fs__read_file)')
    .option('--db <file>', 'index database (default: the app-data folder\'s index.sqlite)')
    .option('--json', 'print the evidence (and the comparison) as JSON')
    .action(async (folders: string[], opts: { by?: 'rule' | 'date'; since?: string; tool?: string; db?: string; json?: boolean }, cmd: Command) => {
      // Printed with the usage hint, exit code 2 (main.ts).
      const usage = (m: string): never => cmd.error(`error: ${m}`, { exitCode: 2, code: 'spillway.usage' });
      if (opts.since !== undefined && opts.by !== 'date') usage('--since goes with --by date');
      if (opts.by === 'date' && (opts.since === undefined || !/^\d{4}-\d{2}-\d{2}/.test(opts.since) || Number.isNaN(Date.parse(opts.since)))) {
        usage(`--by date needs --since with an ISO date or time (2026-12-01), not ${JSON.stringify(opts.since ?? '')}`);
      }
      if (opts.tool !== undefined && opts.by === undefined) usage('--tool goes with --by');
      if (folders.length) await indexFolders({ dirs: folders, dbPath: opts.db, env: process.env, onWarning: (w) => process.stderr.write(terminalSafe(`warning: ${w}\n`)) });
      const r = await sessionEvidence({
        dbPath: opts.db,
        env: process.env,
        ...(opts.by ? { compare: { by: opts.by, ...(opts.since !== undefined ? { since: opts.since } : {}), ...(opts.tool !== undefined ? { tool: opts.tool } : {}) } } : {}),
      });
      // Tool names, rule keys and read-back patterns come from transcripts and sidecars: payload-derived text.
      if (opts.json) process.stdout.write(jsonLine(r) + '\n');
      else process.stdout.write(terminalSafe(evidenceTable(r.evidence) + (r.compare ? '\n' + compareTable(r.compare) : '')));
    });
}
