/**
 * Anchors: the exact tokens a summary must carry over verbatim to be useful and must never make
 * up (numbers, paths, identifiers, error codes, URLs, hashes, versions, times, test names). The
 * scores without a judge (scores.ts) count them; docs/scores.md lists every rule with examples.
 *
 * | export | for |
 * | --- | --- |
 * | `extractAnchors(text)` | every anchor of a text, in order, with its kind, surface text and key |
 * | `anchorIndex(text)` | the anchors of a text, indexed to ask `appearsIn` many times |
 * | `appearsIn(anchor, index)` | whether an anchor is in a text: an equal key, a path suffix, a hash prefix, or its text as a whole token |
 *
 * Rules run in a fixed order, one line at a time; a rule's match claims its characters, so a later
 * rule never sees a piece of an earlier anchor (the `404` of a URL is not also a number). Every
 * pattern is linear (no nested quantifiers over the same characters): hostile text costs one pass per rule.
 */

export type AnchorKind = 'url' | 'address' | 'time' | 'test' | 'path' | 'code' | 'hash' | 'version' | 'number' | 'identifier';

export interface Anchor {
  kind: AnchorKind;
  /** As written. */
  text: string;
  /** What two anchors are compared by (see `keyOf` rules per kind): `12,345` and `12345` share `12345`. */
  key: string;
}

/** Anchors longer than this (chars) are not anchors: a 5 KB "URL" is a blob. */
export const MAX_ANCHOR_CHARS = 300;
/** A test runner's result line longer than this (chars after the mark) is not read for a test name. */
export const MAX_TEST_LINE_CHARS = 400;
/** The shortest hex run that is a hash (git's short hash). */
export const MIN_HASH_CHARS = 7;

/** File extensions that make a bare name (`package.json`, `pool.ts`) a path. */
const EXTENSIONS = new Set(
  (
    'c cc cpp cs css csv cjs conf cfg dart diff ex exs go gradle h hpp htm html ini ipynb java jar js json jsonl jsx kt kts ' +
    'lock log lua md mdx mjs mts cts ndjson patch php pl proto py pyi r rb rs sass scala scss sh sql sqlite svelte swift ' +
    'tar tgz toml ts tsx txt vue wasm xml yaml yml zip gz bz2 xz zst png jpg jpeg gif svg webp pdf bin exe dll so dylib ' +
    'env bat ps1 zsh bash fish tf hcl cmake mk'
  ).split(' '),
);

/** POSIX errno names (and Node's `ERR_*` codes, matched apart): the all-caps words that are error codes. */
const ERRNO = new Set(
  (
    'E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EAFNOSUPPORT EAGAIN EAI_AGAIN EAI_NONAME EALREADY EBADF EBUSY ECANCELED ECHILD ' +
    'ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDESTADDRREQ EDOM EDQUOT EEXIST EFAULT EFBIG EHOSTDOWN EHOSTUNREACH ' +
    'EIDRM EILSEQ EINPROGRESS EINTR EINVAL EIO EISCONN EISDIR ELOOP EMFILE EMLINK EMSGSIZE ENAMETOOLONG ENETDOWN ' +
    'ENETRESET ENETUNREACH ENFILE ENOBUFS ENODATA ENODEV ENOENT ENOEXEC ENOLCK ENOMEM ENOMSG ENOPROTOOPT ENOSPC ENOSYS ' +
    'ENOTCONN ENOTDIR ENOTEMPTY ENOTFOUND ENOTSOCK ENOTSUP ENOTTY ENXIO EOPNOTSUPP EOVERFLOW EPERM EPIPE EPROTO ' +
    'EPROTONOSUPPORT EPROTOTYPE ERANGE EROFS ESHUTDOWN ESPIPE ESRCH ESTALE ETIMEDOUT ETXTBSY EWOULDBLOCK EXDEV'
  ).split(' '),
);

const HTTP_REASONS =
  'OK|Created|Accepted|No Content|Moved Permanently|Found|See Other|Not Modified|Temporary Redirect|Permanent Redirect|' +
  'Bad Request|Unauthorized|Payment Required|Forbidden|Not Found|Method Not Allowed|Not Acceptable|Request Timeout|Conflict|Gone|' +
  'Payload Too Large|Content Too Large|Unsupported Media Type|Unprocessable Entity|Unprocessable Content|Too Many Requests|' +
  'Internal Server Error|Not Implemented|Bad Gateway|Service Unavailable|Gateway Timeout';

