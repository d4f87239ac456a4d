import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse, stringify } from 'smol-toml';
import { deleteConfig, homeDir, innerServer, Manifest, missingDirs, proxyEntry, readText, SETUP_MARK_ENV, SetupError, writeConfig, type FileChange, type SetupMark } from './files.js';
import { isObj } from '../../pipeline/values.js';

/**
 * `spillway setup codex --mcp NAME [-- CMD…]`: an `[mcp_servers.NAME]` table in
 * `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`) that runs the server behind
 * `spillway mcp --client codex`. Without CMD, the existing server NAME is wrapped.
 *
 * The file is edited as text, so its comments and layout stay: setup's own tables for NAME
 * (`[mcp_servers.NAME]`, `[mcp_servers.NAME.env]`, …) go at the end under a marker comment; the
 * user's own tables for a server setup wraps stay where they are, as kept comment lines that
 * `--remove` gives back, so setup then `--remove` returns the file's very bytes (issue 32).
 * smol-toml (a small, spec-compliant TOML 1.0 parser with no dependencies) checks the file before
 * (an invalid one is left untouched) and after (the result must parse, hold exactly the intended
 * server, and hold everything else unchanged), so a text edit can never produce a broken config.
 *
 * A server setup adds gets `startup_timeout_sec` ({@link STARTUP_TIMEOUT_S}): Codex gives up on a
 * server that has not answered by then and runs the whole session without its tools, saying
 * nothing about it in `codex exec --json` but "unsupported call" when the model calls one.
 */

/**
 * Codex's startup timeout for a server setup adds (s). Measured here: `npx -y
 * @modelcontextprotocol/server-filesystem` with an empty npm cache answered `initialize` after
 * 10.3–13.1 s (3 runs, a shared 2-core machine, a fast registry link), and a user's first runs
 * lost the tools to a cold npx at Codex's default. Codex connects servers in the background (the
 * first model request does not wait), so a long timeout delays nothing; it only lets a slow first
 * start still arrive.
 */
export const STARTUP_TIMEOUT_S = 120;
/**
 * Codex 0.171's own default, as observed with the real binary (test/clients/setup.test.ts and runs by
 * hand): a server ready after ~27 s was connected, one ready after ~34 s was not.
 */
export const CODEX_DEFAULT_STARTUP_TIMEOUT_S = 30;
const TIMEOUT_WHY = `startup_timeout_sec = ${STARTUP_TIMEOUT_S}: by default Codex waits about ${CODEX_DEFAULT_STARTUP_TIMEOUT_S} s for a server to start and then goes on without its tools, and a first \`npx -y\` download can take that long`;

type Obj = Record<string, unknown>;

/** smol-toml's tables have no prototype: compare as plain JSON values. */
function same(a: unknown, b: unknown): boolean {
  const plain = (v: unknown) => (v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown));
  return isDeepStrictEqual(plain(a), plain(b));
}

export interface CodexSetupOptions {
  /** The server to add, wrap or remove; with `remove` and no `mcp`, every server setup added. */
  mcp?: { name: string; server: string[] };
  remove?: boolean;
  env?: NodeJS.ProcessEnv;
  now?: Date;
}

export function codexHome(env: NodeJS.ProcessEnv = process.env): string {
  return env.CODEX_HOME ? path.resolve(env.CODEX_HOME) : path.join(homeDir(env), '.codex');
}

export function codexConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(codexHome(env), 'config.toml');
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A table header line that belongs to server `name`: `[mcp_servers.name]`, `[mcp_servers."name".env]`, … */
function headerRe(name: string): RegExp {
  const key = `(?:${/^[A-Za-z0-9_-]+$/.test(name) ? `${escapeRe(name)}|` : ''}"${escapeRe(JSON.stringify(name).slice(1, -1))}"|'${escapeRe(name)}')`;
  return new RegExp(`^\\s*\\[\\s*mcp_servers\\s*\\.\\s*${key}\\s*(?:\\.[^\\]]*)?\\]\\s*(?:#.*)?$`);
}

const MARKER_PREFIX = '# spillway setup codex: ';
/**
 * A line of the user's own table for a server setup wrapped, kept in place as a comment so that
 * `--remove` gives back those very lines (their comments and layout), where they were.
 */
