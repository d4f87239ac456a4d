/**
 * Claude Code's own transcripts (`~/.claude/projects/<project>/<session>.jsonl`, sub-agents in
 * `<session>/subagents/`), read-only. Every tool_result becomes a payload linked to its tool_use.
 *
 * Where a result's full text can be, fullest first (the longest found wins):
 * - a spill file in the session's `tool-results/` folder, whatever its name, named by
 *   - a `<persisted-output>` stub ("Full output saved to: …"), Claude Code's own spill,
 *   - an MCP notice ("Error: result (454,427 characters) exceeds maximum allowed tokens. Output
 *     has been saved to …/tool-results/mcp-fs-read_text_file-….txt"),
 *   - Bash's `toolUseResult.persistedOutputPath`;
 *   only files listed in that session's own `tool-results/` are read: a path in a transcript
 *   never leads anywhere else;
 * - the line's `mcpMeta.structuredContent` (an MCP tool's structured result, kept whole);
 * - the line's `toolUseResult` (Bash stdout, Read's file, Grep's content…);
 * - the tool_result's `content`: what the model was shown.
 * An image Claude Code saved beside the session (`[Image: source: …/tool-results/x.png]`) becomes
 * the payload's asset. A result that is Spillway's own message (the hook spilled it) is linked
 * to the payload Spillway saved (import-link.ts). Unknown record types and unparsable lines are
 * skipped, never fatal.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { imageSize } from '../agents/index.js';
import { sniffBinary } from '../pipeline/index.js';
import type { AssetRef, GuardAction } from '../pipeline/types.js';
import type { Unit } from './discover.js';
import { type Call, MAX_FACT_LINES, MAX_IMPORT_FILE_BYTES, factsComplete, importedPayloadId, isoOr, str, titleOf } from './import-common.js';
import { type ImportContext, spilledOrImported } from './import-link.js';
import { decodeForReaders, jsonOf, mergedWarning } from './huge-line.js';
import { forEachLine } from './lines.js';
import type { PayloadRecord, SessionFacts, SourceLocation, UnitResult } from './record.js';
import type { SessionSource } from './source.js';
import { ClaudeTurns } from './turns-claude.js';
import { isObj } from '../pipeline/values.js';

function blocksText(blocks: unknown[]): string {
  const allText = blocks.every((b) => isObj(b) && b.type === 'text' && typeof b.text === 'string');
  if (allText) return blocks.map((b) => (b as { text: string }).text).join('\n');
  // Images and other blocks: keep the structure as the transcript has it (base64 and all; a run of
  // blocks a huge line merged is written back as it was: huge-line.ts).
  return jsonOf(blocks);
}

/** Text fields of a line's `toolUseResult` that may hold the full output (Bash stdout, Grep content, Read file, ...). */
function toolUseResultTexts(tur: unknown): string[] {
  if (typeof tur === 'string') return [tur];
  if (Array.isArray(tur)) return [blocksText(tur)];
  if (!isObj(tur)) return [];
  const out: string[] = [];
  if (typeof tur.stdout === 'string') out.push(tur.stderr && typeof tur.stderr === 'string' ? `${tur.stdout}\n${tur.stderr}` : tur.stdout);
  if (typeof tur.content === 'string') out.push(tur.content);
  else if (Array.isArray(tur.content)) out.push(blocksText(tur.content));
  if (isObj(tur.file) && typeof tur.file.content === 'string') out.push(tur.file.content);
  for (const k of ['result', 'output', 'text']) if (typeof tur[k] === 'string') out.push(tur[k] as string);
  return out;
}

/** An MCP tool's structured result: its one text field when it has just one (`{content: "…"}`), else the JSON. */
function structuredText(sc: unknown): string | undefined {
  if (sc === undefined || sc === null) return undefined;
  if (isObj(sc)) {
    const values = Object.values(sc);
    if (values.length === 1 && typeof values[0] === 'string') return values[0];
  }
  return jsonOf(sc);
}

const PERSISTED_RE = /^<persisted-output>[\s\S]*?saved to:\s*(\S[^\n]*)/;
// Claude Code's own notice is the whole result ("Error: result (413,129 characters) exceeds …"): its
// first line, never a later one (a grep over a transcript quotes it).
const MCP_SAVED_RE = /^[^\n]{0,80}?exceeds maximum allowed tokens\. Output has been saved to (\S+?\.txt)\b/;
const IMAGE_SOURCE_RE = /^\[Image: source: (.+)\]$/;

