import { isObj } from '../../src/pipeline/values.js';
/**
 * An MCP tool result as the MCP proxy saves it (a CallToolResult: `{content:[{type:'text',text}],
 * structuredContent}`) is shown by its content, as the guard reads it: a text block that is JSON
 * as its tree, not as one escaped string inside the envelope. Pure; the envelope test is the same
 * as src/summarize/mcp.ts (the renderer imports no runtime code from src/).
 */
type Obj = Record<string, unknown>;
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['content', 'structuredContent', 'isError', '_meta']);

export function isMcpEnvelope(v: unknown): v is { content: Obj[]; structuredContent?: unknown } {
  return isObj(v) && Array.isArray(v.content) && Object.keys(v).every((k) => ENVELOPE_KEYS.has(k)) && v.content.every((b) => isObj(b) && typeof b.type === 'string');
}

const parseJson = (t: string): { ok: true; value: unknown } | { ok: false } => {
  const s = t.trimStart();
  if (!s.startsWith('{') && !s.startsWith('[')) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
};

/**
 * What the tree shows of a parsed payload: an MCP result's content (its one JSON text block's
 * value; several blocks as a list, each JSON block parsed), with a note saying so; anything else as it is.
 */
export function treeValueOf(v: unknown): { value: unknown; note?: string } {
  if (!isMcpEnvelope(v)) return { value: v };
  const texts = v.content.filter((b) => b.type === 'text' && typeof b.text === 'string');
  const parsed = texts.map((b) => parseJson(b.text as string));
  const sc = v.structuredContent !== undefined ? ' (its structuredContent carries the same for the client)' : '';
  if (texts.length === 1 && parsed[0]!.ok) return { value: (parsed[0] as { value: unknown }).value, note: `MCP tool result: the JSON of its text block${sc}.` };
  if (texts.length && parsed.some((p) => p.ok)) {
    return { value: v.content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? (((p) => (p.ok ? p.value : b.text))(parseJson(b.text))) : b)), note: `MCP tool result: its ${v.content.length} content blocks, JSON text parsed${sc}.` };
  }
  if (v.structuredContent !== undefined && isObj(v.structuredContent)) return { value: v.structuredContent, note: 'MCP tool result: its structuredContent (the text blocks hold no JSON).' };
  return { value: v };
}
