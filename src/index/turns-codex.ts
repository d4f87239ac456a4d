/**
 * Turns of a Codex rollout (as 0.171.0 writes them; test/index/fixtures/timeline holds a real one):
 * - `token_usage_record` follows each response with its `usage` (`input_tokens` counts the whole
 *   input, cached part included: `cached_input_tokens`); it is one call;
 * - `event_msg` `token_count` comes later (after the call's tool ran) with `info.last_token_usage`
 *   and `info.model_context_window`; `info` may be null. It repeats itself (the same totals twice)
 *   and reports 0 right after a compaction. A rollout without `token_usage_record` (older Codex)
 *   takes its calls from these, deduplicated, and says the parts are less sure;
 * - `compacted` (its `message` is the summary, `replacement_history` the new context) and
 *   `event_msg` `context_compacted` mark a compaction. The call just before it without a tool
 *   call is the summarisation call itself.
 */
import { str } from './import-common.js';
import { imageSizeOfBase64, imageTokens } from '../agents/index.js';
import { type CompactionRecord, JsonlTurnReader, type PartName, type TurnRecord, type TurnTool, type TurnsResult, addPart, estimateText, numOr } from './turns.js';
import { isObj } from '../pipeline/values.js';

const PROFILE = 'o200k' as const;
const MARKERS = ['"token_usage_record"', '"token_count"', '"compacted"', '"context_compacted"', '"response_item"', '"session_meta"'];

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return output.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('\n');
  if (isObj(output) && typeof output.content === 'string') return output.content;
  return output === undefined ? '' : JSON.stringify(output);
}

/**
 * Spillway's estimate of a tool output as the model was shown it: its text, and its images
 * (`input_image` parts, e.g. view_image's) by their pixels under OpenAI's rule, never as their base64
 * (counted as 0, the call's whole growth went to the assistant's part and the image's "entered" was 0).
 */
function outputTokens(output: unknown): number {
  let images = 0;
  if (Array.isArray(output)) {
    for (const p of output) {
      if (!isObj(p) || p.type !== 'input_image') continue;
      const url = str(p.image_url) ?? '';
      const comma = url.startsWith('data:') ? url.indexOf(',') : -1;
      images += imageTokens('openai', comma > 0 ? imageSizeOfBase64(url.slice(comma + 1)) : undefined);
    }
  }
  return estimateText(outputText(output), PROFILE) + images;
}

function contentText(c: unknown): string {
  return Array.isArray(c) ? c.map((p) => (isObj(p) ? str(p.text) ?? '' : '')).join('\n') : typeof c === 'string' ? c : '';
}

export class CodexTurns extends JsonlTurnReader {
  private readonly turns: TurnRecord[] = [];
  private readonly compactions: CompactionRecord[] = [];
  private readonly names = new Map<string, string>();
  private baseline: number | undefined;
  private pendingParts: Partial<Record<PartName, number>> = {};
  private pendingTools: TurnTool[] = [];
  private callsSinceTurn = 0;
  private lastCallOfTurn = new WeakMap<TurnRecord, boolean>();
  private fromRecords = false;
  private lastTotals = '';
  private window: number | undefined;

  constructor() {
    super(MARKERS);
  }

