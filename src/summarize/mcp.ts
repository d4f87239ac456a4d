import { isObj } from '../pipeline/values.js';
/**
 * An MCP tool result (a CallToolResult, `{content:[{type:'text',text}], structuredContent}`, as the
 * MCP proxy saves it) is summarized by its content, not its envelope: a log inside
 * `{"content":[{"type":"text","text":"…\n…"}]}` is summarized as a log, rows of JSON as a schema
 * of the rows. The guard does so (src/integrations/mcp), and so does every summarizer
 * createSummarizer makes: `spillway summarize` and the inspector's re-run give the guard's summary.
 */
type Obj = Record<string, unknown>;

/** The keys a CallToolResult has (MCP 2025-06-18). */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['content', 'structuredContent', 'isError', '_meta']);

const TEXT_KEY_RE = /"text"\s*:\s*"/g;
const CUT_MARKER_RE = /\n… \[\d+ chars cut to fit the summarizer\] …\n/;

/** Decode a JSON string body from `start` (just past its opening quote), tolerating a cut end. */
function decodeStringBody(s: string, start: number): { text: string; end: number } {
  const parts: string[] = [];
  let i = start;
  const special = /["\\]/g;
  for (;;) {
    special.lastIndex = i;
    const m = special.exec(s);
    if (!m) {
      parts.push(s.slice(i));
      return { text: parts.join(''), end: s.length };
    }
    parts.push(s.slice(i, m.index));
    if (m[0] === '"') return { text: parts.join(''), end: m.index + 1 };
    const e = s[m.index + 1];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', '"': '"', '\\': '\\', '/': '/' };
    if (e === undefined) return { text: parts.join(''), end: s.length };
    if (e === 'u') {
      const hex = s.slice(m.index + 2, m.index + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) return { text: parts.join(''), end: s.length };
      parts.push(String.fromCharCode(parseInt(hex, 16)));
      i = m.index + 6;
    } else {
      parts.push(simple[e] ?? e);
      i = m.index + 2;
    }
  }
}

function textsIn(segment: string, startsInString: boolean): string[] {
  const out: string[] = [];
  let from = 0;
  if (startsInString) {
    const first = decodeStringBody(segment, 0);
    out.push(first.text);
    from = first.end;
  }
  TEXT_KEY_RE.lastIndex = from;
  for (let m = TEXT_KEY_RE.exec(segment); m; m = TEXT_KEY_RE.exec(segment)) {
    const d = decodeStringBody(segment, m.index + m[0].length);
    out.push(d.text);
    TEXT_KEY_RE.lastIndex = d.end;
  }
  return out;
}

/**
 * What a summarizer should read of an MCP tool result: the text it carries, not its JSON envelope
 * (a log inside `{"content":[{"type":"text","text":"…\n…"}]}` is summarized as a log). Works on
 * the guard's summary input even when it was cut to fit (head … tail), where JSON.parse fails.
 */
export function mcpContentText(text: string): string {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return text;
  try {
    const v = JSON.parse(text) as unknown;
    const blocks = Array.isArray(v) ? v : isObj(v) && Array.isArray(v.content) && Object.keys(v).every((k) => ENVELOPE_KEYS.has(k)) ? v.content : undefined;
    // Only an envelope: every block typed (a JSON of the tool's own data is summarized as it is).
    if (!blocks || !blocks.every((b) => isObj(b) && typeof b.type === 'string')) return text;
    const texts = blocks.filter((b): b is Obj => isObj(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
    return texts.length ? texts.join('\n') : text;
  } catch {
    /* cut to fit: decode leniently */
  }
  if (!/^\s*[[{]\s*("content"|\{\s*"type")/.test(text) && !/^\s*\{\s*"(_meta|isError|structuredContent)"/.test(text)) return text;
  const cut = CUT_MARKER_RE.exec(text);
  const head = cut ? text.slice(0, cut.index) : text;
  const headTexts = textsIn(head, false);
  if (!headTexts.length) return text;
  if (!cut) return headTexts.join('\n');
  const tailTexts = textsIn(text.slice(cut.index + cut[0].length), true);
  return `${headTexts.join('\n')}${cut[0]}${tailTexts.join('\n')}`;
}


/** `v` is a CallToolResult: only its keys, and a `content` array of typed blocks. */
export function isMcpEnvelope(v: unknown): v is { content: Obj[]; structuredContent?: unknown } {
  return isObj(v) && Array.isArray(v.content) && Object.keys(v).every((k) => ENVELOPE_KEYS.has(k)) && v.content.every((b) => isObj(b) && typeof b.type === 'string');
}

/**
 * The JSON an MCP result carries, as the guard's projection reads it: the first text block that is
 * JSON, else the structuredContent; anything that is not an envelope, as it is.
 */
export function mcpContentValue(v: unknown): unknown {
  if (!isMcpEnvelope(v)) return v;
  for (const b of v.content) {
    if (b.type === 'text' && typeof b.text === 'string') {
      const t = b.text.trimStart();
      if (t.startsWith('{') || t.startsWith('[')) {
        try {
          return JSON.parse(b.text);
        } catch {
          /* not JSON */
        }
      }
    }
  }
  return v.structuredContent !== undefined ? v.structuredContent : v;
}
