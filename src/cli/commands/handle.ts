import fs from 'node:fs/promises';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { withHandles, type HandleQuery, type HandleStore } from '../../service/offline.js';
import { restoreFromStore } from '../../pipeline/index.js';
import { S3SpillStore, closeBuckets, isS3Url } from '../../pipeline/store/s3/index.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

/** Hours → ms for --ttl. */
const MS_PER_HOUR = 3_600_000;

interface Common {
  session?: string;
  json?: boolean;
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

function nonNegInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${flag} must be a whole number ≥ 0.`);
    return n;
  };
}

/** Handles live in `<session>/handles.sqlite`; the session defaults to the current directory. */
function withStore<T>(o: Common, f: (s: HandleStore) => T | Promise<T>): Promise<T> {
  return withHandles(path.resolve(o.session ?? process.cwd()), f);
}

/** Rows, lines and tool names come from payloads: never raw terminal controls. */
const out = (x: unknown) => process.stdout.write(`${typeof x === 'string' ? terminalSafe(x) : jsonLine(x)}\n`);

export function register(program: Command): void {
  const handle = program
    .command('handle')
    .description('layer 3: store a result under a handle and drill into it (filter, group, sort, page, grep); handles live in <session>/handles.sqlite');

  const sessionOpt = ['--session <dir>', 'session folder holding handles.sqlite (default: the current directory)'] as const;

  handle
    .command('put')
    .description('store a payload (JSON array/object, NDJSON, CSV/TSV, or text) and print its handle and receipt')
    .argument('<file>', 'the payload (its s3:// URL, or - for stdin)')
    .option(...sessionOpt)
    .option('--tool <name>', 'tool that produced it')
    .option('--ttl <hours>', 'hours the handle lives (default 168)', (v) => {
      const n = Number(v);
      if (!(n > 0)) throw new InvalidArgumentError('--ttl must be a positive number of hours.');
      return n;
    })
    .option('--json', 'print {"handle","rows","columns","sample"}')
    .action(async (file: string, o: Common & { tool?: string; ttl?: number }) => {
      let data: Buffer;
      if (file === '-') {
        const chunks: Buffer[] = [];
        for await (const c of process.stdin) chunks.push(c as Buffer);
        data = Buffer.concat(chunks);
      } else if (isS3Url(file)) {
        // A spill in a bucket: its exact original bytes, restored from the objects.
        const { store, metaKey } = S3SpillStore.locate(file);
        data = await restoreFromStore(store, metaKey).finally(() => closeBuckets());
      } else data = await fs.readFile(file).catch((err: Error) => Promise.reject(new Error(`cannot read ${file}: ${err.message}`)));
      await withStore(o, (s) => {
        const r = s.put(data.toString('utf8'), { tool: o.tool, ttlMs: o.ttl ? o.ttl * MS_PER_HOUR : undefined, fileName: file });
        if (o.json) out({ handle: r.handle, rows: r.rows, columns: r.columns, sample: r.sample });
        else {
          out(`${r.handle}: ${r.rows} ${r.kind === 'rows' ? 'rows' : 'lines'} from ${r.source}, expires ${r.expiresAt}`);
          out(`columns: ${r.columns.join(', ')}`);
          for (const row of r.sample) out(`  ${JSON.stringify(row)}`);
          out(r.hint);
        }
      });
    });

  handle
    .command('query')
    .description('filter, project, sort, group and page a handle')
    .argument('<id>', 'the handle (h_…)')
    .option(...sessionOpt)
    .option('--where <cond>', 'field=value, field!=value, field>n, field<n, field>=n, field<=n, field~text (repeat: ANDed)', collect)
    .option('--select <fields>', 'fields to return, comma-separated (dotted for nested: user.login)')
    .option('--group-by <fields>', 'group by these fields (comma-separated)')
    .option('--agg <agg>', 'count, sum:F, avg:F, min:F, max:F (repeatable; default count)', collect)
    .option('--distinct <fields>', 'distinct values of these fields')
    .option('--sort <field>', 'sort by field, -field for descending (repeatable)', collect)
    .option('--limit <n>', 'rows to return (default 50, at most 1000)', nonNegInt('--limit'))
    .option('--offset <n>', 'rows to skip', nonNegInt('--offset'))
    .option('--json', 'print {"rows": [...], "truncated"}')
    .action(async (id: string, o: Common & { where?: string[]; select?: string; groupBy?: string; agg?: string[]; distinct?: string; sort?: string[]; limit?: number; offset?: number }) => {
      const q: HandleQuery = {
        where: o.where,
        select: o.select ? o.select.split(',') : undefined,
        groupBy: o.groupBy,
        agg: o.agg,
        distinct: o.distinct,
        sort: o.sort,
        limit: o.limit,
        offset: o.offset,
      };
      await withStore(o, (s) => {
        const r = s.query(id, q);
        if (o.json) out({ rows: r.rows, truncated: r.truncated });
        else {
          for (const row of r.rows) out(row);
          const shown = (o.offset ?? 0) + r.rows.length;
          process.stderr.write(`${r.rows.length} rows${r.total !== undefined ? ` of ${r.total}` : ''}${r.truncated ? `; more: --offset ${shown}` : ''}\n`);
        }
      });
    });

  handle
    .command('grep')
    .description('search a handle (lines, or rows as JSON) with context; plain case-insensitive text unless --regex')
    .argument('<id>', 'the handle (h_…)')
    .argument('<pattern>', 'text to find')
    .option(...sessionOpt)
    .option('-C, --context <n>', 'lines of context around each match (at most 20)', nonNegInt('--context'))
    .option('--max <n>', 'matches to return (default 50, at most 500)', nonNegInt('--max'))
    .option('--regex', 'treat the pattern as a regular expression (checked for catastrophic backtracking, time-limited)')
    .option('--case-sensitive', 'match case')
    .option('--json', 'print {"matches": [...], "truncated", "total"}')
    .action(async (id: string, pattern: string, o: Common & { context?: number; max?: number; regex?: boolean; caseSensitive?: boolean }) => {
      await withStore(o, async (s) => {
        const r = await s.grep(id, pattern, { context: o.context, maxMatches: o.max, regex: o.regex, ignoreCase: !o.caseSensitive });
        if (o.json) return out(r);
        for (const m of r.matches) {
          for (const b of m.before ?? []) out(`${b.n}-${b.line}`);
          out(`${m.n}:${m.line}`);
          for (const a of m.after ?? []) out(`${a.n}-${a.line}`);
          if (o.context) out('--');
        }
        process.stderr.write(`${r.matches.length} of ${r.total ?? r.matches.length} matches${r.truncated ? ' (more: --max N)' : ''}\n`);
      });
    });

  handle
    .command('delete')
    .description('delete a handle now')
    .argument('<id>', 'the handle (h_…)')
    .option(...sessionOpt)
    .action(async (id: string, o: Common) => {
      await withStore(o, (s) => {
        if (!s.delete(id)) throw new Error(`no handle ${id}`);
        out(`deleted ${id}`);
      });
    });

  handle
    .command('list')
    .description('list live handles of the session')
    .option(...sessionOpt)
    .option('--json', 'machine-readable output')
    .action(async (o: Common) => {
      await withStore(o, (s) => {
        const rows = s.list();
        if (o.json) return out(rows);
        for (const h of rows) out(`${h.handle}  ${String(h.rows).padStart(9)} ${h.kind}  ${h.tool ?? '-'}  expires ${h.expiresAt}`);
      });
    });

  handle
    .command('sweep')
    .description('drop expired handles now (opening a store also does)')
    .option(...sessionOpt)
    .action(async (o: Common) => {
      await withStore(o, (s) => out(`swept ${s.sweep()} expired handles`));
    });
}