const KEPT_PREFIX = '# spillway setup codex kept: ';

const isHeader = (line: string) => /^\s*\[/.test(line);
/** Where a table's lines end: the next table header, a marker setup wrote above its own table, or a kept line. */
const endsTable = (line: string) => isHeader(line) || line.startsWith(MARKER_PREFIX) || line.startsWith(KEPT_PREFIX);

/**
 * The text without server `name`'s tables (the ones setup wrote), and how many lines were cut. The
 * marker line above a table goes with it, and so does the line break setup put before the marker
 * (see {@link appendServer}), so cutting what setup appended gives back the bytes that were there.
 */
function cutServer(text: string, name: string): { text: string; cut: number } {
  const re = headerRe(name);
  const lines = text.split('\n');
  const out: string[] = [];
  let inside = false;
  let cut = 0;
  const marker = `${MARKER_PREFIX}${name} `;
  for (const line of lines) {
    if (endsTable(line)) {
      const starts = !inside && isHeader(line) && re.test(line);
      inside = isHeader(line) && re.test(line);
      if (starts && out.length && out[out.length - 1]!.startsWith(marker)) {
        out.pop();
        cut++;
      }
    }
    if (inside) cut++;
    else out.push(line);
  }
  return { text: out.join('\n'), cut };
}

/**
 * The user's own tables for server `name` turned into kept comments, in place: each line of a table
 * up to its last non-blank one gets {@link KEPT_PREFIX}. Returns how many tables were kept.
 */
function keepServer(text: string, name: string): { text: string; kept: number } {
  const re = headerRe(name);
  const lines = text.split('\n');
  let kept = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!(isHeader(lines[i]!) && re.test(lines[i]!))) continue;
    let end = i + 1;
    while (end < lines.length && !endsTable(lines[end]!)) end++;
    while (end > i + 1 && lines[end - 1]!.trim() === '') end--;
    for (let j = i; j < end; j++) lines[j] = `${KEPT_PREFIX}${lines[j]}`;
    kept++;
    i = end - 1;
  }
  return { text: lines.join('\n'), kept };
}

/** The kept lines of server `name` given back as they were (`drop`: taken out instead). */
function restoreKept(text: string, name: string, drop = false): { text: string; lines: number } {
  const re = headerRe(name);
  const out: string[] = [];
  let inside = false;
  let n = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(KEPT_PREFIX)) {
      inside = false;
      out.push(line);
      continue;
    }
    const own = line.slice(KEPT_PREFIX.length);
    if (isHeader(own)) inside = re.test(own);
    if (!inside) out.push(line);
    else {
      n++;
      if (!drop) out.push(own);
    }
  }
  return { text: out.join('\n'), lines: n };
}

/**
 * `text` with setup's table for server `name` at the end, under its marker line: one line break
 * before the marker (a blank line after a text that ends with one), none in an empty file, so
 * {@link cutServer} can take exactly this back out.
 */
function appendServer(text: string, name: string, table: Obj, marked: boolean): string {
  const block = stringify({ mcp_servers: { [name]: table } });
  const marker = marked ? `${MARKER_PREFIX}${name} runs behind spillway mcp (undo: spillway setup codex --mcp ${name} --remove)\n` : '';
  return `${text}${text === '' ? '' : '\n'}${marker}${block}`;
}

/** A server's table without what wrapping changes (command, args, setup's mark; an empty env is none). */
function apartFromCommand(t: Obj): Obj {
  const { command: _c, args: _a, env, ...rest } = t;
  const { [SETUP_MARK_ENV]: _m, ...restEnv } = isObj(env) ? (env as Obj) : {};
  return Object.keys(restEnv).length ? { ...rest, env: restEnv } : rest;
}

function parseToml(text: string, file: string): Obj {
  try {
    return parse(text) as Obj;
  } catch (err) {
    throw new SetupError(`${file} is not valid TOML (${(err as Error).message.split('\n')[0]}); it was left untouched. Fix it, or move it away, and run setup again.`);
  }
}

