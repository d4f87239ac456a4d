import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { detectRootKind, discover } from '../../src/index/discover.js';
import { readerOf } from '../../src/index/clients.js';
import { type ImportContext, readImportedText } from '../../src/index/importers.js';
import { localSource } from '../../src/index/source.js';
import { Yielder } from '../../src/index/yielder.js';
import type { ContentKind } from '../../src/pipeline/types.js';
import { detectContent, detectTextFormat, unwrapText } from '../../src/pipeline/index.js';
import { structuralSummary } from '../../src/summarize/index.js';
import { FIXTURES } from './helpers.js';

// Every real tool result in the shared fixtures (SOURCES.md: Claude Code, Codex and Gemini
// sessions), as the index imports it. Before the sniffers were one, the index and the guard
// disagreed on 79 of them (Claude Code Read output above all) and the summarizer on more.

interface Result {
  tool: string;
  input: unknown;
  /** What the index stored. */
  indexKind: ContentKind;
  text: string;
}

/** SOURCES.md: 167 + 19 + 7 + 2 + 40 Claude Code results, the spotter excerpt's 4, 102 Codex outputs, 10 Gemini calls. */
const FIXTURE_RESULTS = 351;

async function importAll(): Promise<Result[]> {
  const yielder = new Yielder();
  const ctx: ImportContext = { source: localSource, yielder, resolveSpill: async () => null };
  const found = await discover({ source: localSource, root: FIXTURES, kind: detectRootKind(FIXTURES), yielder });
  const out: Result[] = [];
  for (const unit of found.units) {
    const reader = readerOf(unit.kind);
    if (!reader) continue;
    const { payloads } = await reader.import(ctx, unit);
    for (const p of payloads) {
      const text = await readImportedText(localSource, p.source!, unit.kind);
      expect(text, `${unit.key} ${p.tool}`).not.toBeNull();
      out.push({ tool: p.tool, input: p.input, indexKind: p.kind, text: text! });
    }
  }
  return out;
}

/** The kind the structural summary names in its header (after a wrapper note, if any). */
function summaryKind(text: string): string {
  const lines = structuralSummary(text, { maxOutputTokens: 200 }).split('\n');
  const head = /digest of the content inside\.$/.test(lines[0]!) ? lines[1]! : lines[0]!;
  const m = /^(NDJSON|JSON|CSV|Log|HTML|XML|Binary|Code|Markdown|Text)\b/.exec(head);
  if (!m) throw new Error(`summary header names no kind: ${head}`);
  return m[1] === 'Binary' ? 'binary' : m[1]!.toLowerCase();
}

/** What a file name says its content is (the ground truth for Read results). */
const KIND_BY_EXT: Record<string, ContentKind> = { '.ts': 'code', '.tsx': 'code', '.css': 'code', '.json': 'json', '.md': 'markdown' };

describe('one content-kind sniffer: index, guard and summarizer agree on real tool results', () => {
  let results: Result[];
  beforeAll(async () => {
    results = await importAll();
  }, 60_000);

  it('the index, the guard and the structural summary name the same kind for every result', () => {
    expect(results).toHaveLength(FIXTURE_RESULTS);
    const disagree: string[] = [];
    for (const r of results) {
      const guard = detectContent(r.text).kind;
      const summary = summaryKind(r.text);
      if (r.indexKind !== guard || summary !== guard) disagree.push(`${r.tool}: index ${r.indexKind}, guard ${guard}, summary ${summary}: ${JSON.stringify(r.text.slice(0, 80))}`);
    }
    expect(disagree).toEqual([]);
  });

  it("Claude Code Read listings are classified by the kind of the file they show, not as text", () => {
    let checked = 0;
    for (const r of results) {
      if (r.tool !== 'Read') continue;
      const file = (r.input as { file_path?: string } | undefined)?.file_path ?? '';
      const expected = KIND_BY_EXT[path.extname(file)];
      const format = detectTextFormat(r.text);
      if (!format.wrappers.includes('line-numbers')) continue;
      // The listing itself is never the file: the arrows are gone once unwrapped.
      expect(unwrapText(r.text)).not.toMatch(/^ *\d+→/m);
      if (!expected) continue;
      expect({ file, kind: r.indexKind }).toEqual({ file, kind: expected });
      checked++;
    }
    // Most of the fixtures' Reads are of .ts/.tsx/.css/.json/.md files.
    expect(checked).toBeGreaterThan(40);
  });

  it('files written with Write are classified by their extension too', () => {
    let checked = 0;
    for (const r of results) {
      if (r.tool !== 'Write' || r.text.startsWith('<tool_use_error>')) continue;
      const expected = KIND_BY_EXT[path.extname((r.input as { file_path?: string }).file_path ?? '')];
      if (!expected) continue;
      expect({ text: r.text.slice(0, 60), kind: r.indexKind }).toEqual({ text: r.text.slice(0, 60), kind: expected });
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });
});
