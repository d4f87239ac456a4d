import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse, stringify } from 'smol-toml';
import { homeDir, innerServer, isObj, proxyEntry, readText, SETUP_MARK_ENV, SetupError, writeConfig, type FileChange, type SetupMark } from './files.js';

/**
 * `spillway setup codex --mcp NAME [-- CMD…]`: an `[mcp_servers.NAME]` table in
 * `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`) that runs the server behind
 * `spillway mcp --client codex`. Without CMD, the existing server NAME is wrapped.
 *
 * The file is edited as text, so its comments and layout stay: only NAME's own tables
 * (`[mcp_servers.NAME]`, `[mcp_servers.NAME.env]`, …) are cut out and written anew at the end.
 * smol-toml (a small, spec-compliant TOML 1.0 parser with no dependencies) checks the file before
 * (an invalid one is left untouched) and after (the result must parse, hold exactly the intended
 * server, and hold everything else unchanged), so a text edit can never produce a broken config.
 */

type Obj = Record<string, unknown>;

/** smol-toml's tables have no prototype: compare as plain JSON values. */
function same(a: unknown, b: unknown): boolean {
  const plain = (v: unknown) => (v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown));
  return isDeepStrictEqual(plain(a), plain(b));
}

export interface CodexSetupOptions {
  mcp: { name: string; server: string[] };
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

/** The text without server `name`'s tables, and how many lines were cut. */
function cutServer(text: string, name: string): { text: string; cut: number } {
  const re = headerRe(name);
  const lines = text.split('\n');
  const out: string[] = [];
  let inside = false;
  let cut = 0;
  const marker = `${MARKER_PREFIX}${name} `;
  for (const line of lines) {
    // A table or array-of-tables header ends the table before it.
    if (/^\s*\[/.test(line)) {
      const starts = !inside && re.test(line);
      inside = re.test(line);
      // The marker comment setup wrote above the table goes with it.
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

export function setupCodex(o: CodexSetupOptions): FileChange[] {
  const env = o.env ?? process.env;
  const file = codexConfigFile(env);
  const { name, server } = o.mcp;
  if (!name) throw new SetupError('give the server a name: --mcp NAME');
  const before = readText(file);
  const doc = before === undefined ? {} : parseToml(before, file);
  let cur: Obj | undefined;
  try {
    cur = serverOf(doc, name);
  } catch (err) {
    throw new SetupError(`${file}: ${(err as Error).message}; it was left untouched.`);
  }
  const curEnv = isObj(cur?.env) ? (cur!.env as Obj) : {};
  const mark = curEnv[SETUP_MARK_ENV] as SetupMark | undefined;
  const inner = cur ? innerServer(cur.command, cur.args) : undefined;

  let next: Obj | undefined;
  let detail: string;
  if (o.remove) {
    if (!cur) return before === undefined ? [] : [{ file, action: 'nothing-to-remove', detail: `no MCP server ${JSON.stringify(name)} to remove` }];
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
    const entry = proxyEntry('codex', target, env);
    next = { ...(cur ?? {}), command: entry.command, args: entry.args, env: { ...curEnv, [SETUP_MARK_ENV]: newMark } };
    if (same(next, cur)) return [{ file, action: 'unchanged', detail: `[mcp_servers.${name}] already behind Spillway` }];
    detail = `[mcp_servers.${name}] runs behind spillway mcp (${target.join(' ')})`;
  }

  let text = before ?? '';
  if (cur) {
    const c = cutServer(text, name);
    if (c.cut === 0) throw new SetupError(`${file}: MCP server ${JSON.stringify(name)} is written as an inline table or dotted keys, which setup does not edit; change it by hand.`);
    text = c.text;
  }
  if (next) {
    const block = stringify({ mcp_servers: { [name]: next } }).trimEnd();
    text = `${text.replace(/\s*$/, '')}${text.trim() ? '\n\n' : ''}${MARKER_PREFIX}${name} runs behind spillway mcp (undo: spillway setup codex --mcp ${name} --remove)\n${block}\n`;
  } else {
    text = `${text.replace(/\s*$/, '')}\n`;
  }
  // The edit must give exactly the intended document.
  const after = parseToml(text, file);
  const got = serverOf(after, name);
  if (!same(got, next) || !same(without(after, name), without(doc, name))) {
    throw new SetupError(`${file}: the edited file would not hold what was intended (its layout is one setup cannot edit safely); it was left untouched.`);
  }
  return [writeConfig(file, before, text, detail, o.now)];
}
