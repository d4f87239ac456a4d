/**
 * What a tool call reads of a file: the generic half of read-back detection (the index links a
 * read to a spill, src/index/readback.ts). A client's own tools are parsed in
 * `<client>/readback.ts`; the proxy's drill-down tools and shell commands are the same in every
 * client, and parsed here.
 *
 * | export | for |
 * | --- | --- |
 * | `readAccessesOf(client, tool, input)` | every (file, part) a call reads, by the client's parser first, then the shared ones |
 * | `shellReads(command)` | the reads of one shell command line (`cat`, `sed -n`, `head`, `tail`, `grep`, `rg`, `jq`, `nl`, pipes) |
 * | `shellWords(command)` | a command line split into words and operators, as a POSIX shell would |
 */
import { CLAUDE_CODE_READS } from './claude-code/readback.js';
import { CODEX_READS } from './codex/readback.js';
import { GEMINI_CLI_READS } from './gemini-cli/readback.js';

/** The part of a file a call read. Lines are 1-based and inclusive; `end` absent means to the end. */
export type ReadPart =
  | { kind: 'whole' }
  | { kind: 'lines'; start: number; end?: number }
  | { kind: 'tail'; count: number }
  | { kind: 'bytes'; start: number; end?: number }
  | { kind: 'chars'; start: number; end?: number }
  | { kind: 'grep'; pattern: string; regex: 'fixed' | 'basic' | 'extended'; ignoreCase: boolean }
  | { kind: 'json'; path: string }
  | { kind: 'query'; query: string; handle?: string };

/** How the call read: the proxy's drill-down tools, the client's file reader or search tool, or a shell command. */
export type ReadVia = 'drill-down' | 'read' | 'search' | 'shell';

export interface ReadAccess {
  /** The file as the call named it (absolute, relative or a bare file name); empty for a handle-only query. */
  path: string;
  part: ReadPart;
  via: ReadVia;
}

/** One client's reader: the accesses of a call of one of its own tools, or undefined when the tool is not its. */
export type ClientReads = (tool: string, input: Record<string, unknown>) => ReadAccess[] | undefined;

// Built on first use: the clients' parsers import this module's shell reader (an import cycle).
let clientReads: Record<string, ClientReads> | undefined;
const CLIENT_READS = (): Record<string, ClientReads> => (clientReads ??= { 'claude-code': CLAUDE_CODE_READS, codex: CODEX_READS, gemini: GEMINI_CLI_READS });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : undefined);

/** The proxy's drill-down tools as a client lists them: `spillway_read`, a free suffix (`_2`), under a server prefix (`mcp__fs__`, `mcp_fs_`, `fs.`). */
const DRILL_DOWN = /(?:^|_|\.|\/)spillway_(read|grep|query)(?:_\d+)?$/;

/** The drill-down tools' reads (src/integrations/mcp/drilldown.ts defines their arguments). */
export function drillDownReads(tool: string, input: Obj): ReadAccess[] | undefined {
  const m = DRILL_DOWN.exec(tool);
  if (!m) return undefined;
  const p = str(input.path) ?? '';
  if (m[1] === 'read') {
    const s = int(input.startLine);
    const e = int(input.endLine);
    if (s !== undefined || e !== undefined) return [{ path: p, via: 'drill-down', part: { kind: 'lines', start: s ?? 1, ...(e !== undefined ? { end: e } : {}) } }];
    const o = int(input.offset);
    const l = int(input.limit);
    if (o !== undefined || l !== undefined) return [{ path: p, via: 'drill-down', part: { kind: 'chars', start: o ?? 0, ...(l !== undefined ? { end: (o ?? 0) + l } : {}) } }];
    return [{ path: p, via: 'drill-down', part: { kind: 'whole' } }];
  }
  if (m[1] === 'grep') {
    const pattern = str(input.pattern);
    if (pattern === undefined) return [];
    return [{ path: p, via: 'drill-down', part: { kind: 'grep', pattern, regex: input.regex === true ? 'extended' : 'fixed', ignoreCase: input.ignoreCase !== false } }];
  }
  const { path: _p, handle, ...rest } = input;
  const query = JSON.stringify(rest);
  return [{ path: p, via: 'drill-down', part: { kind: 'query', query, ...(typeof handle === 'string' ? { handle } : {}) } }];
}

