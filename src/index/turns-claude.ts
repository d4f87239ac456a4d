/**
 * Turns of a Claude Code transcript (as 2.1.328 writes them; test/index/fixtures/timeline holds
 * real ones):
 * - one API call writes one `assistant` line per content block, all with the same `message.id`,
 *   `requestId` and `message.usage`: a call is one key, its usage the largest seen per field
 *   (an early line of a streamed call may hold a placeholder `output_tokens`);
 * - the context the model received is `input_tokens + cache_creation_input_tokens +
 *   cache_read_input_tokens`; `input_tokens` alone is often 0-3, the uncached tail;
 * - `<synthetic>` assistant lines (the client's own error notes) are no API call;
 * - `system` `compact_boundary` with `compactMetadata{trigger, preTokens, postTokens}` marks a
 *   compaction; the `isCompactSummary` user line that follows is the summary the next call gets;
 *   `microcompact_boundary` (not seen in a run here; read by its documented field names) clears
 *   old tool results;
 * - `api-request-shape` holds the system prompt and tool definitions of the calls: the baseline.
 */
import { decodeLine, isMergedBlock, jsonOf } from './huge-line.js';

import { imageSizeOfBase64, imageTokens } from '../agents/index.js';
import { str } from './import-common.js';
import { type CompactionRecord, JsonlTurnReader, type LineAt, type PartName, type TurnRecord, type TurnTool, type TurnToolAt, type TurnsResult, addPart, estimateText, numOr } from './turns.js';
import { isObj } from '../pipeline/values.js';
import type { Yielder } from './yielder.js';

const PROFILE = 'claude' as const;

/** Markers of the lines this reader parses; any other line is passed over undecoded. */
const MARKERS = ['"type":"assistant"', '"type":"user"', 'compact_boundary', '"api-request-shape"'];

function textOf(c: unknown): string {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return c === undefined || c === null ? '' : jsonOf(c);
  // A run of blocks a huge line merged (huge-line.ts) counts as the JSON the transcript had for them.
  return c.map((b) => (isObj(b) && typeof b.text === 'string' ? b.text : isObj(b) && b.type === 'image' ? '' : isMergedBlock(b) ? b.json : jsonOf(b))).join('\n');
}

/** The larger of two usage figures, either unknown. */
const max = (a: number | null, b: number | null) => (b === null ? a : a === null ? b : Math.max(a, b));

/** Spillway's estimate of a tool_result block: what the model was shown, its images by their pixels (Anthropic's rule), not their base64. */
function claudeToolTokens(b: Record<string, unknown>): number {
  let images = 0;
  if (Array.isArray(b.content)) {
    for (const x of b.content) {
      if (!isObj(x) || x.type !== 'image') continue;
      const data = isObj(x.source) ? str(x.source.data) : undefined;
      images += imageTokens('anthropic', data ? imageSizeOfBase64(data) : undefined);
    }
  }
  return estimateText(textOf(b.content), PROFILE) + images;
}

/**
 * The tokens of the tool results a listing placed on one transcript line (TurnTool.at), from the
 * line's bytes: the same estimate the reader would have made of them while listing. Null for a
 * place that holds no tool_result of that id (the file changed since it was listed).
 */
export async function claudeToolTokensAt(line: Buffer, tools: ReadonlyArray<{ id: string; at: TurnToolAt }>, yielder?: Yielder): Promise<Array<number | null>> {
  let content: unknown;
  try {
    // A long line in slices, its blocks past a budget merged, as the listing read it (huge-line.ts).
    const o = (await decodeLine(line, yielder)).value;
    content = isObj(o) && isObj(o.message) ? o.message.content : undefined;
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    return tools.map(() => null);
  }
  return tools.map(({ id, at }) => {
    const b = Array.isArray(content) ? content[at.block] : undefined;
    return isObj(b) && b.type === 'tool_result' && (str(b.tool_use_id) ?? '') === id ? claudeToolTokens(b) : null;
  });
}

export class ClaudeTurns extends JsonlTurnReader {
  private readonly turns: TurnRecord[] = [];
  private readonly byKey = new Map<string, TurnRecord>();
  private readonly compactions: CompactionRecord[] = [];
  private readonly names = new Map<string, string>();
  private baseline: number | undefined;
  /** What entered since the last call, waiting for the next one. */
  private pendingParts: Partial<Record<PartName, number>> = {};
  private pendingTools: TurnTool[] = [];

  constructor() {
    super(MARKERS);
  }

  protected record(o: Record<string, unknown>, index: number, at?: LineAt): void {
    switch (o.type) {
      case 'assistant':
        return this.assistant(o, index);
      case 'user':
        return this.user(o, at);
      case 'system':
        if (o.subtype === 'compact_boundary' || o.subtype === 'microcompact_boundary') this.boundary(o, index);
        return;
      case 'api-request-shape':
        if (this.baseline === undefined && isObj(o.shape)) this.baseline = estimateText(jsonOf(o.shape), PROFILE);
        return;
    }
  }

