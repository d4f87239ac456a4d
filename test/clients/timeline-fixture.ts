/**
 * How a real run's transcript becomes a fixture under test/index/fixtures/timeline: the run's
 * temp folders renamed to `/home/dev` (HOME) and `/home/dev/project` (working directory), and the
 * lines that carry no turn, usage, compaction or tool traffic but weigh the most dropped:
 * - every `prompt_snapshot` attachment (the whole system prompt again, 7-121 KB each);
 * - every `api-request-shape` after the first (the first is the baseline the timeline reads).
 *
 * `npx tsx test/clients/timeline-fixture.ts FILE...` applies the same rule to fixtures in place.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface FixtureRenames {
  home?: string;
  cwd?: string;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The fixture text of one transcript: the rule above, paths renamed, line order kept. */
export function fixtureText(text: string, renames: FixtureRenames = {}): { text: string; dropped: number } {
  const out: string[] = [];
  let shapes = 0;
  let dropped = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let o: any;
    try {
      o = JSON.parse(line);
    } catch {
      out.push(line);
      continue;
    }
    const drop = (o?.type === 'attachment' && o.attachment?.type === 'prompt_snapshot') || (o?.type === 'api-request-shape' && shapes++ > 0);
    if (drop) dropped++;
    else out.push(line);
  }
  return { text: renamePaths(out.length ? `${out.join('\n')}\n` : '', renames), dropped };
}

/** The run's temp folders as `/home/dev` and `/home/dev/project`, in text and in Claude Code's project folder names. */
export function renamePaths(s: string, renames: FixtureRenames): string {
  // The working directory sits inside the temp folders; rename the longer path first.
  const pairs = [
    [renames.cwd, '/home/dev/project'],
    [renames.home, '/home/dev'],
  ].filter((p): p is [string, string] => !!p[0]);
  for (const [from, to] of pairs) {
    s = s.replace(new RegExp(escapeRe(from), 'g'), to);
    // Claude Code's project folder name: the path with every non-alphanumeric character as '-'.
    s = s.replace(new RegExp(escapeRe(from.replace(/[^a-zA-Z0-9]/g, '-')), 'g'), to.replace(/[^a-zA-Z0-9]/g, '-'));
  }
  return s;
}

/** Copy a run's transcripts (a folder tree of .jsonl/.json) into a fixture folder by the rule above. */
export function writeFixture(from: string, to: string, renames: FixtureRenames = {}): string[] {
  const written: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && /\.(jsonl|json)$/.test(e.name)) {
        let rel = path.relative(from, p);
        for (const r of [renames.cwd, renames.home]) if (r) rel = rel.split(r.replace(/[^a-zA-Z0-9]/g, '-')).join(r === renames.cwd ? '-home-dev-project' : '-home-dev');
        const dest = path.join(to, rel);
        fs.mkdirSync(path.dirname(dest), { recursive: true });
        const text = fs.readFileSync(p, 'utf8');
        fs.writeFileSync(dest, e.name.endsWith('.jsonl') ? fixtureText(text, renames).text : renamePaths(text, renames));
        written.push(dest);
      }
    }
  };
  if (fs.existsSync(from)) walk(from);
  return written;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  for (const f of process.argv.slice(2)) {
    const { text, dropped } = fixtureText(fs.readFileSync(f, 'utf8'));
    fs.writeFileSync(f, text);
    console.log(`${f}: ${dropped} line(s) dropped`);
  }
}