/** Every (file, part) a call reads: its client's own tools, the drill-down tools, else none. */
export function readAccessesOf(client: string | undefined, tool: string, input: unknown): ReadAccess[] {
  if (!isObj(input)) return [];
  const dd = drillDownReads(tool, input);
  if (dd) return dd;
  // A session whose client is unknown (an imported folder): each client's parser is tried; their tool names differ.
  const own = client !== undefined ? CLIENT_READS()[client] : undefined;
  for (const reads of own ? [own] : Object.values(CLIENT_READS())) {
    const r = reads(tool, input);
    if (r) return r;
  }
  return [];
}

// --- shell --------------------------------------------------------------------------------------

/** A word, or an operator that ends a simple command (`|` passes output on; the others do not). */
export type ShellToken = { word: string } | { op: '|' | '||' | '&&' | ';' | '&' | '\n' | '>' | '>>' | '<' | '2>' | '2>&1' | '&>' };

/**
 * Split a command line into words and operators the way a POSIX shell does: single quotes keep
 * everything, double quotes keep all but `\"`, `\\`, `\$` and `` \` ``, a backslash outside quotes
 * escapes the next character, `#` at a word's start comments out the rest. Expansions (`$X`, globs,
 * `$(...)`) are left as written: a read-back names its file literally.
 *
 * No shell-words library is installed (shell-quote is not a dependency); this covers what agents
 * write, and is tested on their commands (test/agents/readback.test.ts).
 */
export function shellWords(line: string): ShellToken[] {
  const out: ShellToken[] = [];
  let cur = '';
  let inWord = false;
  const end = () => {
    if (inWord) out.push({ word: cur });
    cur = '';
    inWord = false;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const j = line.indexOf("'", i + 1);
      const stop = j < 0 ? line.length : j;
      cur += line.slice(i + 1, stop);
      inWord = true;
      i = stop;
    } else if (c === '"') {
      inWord = true;
      let j = i + 1;
      for (; j < line.length && line[j] !== '"'; j++) {
        if (line[j] === '\\' && j + 1 < line.length && '"\\$`\n'.includes(line[j + 1]!)) {
          if (line[j + 1] !== '\n') cur += line[j + 1];
          j++;
        } else cur += line[j];
      }
      i = j;
    } else if (c === '\\') {
      if (i + 1 < line.length && line[i + 1] !== '\n') {
        cur += line[i + 1];
        inWord = true;
      }
      i++;
    } else if (c === ' ' || c === '\t') end();
    else if (c === '#' && !inWord) {
      const j = line.indexOf('\n', i);
      i = (j < 0 ? line.length : j) - 1;
    } else if (c === '\n' || c === ';' || c === '|' || c === '&' || c === '>' || c === '<') {
      // `2>` and `2>&1`: a lone 2 just before the redirection is its descriptor.
      if ((c === '>' || c === '<') && inWord && cur === '2') {
        cur = '';
        inWord = false;
        if (line.startsWith('>&1', i)) {
          out.push({ op: '2>&1' });
          i += 2;
        } else out.push({ op: '2>' });
        continue;
      }
      end();
      const two = line.slice(i, i + 2);
      if (two === '||' || two === '&&' || two === '>>' || two === '&>') {
        out.push({ op: two });
        i++;
      } else out.push({ op: c as ';' });
    } else {
      cur += c;
      inWord = true;
    }
  }
  end();
  return out;
}

/** What one simple command reads: files and a part of each, or a filter (no file: it reads its input). */
interface CmdReads {
  files: string[];
  part: ReadPart;
}

/** `-n5`, `-n 5`, `--lines=5`, `-5`: an option's value, with how many words it took. */
function optValue(words: string[], i: number, short: string, long?: string): { value: string; used: number } | undefined {
  const w = words[i]!;
  if (w === `-${short}`) return words[i + 1] !== undefined ? { value: words[i + 1]!, used: 2 } : undefined;
  if (w.startsWith(`-${short}`) && !w.startsWith('--')) return { value: w.slice(short.length + 1), used: 1 };
  if (long && w.startsWith(`--${long}=`)) return { value: w.slice(long.length + 3), used: 1 };
  if (long && w === `--${long}`) return words[i + 1] !== undefined ? { value: words[i + 1]!, used: 2 } : undefined;
  return undefined;
}