  private assistant(o: Record<string, unknown>, index: number): void {
    const m = isObj(o.message) ? o.message : undefined;
    if (!m) return;
    if (m.model === '<synthetic>') {
      this.notes.add('client-written (<synthetic>) assistant line, no API call');
      return;
    }
    const key = str(m.id) ?? str(o.requestId) ?? str(o.uuid) ?? `line${index}`;
    let t = this.byKey.get(key);
    if (!t) {
      t = {
        seq: this.turns.length,
        at: str(o.timestamp) ?? '',
        model: str(m.model),
        context: null,
        input: null,
        cacheWrite: null,
        cacheRead: null,
        output: null,
        kind: o.isSidechain === true ? 'sidechain' : 'main',
        parts: this.pendingParts,
        tools: this.pendingTools,
        line: index,
      };
      this.pendingParts = {};
      this.pendingTools = [];
      this.turns.push(t);
      this.byKey.set(key, t);
    }
    const u = isObj(m.usage) ? m.usage : undefined;
    if (u) {
      t.input = max(t.input, numOr(u.input_tokens));
      t.cacheWrite = max(t.cacheWrite, numOr(u.cache_creation_input_tokens));
      t.cacheRead = max(t.cacheRead, numOr(u.cache_read_input_tokens));
      t.output = max(t.output, numOr(u.output_tokens));
      const ctx = (t.input ?? 0) + (t.cacheWrite ?? 0) + (t.cacheRead ?? 0);
      t.context = t.input === null && t.cacheWrite === null && t.cacheRead === null ? null : ctx > 0 ? ctx : null;
    }
    // This call's own blocks enter the next call's context.
    for (const b of Array.isArray(m.content) ? m.content : []) {
      if (!isObj(b)) continue;
      if (b.type === 'text') addPart(this.pendingParts, 'assistant', estimateText(str(b.text) ?? '', PROFILE));
      else if (b.type === 'thinking') addPart(this.pendingParts, 'thinking', estimateText(str(b.thinking) ?? '', PROFILE));
      else if (b.type === 'tool_use') {
        if (typeof b.id === 'string') this.names.set(b.id, str(b.name) ?? 'tool');
        addPart(this.pendingParts, 'assistant', estimateText(jsonOf(b.input ?? {}), PROFILE) + 8);
      }
    }
  }

  /** `at`: where the line is; its tool results are then estimated later, from there (TurnTool.at). */
  private user(o: Record<string, unknown>, at?: LineAt): void {
    const m = isObj(o.message) ? o.message : undefined;
    if (!m) return;
    const c = m.content;
    const textPart: PartName = o.isCompactSummary === true ? 'summary' : o.isMeta === true ? 'other' : 'user';
    if (typeof c === 'string') {
      addPart(this.pendingParts, textPart, estimateText(c, PROFILE));
      return;
    }
    if (!Array.isArray(c)) return;
    for (const [block, b] of c.entries()) {
      if (!isObj(b)) continue;
      if (b.type === 'tool_result') {
        const id = str(b.tool_use_id) ?? '';
        const name = this.names.get(id) ?? 'unknown';
        this.pendingTools.push(at ? { id, name, tokens: 0, at: { offset: at.offset, length: at.length, block } } : { id, name, tokens: claudeToolTokens(b) });
      } else if (b.type === 'text') addPart(this.pendingParts, textPart, estimateText(str(b.text) ?? '', PROFILE));
    }
  }

  private boundary(o: Record<string, unknown>, index: number): void {
    const micro = o.subtype === 'microcompact_boundary';
    const meta = isObj(o.microcompactMetadata) ? o.microcompactMetadata : isObj(o.compactMetadata) ? o.compactMetadata : {};
    const ids = Array.isArray(meta.compactedToolIds) ? meta.compactedToolIds.filter((x): x is string => typeof x === 'string') : [];
    this.compactions.push({
      seq: this.turns.length,
      at: str(o.timestamp) ?? '',
      kind: micro ? 'microcompact' : 'compact',
      trigger: str(meta.trigger),
      preTokens: numOr(meta.preTokens) ?? undefined,
      postTokens: numOr(meta.postTokens) ?? undefined,
      tokensSaved: numOr(meta.tokensSaved) ?? undefined,
      toolIds: ids,
      line: index,
    });
  }

  result(): TurnsResult {
    const notes = this.readNotes();
    const noUsage = this.turns.filter((t) => t.context === null).length;
    if (noUsage) notes.push(`${noUsage} call(s) without usage: their context is unknown`);
    if (this.turns.length === 0) notes.push('no API call with usage in this transcript');
    return { turns: this.turns, compactions: this.compactions, baselineTokens: this.baseline, notes };
  }
}