/** The spill file a result points at, by name, if it is one of this session's `tool-results/` files. */
function spillFileNamed(ref: string | undefined, spillFiles: Map<string, string>): string | undefined {
  if (!ref) return undefined;
  return spillFiles.get(path.basename(ref.trim().replace(/\\/g, '/')));
}

export interface ClaudeExtract {
  text: string;
  seen: string;
  field: SourceLocation['field'];
  persistedPath?: string;
  action: GuardAction;
  /** Images Claude Code saved for this result in the session's `tool-results/` (local paths). */
  images: string[];
}

/** `[Image: source: …/tool-results/mcp-fs-blob-….png]` blocks of a result, as this session's files. */
function imageFiles(content: unknown, spillFiles: Map<string, string>): string[] {
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const b of content) {
    const m = isObj(b) && b.type === 'text' && typeof b.text === 'string' ? IMAGE_SOURCE_RE.exec(b.text.trim()) : null;
    const file = spillFileNamed(m?.[1], spillFiles);
    if (file && !out.includes(file)) out.push(file);
  }
  return out;
}

/** Where the result may have been spilled by Claude Code: the spill file's path (a local one), and whether the model saw only a stub. */
function spillRefOf(seen: string, line: Record<string, unknown>, spillFiles: Map<string, string>): { file?: string; spilled: boolean } {
  const stub = PERSISTED_RE.exec(seen) ?? MCP_SAVED_RE.exec(seen);
  const tur = isObj(line.toolUseResult) ? line.toolUseResult : undefined;
  const bashRef = str(tur?.persistedOutputPath);
  return { file: spillFileNamed(stub?.[1], spillFiles) ?? spillFileNamed(bashRef, spillFiles), spilled: stub !== null || bashRef !== undefined };
}

/**
 * The fullest text of one tool_result (see the module comment). `readFile` reads a spill file
 * (null when it is gone or too big).
 */
export async function extractClaudeResult(
  line: Record<string, unknown>,
  block: Record<string, unknown>,
  spillFiles: Map<string, string>,
  readFile: (p: string) => Promise<string | null>,
): Promise<ClaudeExtract> {
  const c = block.content;
  const seen = typeof c === 'string' ? c : Array.isArray(c) ? blocksText(c) : c === undefined ? '' : jsonOf(c);
  let best: ClaudeExtract = { text: seen, seen, field: 'content', action: 'pass', images: imageFiles(c, spillFiles) };
  const ref = spillRefOf(seen, line, spillFiles);
  // Claude Code spilled it itself; the model saw a stub or a notice.
  if (ref.spilled) best.action = 'spill';
  if (ref.file) {
    const t = await readFile(ref.file);
    if (t !== null && t.length > best.text.length) best = { ...best, text: t, field: 'persisted', persistedPath: ref.file };
  }
  const mcp = isObj(line.mcpMeta) ? structuredText(line.mcpMeta.structuredContent) : undefined;
  if (mcp !== undefined && mcp.length > best.text.length) best = { ...best, text: mcp, field: 'mcpMeta', persistedPath: undefined };
  for (const t of toolUseResultTexts(line.toolUseResult)) {
    if (t.length > best.text.length) best = { ...best, text: t, field: 'toolUseResult', persistedPath: undefined };
  }
  return best;
}

/** Read a spill file through a source: null when gone or over MAX_IMPORT_FILE_BYTES. */
export function spillReader(source: SessionSource): (p: string) => Promise<string | null> {
  return async (p) => {
    try {
      const r = await source.readRange(p, 0, MAX_IMPORT_FILE_BYTES + 1);
      return r.size > MAX_IMPORT_FILE_BYTES ? null : r.bytes.toString('utf8');
    } catch {
      return null;
    }
  };
}

function spillFilesOf(unit: Unit): Map<string, string> {
  const m = new Map<string, string>();
  for (const f of unit.files) if (f.path !== unit.key) m.set(f.name, f.path);
  return m;
}

/** Markup Claude Code writes as a "user" line that is not something the user asked. */
const NOT_A_PROMPT_RE = /^\s*(<(command-name|command-message|command-args|local-command-stdout|local-command-caveat|system-reminder|user-prompt-submit-hook|bash-input|bash-stdout)>|Caveat: )/;