function headTail(cmd: 'head' | 'tail', args: string[]): CmdReads {
  let n: string | undefined;
  let bytes = false;
  const files: string[] = [];
  for (let i = 0; i < args.length; ) {
    const a = args[i]!;
    const lines = optValue(args, i, 'n', 'lines');
    const chars = lines ? undefined : optValue(args, i, 'c', 'bytes');
    if (lines || chars) {
      n = (lines ?? chars)!.value;
      bytes = !!chars;
      i += (lines ?? chars)!.used;
    } else if (/^-\d+$/.test(a)) {
      n = a.slice(1);
      i++;
    } else if (a.startsWith('-') && a !== '-') i++;
    else {
      files.push(a);
      i++;
    }
  }
  const count = n !== undefined && /^[+-]?\d+$/.test(n) ? Number(n.replace(/^-/, '')) : 10;
  if (cmd === 'head') return { files, part: bytes ? { kind: 'bytes', start: 0, end: count } : { kind: 'lines', start: 1, end: count } };
  // `tail -n +K`: from line K on.
  if (n?.startsWith('+')) return { files, part: bytes ? { kind: 'bytes', start: count - 1 } : { kind: 'lines', start: count } };
  return { files, part: bytes ? { kind: 'bytes', start: -count } : { kind: 'tail', count } };
}

/** `sed -n 'A,Bp'` (and `Ap`, `A,$p`): the first printed range; other sed scripts read the whole file. */
function sed(args: string[]): CmdReads {
  const files: string[] = [];
  let script: string | undefined;
  let quiet = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-n' || a === '--quiet' || a === '--silent') quiet = true;
    else if (a === '-e' || a === '--expression') script = args[++i];
    else if (/^-[a-zA-Z]*n[a-zA-Z]*$/.test(a)) quiet = true;
    else if (a.startsWith('-')) continue;
    else if (script === undefined) script = a;
    else files.push(a);
  }
  const m = quiet && script ? /^\s*(\d+)\s*(?:,\s*(\d+|\$))?\s*p\s*;?\s*$/.exec(script) : null;
  if (!m) return { files, part: { kind: 'whole' } };
  const start = Number(m[1]);
  return { files, part: { kind: 'lines', start, ...(m[2] && m[2] !== '$' ? { end: Number(m[2]) } : {}) } };
}

/** grep and rg: the pattern (first non-option word, or -e/--regexp), its dialect and case, then files. */
function grep(cmd: 'grep' | 'rg' | 'egrep' | 'fgrep', args: string[]): CmdReads {
  let pattern: string | undefined;
  let regex: 'fixed' | 'basic' | 'extended' = cmd === 'rg' || cmd === 'egrep' ? 'extended' : cmd === 'fgrep' ? 'fixed' : 'basic';
  let ignoreCase = false;
  const files: string[] = [];
  // Options that take a value, so the value is not read as the pattern.
  const withValue = new Set(['-A', '-B', '-C', '-m', '--max-count', '-g', '--glob', '-t', '--type', '-f', '--context', '--after-context', '--before-context', '-M', '--max-columns']);
  let opts = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (opts && a === '--') opts = false;
    else if (opts && (a === '-e' || a === '--regexp')) pattern = args[++i];
    else if (opts && a.startsWith('--regexp=')) pattern = a.slice(9);
    else if (opts && withValue.has(a)) i++;
    else if (opts && a.startsWith('--')) {
      if (a === '--ignore-case') ignoreCase = true;
      if (a === '--fixed-strings') regex = 'fixed';
      if (a === '--extended-regexp') regex = 'extended';
    } else if (opts && a.startsWith('-') && a.length > 1) {
      // Bundled short flags (`-inE`); a trailing digit run is a context count (`-C3`).
      for (const f of a.slice(1).replace(/[ABCm]\d*$/, '')) {
        if (f === 'i') ignoreCase = true;
        else if (f === 'F') regex = 'fixed';
        else if (f === 'E' || f === 'P') regex = 'extended';
      }
    } else if (pattern === undefined) pattern = a;
    else files.push(a);
  }
  return { files, part: pattern === undefined ? { kind: 'whole' } : { kind: 'grep', pattern, regex, ignoreCase } };
}