type Emit = (kind: AnchorKind, start: number, end: number, key?: string) => void;
interface Rule {
  re: RegExp;
  /** Called per match; emits zero or more anchors (each claims its span). Unclaimed matches leave their text to later rules. */
  on(m: RegExpExecArray, emit: Emit): void;
}

const httpKey = (code: string) => `HTTP ${code}`;

/** Canonical number: separators and a leading `+` gone, no leading zeros, no trailing decimal zeros. */
export function numberKey(text: string): string {
  let s = text.replace(/[,_]/g, '').replace(/^\+/, '');
  const neg = s.startsWith('-');
  if (neg) s = s.slice(1);
  let [int, frac] = s.split('.') as [string, string | undefined];
  int = int.replace(/^0+(?=\d)/, '');
  frac = frac?.replace(/0+$/, '');
  const out = frac ? `${int}.${frac}` : int;
  return neg && out !== '0' ? `-${out}` : out;
}

/** The rules, in the order they claim text. */
export const RULES: Rule[] = [
  // 1. URLs (any scheme://), trailing sentence punctuation and an unbalanced closing bracket left out.
  {
    re: /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s<>"'`]+/gi,
    on(m, emit) {
      let text = m[0];
      for (;;) {
        const t = text.replace(/[.,;:!?*]+$/, '');
        const last = t.at(-1);
        const unbalanced = (open: string, close: string) => last === close && t.split(open).length < t.split(close).length;
        const u = unbalanced('(', ')') || unbalanced('[', ']') || unbalanced('{', '}') ? t.slice(0, -1) : t;
        if (u === text) break;
        text = u;
      }
      const start = m.index;
      const key = text.replace(/^([a-z0-9+.-]+:\/\/[^/?#]*)/i, (h) => h.toLowerCase()).replace(/\/+$/, '');
      emit('url', start, start + text.length, key);
    },
  },
  // 2. IPv4 addresses, with a port.
  {
    re: /(?<![\w.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?::\d{1,5})?(?![\w]|\.\d)/g,
    on(m, emit) {
      if ([1, 2, 3, 4].every((g) => Number(m[g]) <= 255)) emit('address', m.index, m.index + m[0].length);
    },
  },
  // 3. Dates and times: ISO dates (with a time), and clock times with seconds (`12:04:05`; `pool.ts:88` is not one).
  {
    re: /(?<![\w.:-])(?:\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?)(?![\w:]|[.,]\d)/g,
    on(m, emit) {
      emit('time', m.index, m.index + m[0].length);
    },
  },
  // 4. Test names. pytest node ids (`tests/test_x.py::TestA::test_b[1]`) and Rust's `tests::test_b`.
  {
    re: /(?<![\w./-])(?:[\w./-]+\.py::[\w:[\].,=-]+|(?:\w+::)+test_\w+)/g,
    on(m, emit) {
      const text = m[0].replace(/[.,:]+$/, '');
      emit('test', m.index, m.index + text.length);
    },
  },
  // 5. Test functions by convention: `test_parse`, `TestParse` (Go), `testParse` (JUnit).
  {
    re: /(?<![\w$])(?:test_\w+|Test[A-Z_]\w*|test[A-Z]\w*)/g,
    on(m, emit) {
      emit('test', m.index, m.index + m[0].length);
    },
  },
  // 6. Paths: Windows (`C:\x\y`), absolute or home- or dot-relative POSIX (`/var/log`, `~/x`, `../a`),
  //    relative with two slashes or a file extension (`src/a/b`, `src/a.ts`), and a bare file name with a known extension.
  {
    re: /(?<![\w/\\:.-])(?:[A-Za-z]:\\[^\s\\:*?"<>|]+(?:\\[^\s\\:*?"<>|]+)*|(?:~|\.{1,2})?\/[\w.@+~-]+(?:\/[\w.@+~-]+)*\/?|[\w.@+-]+(?:\/[\w.@+~-]+)+\/?|[\w@+-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,8})(?![\w/\\])/g,
    on(m, emit) {
      let text = m[0];
      // A sentence's closing dot is not part of a path.
      text = text.replace(/\.+$/, '');
      if (!/[A-Za-z]/.test(text)) return;
      const win = /^[A-Za-z]:\\/.test(text);
      const slashes = (text.match(/\//g) ?? []).length;
      const rooted = /^(?:~|\.{1,2})?\//.test(text);
      const ext = /\.([A-Za-z0-9]{1,8})$/.exec(text)?.[1]?.toLowerCase();
      const knownExt = ext !== undefined && EXTENSIONS.has(ext);
      if (!win && !rooted) {
        if (slashes === 0 && !knownExt) return;
        if (slashes === 1 && !knownExt) return;
      }
      if (rooted && text.replace(/^[~.]*\/+/, '').length === 0) return;
      emit('path', m.index, m.index + text.length, text.replace(/\/+$/, ''));
    },
  },
  // 7. Error codes: HTTP statuses (`HTTP 404`, `HTTP/1.1 502`, `status 500`, `404 Not Found`), exit codes,
  //    errno names (`ENOENT`), Node's `ERR_*`, signals, `E1234`/`TS2345`/`ORA-00942`/`CVE-2024-3094` (but not a line
  //    reference `L120`), `…Error`/`…Exception` class names.
  {
    re: new RegExp(
      String.raw`\bHTTP(?:\/\d(?:\.\d)?)?\s+([1-5]\d\d)\b|\b(?:status(?:[ _]?code)?|statusCode)["']?\s*(?:[:=]\s*)?([1-5]\d\d)\b|\b([1-5]\d\d)\s+(?:${HTTP_REASONS})\b` +
        String.raw`|\bexit(?:ed)?(?:\s+with)?\s+(?:code|status)\s*(?:[:=]\s*)?(\d{1,3})\b` +
        String.raw`|\bERR_[A-Z0-9_]+\b|\bE(?:2BIG|[A-Z]{2,}(?:_[A-Z]+)?)\b|\bSIG(?:HUP|INT|QUIT|ILL|TRAP|ABRT|BUS|FPE|KILL|USR1|SEGV|USR2|PIPE|ALRM|TERM|CHLD|CONT|STOP|TSTP)\b` +
        String.raw`|\bCVE-\d{4}-\d{4,7}\b|(?<![\w-])[A-Z]{1,6}-?\d{3,6}(?![\w]|\.\d)|\b[A-Z][A-Za-z0-9]*(?:Error|Exception)\b`,
      'g',
    ),
    on(m, emit) {
      const http = m[1] ?? m[2] ?? m[3];
      if (http) return emit('code', m.index, m.index + m[0].length, httpKey(http));
      if (m[4] !== undefined) return emit('code', m.index, m.index + m[0].length, `exit ${Number(m[4])}`);
      const t = m[0];
      if (/^E(?:2BIG|[A-Z]{2,}(?:_[A-Z]+)?)$/.test(t) && !ERRNO.has(t)) return;
      // `L120` is a line reference (a summary's `L120:`, a link's `#L120`), not a code.
      if (/^L\d+$/.test(t)) return;
      emit('code', m.index, m.index + t.length);
    },
  },
  // 8. Hashes: a hex run of at least MIN_HASH_CHARS with a digit and a letter (so neither `12345678` nor
  //    `deadbeef`), an optional `sha256:` prefix; UUIDs.
  {
    re: /(?<![\w-])(?:(?:sha(?:1|224|256|384|512)|md5)[:-])?(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{7,})(?![\w-])/gi,
    on(m, emit) {
      const hex = m[0].replace(/^[a-z0-9]+[:-](?=[0-9a-f]{7})/i, '');
      const uuid = hex.includes('-');
      if (!uuid && (!/\d/.test(hex) || !/[a-f]/i.test(hex) || hex.length < MIN_HASH_CHARS)) return;
      emit('hash', m.index, m.index + m[0].length, hex.toLowerCase());
    },
  },
  // 9. Versions: `v1.2`, `1.2.3`, `2.1.328`, `1.0.0-beta.1`, `1.2.3+build.5` (a plain `1.5` is a number).
  {
    re: /(?<![\w.])(v?)(\d+(?:\.\d+)+)(-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(\+[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?(?![\w]|\.\d)/g,
    on(m, emit) {
      const dots = (m[2]!.match(/\./g) ?? []).length;
      if (!m[1] && dots < 2 && !m[3]) return;
      emit('version', m.index, m.index + m[0].length, m[0].replace(/^v/, ''));
    },
  },
  // 10. Numbers: integers and decimals, with thousands separators (`12,345`, `1_000`), a sign after a space,
  //    a unit or `%` after (`120ms`, `42%`). A lone digit (0-9) is not an anchor: too common to tell kept from coincidence.
  {
    re: /(?<![\w.]|[A-Za-z_]-)(?:-(?=\d))?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:_\d+)*)(?:\.\d+)?(?!\d|\.\d)/g,
    on(m, emit) {
      const key = numberKey(m[0]);
      if (/^-?\d$/.test(key)) return;
      emit('number', m.index, m.index + m[0].length, key);
    },
  },
  // 11. A test runner's result line: the test's own name after the mark (the last ` > ` part), without a duration,
  //     when no earlier rule took part of it (it runs late: a log's `FAIL` line is no test when it holds a path or a code).
  //     Only the mark is a pattern; the rest is cut in code (a regex over a hostile line of spaces would be quadratic).
  {
    re: /^\s*(?:[✓✔✗✘×✕●]|(?:FAIL|PASS|FAILED|PASSED)\b:?|--- (?:FAIL|PASS):|(?:not )?ok \d+(?: -)?)[ \t]+/g,
    on(m, emit) {
      const rest = m.input.slice(m.index + m[0].length);
      if (rest.length > MAX_TEST_LINE_CHARS) return;
      const trimmed = rest.trimEnd().replace(/\s*\(?\d+(?:\.\d+)?\s?m?s\)?$/, '');
      const parts = trimmed.split(/ [>›] /);
      const name = parts.at(-1)!.trim();
      // A file alone (`FAIL src/a.test.ts`) names no test: the path rule takes it.
      if (!name || /^[\w./\\-]+\.\w+$/.test(name) || name.length > MAX_ANCHOR_CHARS) return;
      const start = m.index + m[0].length + trimmed.lastIndexOf(name);
      emit('test', start, start + name.length);
    },
  },
  // 12. Identifiers: command-line flags (`--max-retries`), snake_case, camelCase and PascalCase with an inner
  //     capital, SCREAMING_CASE, names with letters and digits (`utf8`, `node18`), dotted names (`os.path.join`).
  {
    re: /(?<![\w-])--[A-Za-z][\w-]*|(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*/g,
    on(m, emit) {
      const t = m[0];
      if (t.startsWith('--')) return emit('identifier', m.index, m.index + t.length);
      const parts = t.split('.');
      const ident = (p: string) => /[A-Za-z0-9]_[A-Za-z0-9]/.test(p) || /[a-z][A-Z]/.test(p) || /[A-Z]{2}[a-z]/.test(p) || (/^[A-Za-z]/.test(p) && /\d/.test(p) && p.length >= 3 && !/^L\d+$/.test(p));
      if (parts.length > 1 && parts.every((p) => p.length >= 2) && !t.endsWith('.')) return emit('identifier', m.index, m.index + t.length);
      let off = m.index;
      for (const p of parts) {
        if (ident(p.replace(/^_+|_+$/g, '')) || /^__\w+__$/.test(p)) emit('identifier', off, off + p.length);
        off += p.length + 1;
      }
    },
  },
];

/** `` `code` `` spans: a single word inside backticks is an identifier even when it is a plain word (`` `retries` ``). */
const BACKTICK = /`([^`\s]{1,300})`/g;

/** Every anchor of one line, in the order the rules found them. */
function lineAnchors(line: string, out: Anchor[]): void {
  if (!line) return;
  const claimed = new Uint8Array(line.length);
  const free = (s: number, e: number) => {
    for (let i = s; i < e; i++) if (claimed[i]) return false;
    return true;
  };
  const found: Array<{ a: Anchor; at: number }> = [];
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(line); m; m = rule.re.exec(line)) {
      if (m[0].length === 0) {
        rule.re.lastIndex++;
        continue;
      }
      if (!free(m.index, m.index + m[0].length)) {
        // Part of it is taken: the rule may still match later in the text, so only skip past this start.
        rule.re.lastIndex = m.index + 1;
        continue;
      }
      rule.on(m, (kind, s, e, key) => {
        if (e <= s || e - s > MAX_ANCHOR_CHARS || !free(s, e)) return;
        claimed.fill(1, s, e);
        const text = line.slice(s, e);
        found.push({ a: { kind, text, key: key ?? text }, at: s });
      });
    }
  }
  BACKTICK.lastIndex = 0;
  for (let m = BACKTICK.exec(line); m; m = BACKTICK.exec(line)) {
    const s = m.index + 1;
    const e = s + m[1]!.length;
    if (free(s, e) && /[A-Za-z_]/.test(m[1]!)) {
      claimed.fill(1, s, e);
      found.push({ a: { kind: 'identifier', text: m[1]!, key: m[1]! }, at: s });
    }
  }
  found.sort((x, y) => x.at - y.at);
  for (const f of found) out.push(f.a);
}

/** Every anchor of a text, in order (duplicates kept). Never throws; an empty text has none. */
export function extractAnchors(text: string): Anchor[] {
  const out: Anchor[] = [];
  if (typeof text !== 'string' || !text) return out;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineAnchors(text.slice(start, end).replace(/\r$/, ''), out);
    start = end + 1;
  }
  return out;
}

/** Distinct anchors by key (the first one written), in order. */
export function distinctAnchors(anchors: readonly Anchor[]): Anchor[] {
  const seen = new Map<string, Anchor>();
  for (const a of anchors) if (!seen.has(a.key)) seen.set(a.key, a);
  return [...seen.values()];
}

/** A text's anchors, indexed so `appearsIn` can be asked of it many times. */
export interface AnchorIndex {
  text: string;
  keys: Set<string>;
  paths: string[];
  hashes: string[];
  lower?: string;
}

export function anchorIndex(text: string, anchors: readonly Anchor[] = extractAnchors(text)): AnchorIndex {
  const keys = new Set<string>();
  const paths: string[] = [];
  const hashes: string[] = [];
  for (const a of anchors) {
    if (keys.has(a.key)) continue;
    keys.add(a.key);
    if (a.kind === 'path') paths.push(a.key);
    else if (a.kind === 'hash') hashes.push(a.key);
  }
  return { text, keys, paths, hashes };
}

/** One path ends with the other at a segment boundary (`src/a.ts` and `/home/x/src/a.ts`). */
function pathSuffix(a: string, b: string): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  const s = short.replace(/^\.\//, '');
  return long.endsWith(s) && (long.length === s.length || /[/\\]/.test(long[long.length - s.length - 1]!));
}

const WORD = /[\p{L}\p{N}_]/u;
/** `needle` occurs in `hay` as a whole token: no word character touching it, and no `.5`/`,345` continuing a number. */
export function hasWholeToken(hay: string, needle: string): boolean {
  if (!needle) return false;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + 1)) {
    const before = hay[i - 1];
    const after = hay[i + needle.length];
    const b1 = before !== undefined && WORD.test(before) && WORD.test(needle[0]!);
    const b2 = before !== undefined && /[.,]/.test(before) && /\d/.test(hay[i - 2] ?? '') && /\d/.test(needle[0]!);
    const a1 = after !== undefined && WORD.test(after) && WORD.test(needle.at(-1)!);
    const a2 = after !== undefined && /[.,]/.test(after) && /\d/.test(hay[i + needle.length + 1] ?? '') && /\d/.test(needle.at(-1)!);
    if (!b1 && !b2 && !a1 && !a2) return true;
  }
  return false;
}

/**
 * Whether an anchor is in the indexed text: the same key among its anchors; for a path, one that
 * ends with the other at a `/`; for a hash, one a prefix of the other (both at least
 * MIN_HASH_CHARS); else its text or its key as a whole token anywhere in the text (a `404` inside
 * `HTTP 404`, a word the other side only put in backticks). Case matters except for URLs' hosts and hashes.
 */
export function appearsIn(a: Anchor, idx: AnchorIndex): boolean {
  if (idx.keys.has(a.key)) return true;
  if (a.kind === 'path' && idx.paths.some((p) => pathSuffix(p, a.key))) return true;
  if (a.kind === 'hash' && a.key.length >= MIN_HASH_CHARS && idx.hashes.some((h) => h.startsWith(a.key) || a.key.startsWith(h))) return true;
  if (hasWholeToken(idx.text, a.text) || (a.key !== a.text && hasWholeToken(idx.text, a.key))) return true;
  if (a.kind === 'hash' || a.kind === 'url') return hasWholeToken((idx.lower ??= idx.text.toLowerCase()), a.key.toLowerCase());
  return false;
}