function promptOf(o: Record<string, unknown>): string | undefined {
  if (o.type !== 'user' || o.isMeta === true || !isObj(o.message)) return undefined;
  const c = o.message.content;
  let text: string | undefined;
  if (typeof c === 'string') text = c;
  else if (Array.isArray(c) && c.every((b) => isObj(b) && b.type !== 'tool_result')) {
    text = c.map((b) => (isObj(b) && b.type === 'text' ? str(b.text) ?? '' : '')).join(' ');
  }
  return text && !NOT_A_PROMPT_RE.test(text) ? titleOf(text) : undefined;
}

/** What any line says about the session: where it ran, which version, what was asked first. */
function noteFacts(o: Record<string, unknown>, facts: SessionFacts): void {
  facts.project ??= str(o.cwd);
  const version = str(o.version);
  if (facts.client === undefined && version) facts.client = `Claude Code ${version}`;
  facts.title ??= promptOf(o);
}

class ClaudeTranscript {
  readonly calls = new Map<string, Call>();
  readonly out = new Map<string, PayloadRecord>();
  readonly facts: SessionFacts = {};
  badLines = 0;
  /** Lines whose content blocks were merged into runs (huge-line.ts), and how many blocks. */
  mergedLines = 0;
  mergedBlocks = 0;
  private readonly spill: Map<string, string>;
  private readonly readFile: (p: string) => Promise<string | null>;
  private readonly fallbackTime: string;

  constructor(
    private readonly ctx: ImportContext,
    private readonly unit: Unit,
  ) {
    this.spill = spillFilesOf(unit);
    this.readFile = spillReader(ctx.source);
    this.fallbackTime = new Date(unit.files[0]?.mtimeMs ?? 0).toISOString();
  }

  /**
   * Whether a line is worth decoding: most lines (chat text, snapshots, a pasted 500 KB image) hold
   * no tool traffic, and are skipped undecoded once the session's facts are known.
   */
  needs(tools: boolean, index: number): boolean {
    return tools || (index < MAX_FACT_LINES && !factsComplete(this.facts));
  }

  /** A line {@link needs} asked for, decoded (`o`); `tools` as {@link hasTools} found, `at` where it is in the file. */
  async take(o: unknown, tools: boolean, at: { index: number; offset: number; length: number }): Promise<void> {
    if (!isObj(o)) return;
    noteFacts(o, this.facts);
    if (!tools || !isObj(o.message) || !Array.isArray(o.message.content)) return;
    const content = o.message.content as unknown[];
    if (o.type === 'assistant') {
      for (const b of content) {
        if (isObj(b) && b.type === 'tool_use' && typeof b.id === 'string') this.calls.set(b.id, { name: str(b.name) ?? 'tool', input: b.input });
      }
    } else if (o.type === 'user') {
      for (const b of content) {
        if (!isObj(b) || b.type !== 'tool_result') continue;
        await this.result(o, b, at);
        // A line may hold thousands of results (huge-line.ts keeps up to MAX_KEPT_BLOCKS_PER_LINE).
        await this.ctx.yielder.maybe();
      }
    }
  }

  private async result(o: Record<string, unknown>, b: Record<string, unknown>, at: { index: number; offset: number; length: number }): Promise<void> {
    const transcript = this.unit.key;
    const toolUseId = str(b.tool_use_id);
    const call = toolUseId ? this.calls.get(toolUseId) : undefined;
    const x = await extractClaudeResult(o, b, this.spill, this.readFile);
    const id = importedPayloadId(transcript, toolUseId ?? `line${at.index}`);
    // The MCP proxy says where it saved the payload in its result's `_meta`; Claude Code keeps that in mcpMeta.
    const spill = isObj(o.mcpMeta) && isObj(o.mcpMeta._meta) && isObj(o.mcpMeta._meta['spillway/spill']) ? o.mcpMeta._meta['spillway/spill'] : undefined;
    const rec = await spilledOrImported(this.ctx, {
      spillwayPath: str(spill?.payloadPath),
      callId: toolUseId,
      id,
      tool: call?.name ?? 'unknown',
      input: call?.input,
      text: x.text,
      seen: x.seen,
      createdAt: isoOr(o.timestamp, this.fallbackTime),
      action: x.action,
      path: x.persistedPath ?? transcript,
      source: { transcript, line: at.index, offset: at.offset, length: at.length, toolUseId, field: x.field, persistedPath: x.persistedPath },
    });
    if (x.images.length && rec.action !== 'spill') {
      const saved = await imageAssets(this.ctx.source, x.images, path.dirname(transcript));
      rec.assets = saved;
      // The model saw these images: the ledger prices them by their pixels.
      rec.images = [...(rec.images ?? []), ...saved.map((a) => ({ size: a.size, bytes: a.bytes, mime: a.mimeType }))];
    }
    const prev = this.out.get(id);
    if (!prev || prev.bytes < rec.bytes) this.out.set(id, rec);
  }
}