  protected record(o: Record<string, unknown>, index: number): void {
    const p = isObj(o.payload) ? o.payload : undefined;
    const at = str(o.timestamp) ?? '';
    if (o.type === 'session_meta' && p) {
      const bi = isObj(p.base_instructions) ? str(p.base_instructions.text) : str(p.base_instructions);
      if (bi && this.baseline === undefined) this.baseline = estimateText(bi, PROFILE);
      return;
    }
    if (o.type === 'token_usage_record' && p && isObj(p.usage)) {
      if (!this.fromRecords && this.turns.length) this.notes.add('token_usage_record began mid-rollout');
      this.fromRecords = true;
      this.turn(p.usage, at, index);
      return;
    }
    if (o.type === 'event_msg' && p?.type === 'token_count') {
      const info = isObj(p.info) ? p.info : undefined;
      if (!info) {
        this.notes.add('token_count without info');
        return;
      }
      const w = numOr(info.model_context_window);
      if (w) {
        this.window = w;
        const last = this.turns[this.turns.length - 1];
        if (last && last.window === undefined) last.window = w;
      }
      if (this.fromRecords) return;
      const totals = JSON.stringify(info.total_token_usage ?? null);
      const last = isObj(info.last_token_usage) ? info.last_token_usage : undefined;
      if (!last || totals === this.lastTotals || !numOr(last.input_tokens)) return;
      this.lastTotals = totals;
      this.turn(last, at, index);
      return;
    }
    if (o.type === 'compacted' || (o.type === 'event_msg' && p?.type === 'context_compacted')) {
      const prev = this.compactions[this.compactions.length - 1];
      if (prev && prev.seq === this.turns.length) return;
      const last = this.turns[this.turns.length - 1];
      // The summarisation call: the last call, when it made no tool call.
      if (last && this.lastCallOfTurn.get(last) === false && last.kind === 'main') last.kind = 'summary';
      this.compactions.push({
        seq: this.turns.length,
        at,
        kind: 'compact',
        trigger: undefined,
        preTokens: last?.kind === 'summary' ? last.context ?? undefined : undefined,
        toolIds: [],
        line: index,
      });
      if (o.type === 'compacted' && p) addPart(this.pendingParts, 'summary', estimateText(str(p.message) ?? '', PROFILE));
      return;
    }
    if (o.type === 'response_item' && p) this.item(p);
  }

  private turn(u: Record<string, unknown>, at: string, index: number): void {
    const input = numOr(u.input_tokens);
    const cached = numOr(u.cached_input_tokens);
    const t: TurnRecord = {
      seq: this.turns.length,
      at,
      context: input && input > 0 ? input : null,
      input: input !== null && cached !== null ? Math.max(0, input - cached) : input,
      // OpenAI bills no cache write: the uncached input is written to the cache as it is read.
      cacheWrite: null,
      cacheRead: cached,
      output: numOr(u.output_tokens),
      window: this.window,
      kind: 'main',
      parts: this.pendingParts,
      tools: this.pendingTools,
      line: index,
    };
    this.lastCallOfTurn.set(t, this.callsSinceTurn > 0);
    this.callsSinceTurn = 0;
    this.pendingParts = {};
    this.pendingTools = [];
    this.turns.push(t);
  }

  private item(p: Record<string, unknown>): void {
    switch (p.type) {
      case 'message': {
        const role = str(p.role);
        const part: PartName = role === 'assistant' ? 'assistant' : role === 'developer' || role === 'system' ? 'baseline' : 'user';
        addPart(this.pendingParts, part, estimateText(contentText(p.content), PROFILE));
        return;
      }
      case 'reasoning':
        addPart(this.pendingParts, 'thinking', estimateText(contentText(p.summary) + contentText(p.content), PROFILE));
        return;
      case 'function_call':
      case 'custom_tool_call':
      case 'local_shell_call': {
        this.callsSinceTurn++;
        const id = str(p.call_id);
        const name = str(p.name) ?? (p.type === 'local_shell_call' ? 'local_shell' : 'tool');
        const ns = str(p.namespace);
        if (id) this.names.set(id, ns ? `${ns}__${name}` : name);
        addPart(this.pendingParts, 'assistant', estimateText(typeof p.arguments === 'string' ? p.arguments : JSON.stringify(p.input ?? p.action ?? ''), PROFILE) + 8);
        return;
      }
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output': {
        const id = str(p.call_id) ?? '';
        this.pendingTools.push({ id, name: this.names.get(id) ?? 'unknown', tokens: outputTokens(p.output) });
        return;
      }
    }
  }

  result(): TurnsResult {
    const notes = this.readNotes();
    if (!this.fromRecords && this.turns.length) notes.push('calls taken from token_count events (no token_usage_record): the parts of each call are less sure');
    if (this.turns.length === 0) notes.push('no call with usage in this rollout');
    for (const t of this.turns) t.window ??= this.window;
    return { turns: this.turns, compactions: this.compactions, baselineTokens: this.baseline, notes };
  }
}