/** jq: the filter (first non-option word), then files. */
function jq(args: string[]): CmdReads {
  let filter: string | undefined;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--arg' || a === '--argjson' || a === '--slurpfile' || a === '--rawfile') i += 2;
    else if (a === '--indent' || a === '-L') i++;
    else if (a.startsWith('-') && a.length > 1) continue;
    else if (filter === undefined) filter = a;
    else files.push(a);
  }
  return { files, part: { kind: 'json', path: filter ?? '.' } };
}

function whole(args: string[]): CmdReads {
  return { files: args.filter((a) => !a.startsWith('-') || a === '-'), part: { kind: 'whole' } };
}

/** One simple command's reads; undefined for a command that reads no file content. */
function commandReads(words: string[]): CmdReads | undefined {
  // Leading `VAR=x` assignments and wrappers that run the rest as a command.
  let i = 0;
  while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || ['command', 'exec', 'sudo', 'time', 'nice', 'env'].includes(words[i]!))) i++;
  const [cmd0, ...args] = words.slice(i);
  if (!cmd0) return undefined;
  const cmd = cmd0.slice(cmd0.lastIndexOf('/') + 1);
  switch (cmd) {
    case 'cat':
    case 'nl':
    case 'less':
    case 'more':
    case 'bat':
      return whole(args);
    case 'head':
    case 'tail':
      return headTail(cmd, args);
    case 'sed':
      return sed(args);
    case 'grep':
    case 'egrep':
    case 'fgrep':
    case 'rg':
      return grep(cmd, args);
    case 'jq':
      return jq(args);
    default:
      return undefined;
  }
}

/**
 * The reads of a shell command line. Each simple command that names a file reads that file; in a
 * pipeline (`cat F | grep X`, `nl -ba F | sed -n 1,80p`) a filter after it without files of its own
 * narrows what was read of F to the filter's part.
 */
export function shellReads(line: string): ReadAccess[] {
  const tokens = shellWords(line);
  const out: ReadAccess[] = [];
  let words: string[] = [];
  // The file the pipeline so far reads, while its output goes on down the pipe.
  let piped: { path: string; part: ReadPart } | undefined;
  let skipNext = false;
  const flush = (op?: string) => {
    const r = words.length ? commandReads(words) : undefined;
    words = [];
    if (r && r.files.length) {
      if (piped) out.push({ ...piped, via: 'shell' });
      piped = undefined;
      const named = r.files.filter((f) => f !== '-');
      if (op === '|' && named.length === 1) piped = { path: named[0]!, part: r.part };
      else for (const f of named) out.push({ path: f, part: r.part, via: 'shell' });
    } else if (piped && r) {
      // A filter on the piped file: what was read of it is the filter's part (a narrower one).
      const narrowed = piped.part.kind === 'whole' ? r.part : piped.part;
      if (op === '|') piped = { path: piped.path, part: narrowed };
      else {
        out.push({ path: piped.path, part: narrowed, via: 'shell' });
        piped = undefined;
      }
    } else if (piped) {
      // Piped into something else (wc, sort, a script): the whole pipe's input was read.
      out.push({ ...piped, via: 'shell' });
      piped = undefined;
    }
  };
  for (const t of tokens) {
    if ('word' in t) {
      if (skipNext) skipNext = false;
      else words.push(t.word);
    } else if (t.op === '>' || t.op === '>>' || t.op === '2>' || t.op === '&>' || t.op === '<') {
      // A redirection's target is not an argument (`< F` is a read, but agents write `cat F`).
      skipNext = t.op !== '<';
    } else if (t.op !== '2>&1') flush(t.op);
  }
  flush();
  if (piped) out.push({ ...piped, via: 'shell' });
  return out;
}

/** A shell tool's command line, as the clients send it: a string, or argv (`["bash", "-lc", "..."]`). */
export function commandLine(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) return undefined;
  const argv = v as string[];
  const c = argv.findIndex((a) => a === '-c' || a === '-lc' || a === '-ic');
  if (c >= 0 && argv[c + 1] !== undefined && /(^|\/)(ba|z|da)?sh$/.test(argv[0] ?? '')) return argv[c + 1];
  return argv.map((a) => (/^[\w./=:,+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
}