/** Largest image spill file hashed into an asset. */
const MAX_IMAGE_ASSET_BYTES = 64 * 1024 * 1024;

/** Claude Code's saved images of a result as assets (content-addressed by their bytes). */
async function imageAssets(source: SessionSource, files: string[], baseDir: string): Promise<Array<AssetRef & { size?: { width: number; height: number } }>> {
  const out: Array<AssetRef & { size?: { width: number; height: number } }> = [];
  for (const file of files) {
    try {
      const r = await source.readRange(file, 0, MAX_IMAGE_ASSET_BYTES + 1);
      if (r.size > MAX_IMAGE_ASSET_BYTES) continue;
      const sniffed = await sniffBinary(r.bytes);
      const dims = imageSize(r.bytes);
      out.push({
        ...(dims ? { size: { width: dims.width, height: dims.height } } : {}),
        path: file,
        relPath: path.relative(baseDir, file).split(path.sep).join('/'),
        mimeType: sniffed?.mimeType ?? 'application/octet-stream',
        bytes: r.size,
        sha256: crypto.createHash('sha256').update(r.bytes).digest('hex'),
        jsonPath: '',
        source: 'mcp-image',
        sniffed: sniffed !== undefined,
      });
    } catch {
      /* gone since the listing */
    }
  }
  return out;
}

/** Whether a line may hold tool traffic (a tool_use or a tool_result block): looked for once per line. */
const hasTools = (buf: Buffer) => buf.includes('"tool_use"') || buf.includes('"tool_result"');

export async function importClaude(ctx: ImportContext, unit: Unit): Promise<UnitResult> {
  const t = new ClaudeTranscript(ctx, unit);
  const turns = new ClaudeTurns();
  const scan = await forEachLine(ctx.source, unit.key, ctx.yielder, async (buf, index, offset) => {
    // The payloads and the turns read the same lines: each line is decoded once, for both.
    turns.seen(index);
    const forTurns = turns.wants(buf);
    const tools = hasTools(buf);
    const forCalls = t.needs(tools, index);
    if (!forTurns && !forCalls) return;
    // A long line is decoded in slices, its blocks past a budget merged (huge-line.ts).
    const d = await decodeForReaders(buf, index, ctx.yielder, { turns: forTurns, calls: forCalls }, t, turns);
    if (!d) return;
    const o = d.value;
    // With the line's place, the reader notes where each tool result is instead of estimating it (TurnTool.at).
    if (forTurns) turns.take(o, index, { offset, length: buf.length });
    if (forCalls) return t.take(o, tools, { index, offset, length: buf.length });
  });
  const warnings: string[] = [];
  if (t.badLines) warnings.push(`${unit.key}: ${t.badLines} unparsable line(s) skipped`);
  warnings.push(...mergedWarning(unit.key, t));
  if (scan.skippedLongLines) warnings.push(`${unit.key}: ${scan.skippedLongLines} over-long line(s) skipped`);
  let hash = scan.hash;
  for (const f of unit.files) if (f.path !== unit.key) hash += `|${f.name}:${f.size}`;
  return { payloads: [...t.out.values()], hash, warnings, session: t.facts, turns: turns.result() };
}

/** Re-read one result from its transcript line (the line is at `offset`, `length` bytes). */
export async function rereadClaude(source: SessionSource, loc: SourceLocation, o: Record<string, unknown>, toolResultsDir: string): Promise<string | null> {
  const msg = isObj(o.message) ? o.message : null;
  const blocks = msg && Array.isArray(msg.content) ? (msg.content as unknown[]) : [];
  const block = blocks.find((b) => isObj(b) && b.type === 'tool_result' && (loc.toolUseId === undefined || b.tool_use_id === loc.toolUseId));
  if (!isObj(block)) return null;
  const spill = new Map<string, string>();
  for (const e of (await source.list(toolResultsDir)) ?? []) if (e.type === 'file') spill.set(e.name, path.join(toolResultsDir, e.name));
  return (await extractClaudeResult(o, block, spill, spillReader(source))).text;
}
