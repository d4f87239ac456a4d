import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { appPaths } from '../../pipeline/index.js';
import { applyProjection, checkProjectionSpec, projectionSpecFor, suggestProjectionFor, type ProjectionSpec } from '../../service/offline.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

interface ProjectCliOptions {
  suggest?: boolean;
  spec?: string;
  tool?: string;
  save?: string;
  dir?: string;
  json?: boolean;
  top?: number;
}

async function readSpec(arg: string): Promise<ProjectionSpec> {
  const t = arg.trim();
  let raw: string;
  if (t.startsWith('{')) raw = t;
  else {
    try {
      raw = await fs.readFile(arg, 'utf8');
    } catch (err) {
      throw new Error(`--spec: cannot read ${arg}: ${(err as Error).message} (give a spec file or inline JSON)`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new Error(`--spec: not valid JSON (${(err as Error).message})`);
  }
  return checkProjectionSpec(parsed, '--spec');
}

const pct = (a: number, b: number) => (b > 0 ? `${Math.round((100 * (b - a)) / b)}%` : '0%');

export async function runProject(file: string, o: ProjectCliOptions): Promise<void> {
  const dir = o.dir ?? appPaths(process.env).projections;
  const text = file === '-' ? await readStdin() : await fs.readFile(file, 'utf8').catch((err: Error) => {
    throw new Error(`cannot read ${file}: ${err.message}`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file} is not JSON (${(err as Error).message}): projection works on JSON payloads`);
  }
  if (o.suggest) {
    const s = suggestProjectionFor(text, value, { save: o.save, dir });
    const saved = s.saved;
    if (o.json) {
      process.stdout.write(jsonLine({ spec: s.spec, fields: s.fields, tokensBefore: s.tokensBefore, tokensAfter: s.tokensAfter, ...(saved ? { saved } : {}) }) + '\n');
      return;
    }
    const top = s.fields.slice(0, o.top ?? 30);
    process.stdout.write(`Fields by token cost (${s.fields.length} in all):\n`);
    for (const f of top) {
      process.stdout.write(
        `  ${f.keep ? 'keep' : 'drop'}  ${String(f.tokens).padStart(8)} tok  ${(f.share * 100).toFixed(1).padStart(5)}%  ${terminalSafe(f.path)}  (${terminalSafe(f.reason)})\n`,
      );
    }
    if (s.fields.length > top.length) process.stdout.write(`  … ${s.fields.length - top.length} more (--top N, or --json)\n`);
    process.stdout.write(`\nProposed spec (tokens ${s.tokensBefore} → ${s.tokensAfter}, −${pct(s.tokensAfter, s.tokensBefore)}):\n${jsonLine(s.spec, 2)}\n`);
    if (saved) process.stdout.write(`saved as ${saved}\n`);
    return;
  }
  let spec: ProjectionSpec | undefined;
  if (o.spec) spec = await readSpec(o.spec);
  else if (o.tool) {
    spec = projectionSpecFor(o.tool, dir);
    if (!spec) throw new Error(`no saved projection spec for tool ${JSON.stringify(o.tool)} in ${dir}`);
  } else throw new Error('project needs --suggest, --spec SPEC or --tool NAME');
  const { value: out, stats, tokensBefore: before, tokensAfter: after, saved } = applyProjection(text, value, spec, { save: o.save, dir });
  const outText = jsonLine(out, o.json ? undefined : 2);
  if (o.json) {
    process.stdout.write(jsonLine({ tokensBefore: before, tokensAfter: after, stats, ...(saved ? { saved } : {}), result: out }) + '\n');
  } else {
    process.stdout.write(outText + '\n');
    process.stderr.write(`tokens ${before} → ${after} (−${pct(after, before)})${saved ? `; spec saved as ${saved}` : ''}\n`);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function register(program: Command): void {
  program
    .command('project')
    .description('layer 1: keep only the fields that matter in a JSON payload (suggest a spec, apply one, save one per tool)')
    .argument('<file>', 'a JSON payload (or - for stdin)')
    .option('--suggest', 'rank fields by the tokens they cost and propose a spec')
    .option('--spec <spec>', 'apply a spec: a file, or inline JSON like \'{"keep":["$[*].id","$[*].title"]}\'')
    .option('--tool <name>', 'apply the spec saved for this tool')
    .option('--save <tool>', 'save the spec (proposed or given) for this tool; the guard and the MCP proxy then apply it')
    .option('--dir <dir>', 'projection specs folder (default: the app-data projections/ folder)')
    .option('--top <n>', 'fields listed by --suggest (default 30)', (v) => Math.max(1, Number(v) || 30))
    .option('--json', 'machine-readable output')
    .action(async (file: string, o: ProjectCliOptions) => {
      await runProject(file, o);
    });
}