function serverOf(doc: Obj, name: string): Obj | undefined {
  const servers = doc.mcp_servers;
  if (servers === undefined) return undefined;
  if (!isObj(servers)) throw new SetupError('mcp_servers is not a table');
  const s = servers[name];
  if (s !== undefined && !isObj(s)) throw new SetupError(`mcp_servers.${name} is not a table`);
  return s as Obj | undefined;
}

function without(doc: Obj, name: string): Obj {
  if (!isObj(doc.mcp_servers)) return doc;
  const { [name]: _gone, ...rest } = doc.mcp_servers as Obj;
  const { mcp_servers: _s, ...top } = doc;
  return Object.keys(rest).length ? { ...top, mcp_servers: rest } : top;
}

interface Edit {
  text: string;
  doc: Obj;
  detail?: string;
  notes: string[];
}

/** One server's edit of the text (added, wrapped, unwrapped or removed); `detail` undefined: nothing to do. */
function editServer(file: string, ed: Edit, name: string, server: string[], remove: boolean, env: NodeJS.ProcessEnv): Edit {
  const { doc } = ed;
  let cur: Obj | undefined;
  try {
    cur = serverOf(doc, name);
  } catch (err) {
    throw new SetupError(`${file}: ${(err as Error).message}; it was left untouched.`);
  }
  const curEnv = isObj(cur?.env) ? (cur!.env as Obj) : {};
  const mark = curEnv[SETUP_MARK_ENV] as SetupMark | undefined;
  const inner = cur ? innerServer(cur.command, cur.args) : undefined;
  const notes: string[] = [];

  let next: Obj | undefined;
  let detail: string;
  if (remove) {
    if (!cur) return { ...ed, detail: `no MCP server ${JSON.stringify(name)} to remove`, notes };
    if (!inner || !mark) throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} was not set up by spillway; it was left alone.`);
    if (mark === 'added') {
      next = undefined;
      detail = `removed [mcp_servers.${name}]`;
    } else {
      const { [SETUP_MARK_ENV]: _m, ...restEnv } = curEnv;
      const { env: _e, ...rest } = cur;
      next = { ...rest, command: inner[0], args: inner.slice(1), ...(Object.keys(restEnv).length ? { env: restEnv } : {}) };
      detail = `[mcp_servers.${name}] runs its own command again (${inner.join(' ')})`;
    }
  } else {
    let target: string[];
    let newMark: SetupMark;
    if (server.length) {
      target = server;
      newMark = inner && mark ? mark : cur ? 'wrapped' : 'added';
    } else if (!cur) {
      throw new SetupError(`${file}: there is no MCP server ${JSON.stringify(name)} to put behind Spillway; give its command after --.`);
    } else if (inner && mark) {
      target = inner;
      newMark = mark;
    } else {
      if (typeof cur.command !== 'string') throw new SetupError(`${file}: [mcp_servers.${name}] has no command to wrap (spillway mcp proxies stdio servers only).`);
      target = [cur.command, ...(Array.isArray(cur.args) ? cur.args.map(String) : [])];
      newMark = 'wrapped';
    }
    const entry = proxyEntry('codex', target, env, name);
    next = { ...(cur ?? {}), command: entry.command, args: entry.args, env: { ...curEnv, [SETUP_MARK_ENV]: newMark } };
    const hasTimeout = cur?.startup_timeout_sec !== undefined || cur?.startup_timeout_ms !== undefined;
    // Only a server setup adds gets the timeout, so removal takes it out with the table; a wrapped
    // server is the user's, and is told.
    const addTimeout = newMark === 'added' && !hasTimeout;
    if (addTimeout) next.startup_timeout_sec = STARTUP_TIMEOUT_S;
    if (newMark === 'wrapped' && !hasTimeout) {
      notes.push(`[mcp_servers.${name}] has no startup_timeout_sec: Codex waits about ${CODEX_DEFAULT_STARTUP_TIMEOUT_S} s for it to start and then goes on without its tools; if it starts slowly (a first \`npx -y\`), add startup_timeout_sec = ${STARTUP_TIMEOUT_S} to its table`);
    }
    if (same(next, cur)) return { ...ed, detail: `[mcp_servers.${name}] already behind Spillway`, notes };
    detail = `[mcp_servers.${name}] runs behind spillway mcp (${target.join(' ')})${addTimeout ? `; ${TIMEOUT_WHY}` : ''}`;
  }

  let text = ed.text;
  let extraDetail = '';
  const ours = Boolean(cur && inner && mark);
  if (cur) {
    // Setup's own table is cut; the user's own, now behind the proxy, is kept in place as comments, for --remove to give back.
    const c = ours ? cutServer(text, name) : undefined;
    const k = ours ? undefined : keepServer(text, name);
    if ((c?.cut ?? k?.kept) === 0) throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} is written as an inline table or dotted keys, which setup does not edit; change it by hand.`);
    text = c?.text ?? k!.text;
  }
  if (cur && ours && remove && next) {
    // A wrapped server given back: its own lines, where they were, when they still say what the
    // wrapper runs (the user may have edited the wrapper since: then its table is written anew).
    const restored = restoreKept(text, name);
    let theirs: Obj | undefined;
    try {
      theirs = restored.lines ? serverOf(parseToml(restored.text, file), name) : undefined;
    } catch {
      theirs = undefined;
    }
    const theirCommand = theirs && typeof theirs.command === 'string' ? [theirs.command, ...(Array.isArray(theirs.args) ? theirs.args.map(String) : [])] : undefined;
    if (theirs && theirCommand && same(theirCommand, inner) && same(apartFromCommand(theirs), apartFromCommand(cur!))) {
      text = restored.text;
      next = theirs;
    } else {
      if (restored.lines) extraDetail = '; its own earlier lines no longer matched the wrapper, so its table was written anew (the old text is in the backup)';
      text = appendServer(restoreKept(text, name, true).text, name, next, false);
    }
  } else if (next) {
    text = appendServer(text, name, next, !remove);
  }
  detail += extraDetail;
  // The edit must give exactly the intended document.
  const after = parseToml(text, file);
  const got = serverOf(after, name);
  if (!same(got, next) || !same(without(after, name), without(doc, name))) {
    throw new SetupError(`${file}: the edited file would not hold what was intended (its layout is one setup cannot edit safely); it was left untouched.`);
  }
  return { text, doc: after, detail, notes: [...ed.notes, ...notes] };
}

/** The servers in config.toml that setup wrote (marked, and running `spillway mcp`). */
function markedServers(doc: Obj): string[] {
  if (!isObj(doc.mcp_servers)) return [];
  return Object.entries(doc.mcp_servers as Obj)
    .filter(([, v]) => isObj(v) && isObj(v.env) && typeof (v.env as Obj)[SETUP_MARK_ENV] === 'string' && innerServer(v.command, v.args) !== undefined)
    .map(([k]) => k);
}

export function setupCodex(o: CodexSetupOptions): FileChange[] {
  const env = o.env ?? process.env;
  const file = codexConfigFile(env);
  if (o.mcp && !o.mcp.name) throw new SetupError('give the server a name: --mcp NAME');
  if (!o.mcp && !o.remove) throw new SetupError('Codex takes Spillway as an MCP proxy: give --mcp NAME [-- <server command>]');
  const before = readText(file);
  const dirs = missingDirs(file);
  const doc = before === undefined ? {} : parseToml(before, file);
  if (o.remove && before === undefined) return [];
  const names = o.mcp ? [o.mcp.name] : markedServers(doc);
  let ed: Edit = { text: before ?? '', doc, notes: [] };
  const details: string[] = [];
  for (const name of names) {
    ed = editServer(file, ed, name, o.mcp?.server ?? [], o.remove === true, env);
    details.push(ed.detail!);
  }
  if (!names.length) details.push('no MCP server set up by Spillway here');
  const manifest = new Manifest(env);
  const entry = manifest.get(file);
  const wo = { env, now: o.now };
  let c: FileChange;
  if (o.remove && entry.created && ed.text.trim() === '' && ed.text !== before) c = deleteConfig(file, details.join('; '), entry.dirs ?? [], wo);
  else c = writeConfig(file, before, ed.text, details.join('; '), wo);
  if (ed.notes.length) c.notes = ed.notes;
  manifest.set(file, { created: c.action === 'created' || (entry.created && c.action !== 'deleted'), dirs: c.action === 'created' ? dirs : entry.dirs });
  manifest.save();
  return [c];
}
