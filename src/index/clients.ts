/**
 * The index's half of each client adapter (src/agents/adapter.ts): reading its transcripts, which needs the
 * index's own machinery (sources, line readers, the yielder). One line per client, keyed by the registry's
 * `ClientId`, so a client the registry lists and this table lacks is a compile error, never another client's reader.
 *
 * | client | importer | transcripts |
 * | --- | --- | --- |
 * | claude-code | import-claude.ts | `~/.claude/projects/<project>/<session>.jsonl` |
 * | codex | import-codex.ts | `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` |
 * | gemini | import-gemini.ts | `~/.gemini/tmp/<project hash>/chats/session-*.json(l)` |
 * | opencode | import-opencode.ts | `~/.local/share/opencode/opencode.db` (SQLite): one unit per session in it |
 */
import { type ClientId, adapterOf, isClientId } from '../agents/index.js';
import type { Unit } from './discover.js';
import { importClaude, rereadClaude } from './import-claude.js';
import { importCodex, rereadCodex } from './import-codex.js';
import { importGemini, rereadGemini } from './import-gemini.js';
import { importOpenCode, openCodeSessions, rereadOpenCode } from './import-opencode.js';
import type { ImportContext } from './import-link.js';
import { decodeLine } from './huge-line.js';
import { readRange } from './lines.js';
import type { SourceLocation, UnitResult } from './record.js';
import type { SessionSource } from './source.js';
import { claudeToolTokensAt } from './turns-claude.js';
import type { TurnToolAt } from './turns.js';
import { isObj } from '../pipeline/values.js';
import { IndexStopping, Yielder } from './yielder.js';

export interface ClientReader {
  /** Every result, turn and fact of one transcript (a unit the walker found and the adapter recognised). */
  import(ctx: ImportContext, unit: Unit): Promise<UnitResult>;
  /** One result's full text again, from where the import found it; null when it is no longer there. */
  reread(source: SessionSource, loc: SourceLocation, yielder: Yielder): Promise<string | null>;
  /**
   * For a turn reader that places big results on their line (`TurnTool.at`) instead of estimating them while
   * listing: their tokens, from the line's bytes; null for a place that no longer holds that result.
   */
  toolTokensAt?(line: Buffer, tools: ReadonlyArray<{ id: string; at: TurnToolAt }>, yielder?: Yielder): Promise<Array<number | null>>;
  /**
   * A client whose sessions share one database file (its adapter's `files.database`): the sessions in
   * that file, each a unit of its own keyed `<file>/<id>`, with a stamp (rows, last update) standing in
   * for its size and mtime, so a session that did not change is not read again. Throws when the file
   * cannot be read as one (the walker then hands the file itself to `import`, which says why).
   */
  sessionsIn?(file: string): Array<{ id: string; parent?: string; stamp: { size: number; mtimeMs: number } }>;
}

/** A JSONL transcript's result: decode its line (in slices, as the listing read it: huge-line.ts), then let the client pick the result out. */
function jsonlReread(pick: (source: SessionSource, loc: SourceLocation, line: Record<string, unknown>) => Promise<string | null> | string | null): ClientReader['reread'] {
  return async (source, loc, yielder) => {
    if (loc.offset === undefined || loc.length === undefined) return null;
    let o: unknown;
    try {
      o = (await decodeLine(await readRange(source, loc.transcript, loc.offset, loc.length, yielder), yielder)).value;
    } catch (err) {
      if (err instanceof IndexStopping) throw err;
      return null;
    }
    return isObj(o) ? pick(source, loc, o) : null;
  };
}

export const CLIENT_READERS = {
  'claude-code': {
    import: importClaude,
    reread: jsonlReread((source, loc, o) => rereadClaude(source, loc, o, adapterOf('claude-code')?.files.around?.(loc.transcript).sideFilesDir ?? '')),
    toolTokensAt: claudeToolTokensAt,
  },
  codex: { import: importCodex, reread: jsonlReread((_source, loc, o) => rereadCodex(loc, o)) },
  gemini: { import: importGemini, reread: (source, loc) => rereadGemini(source, loc) },
  opencode: { import: importOpenCode, reread: rereadOpenCode, sessionsIn: openCodeSessions },
} satisfies Record<ClientId, ClientReader> as Record<ClientId, ClientReader>;

/** The reader of a session kind the index stored; undefined for any other (a Spillway session, an id no adapter has). */
export function readerOf(kind: string | null | undefined): ClientReader | undefined {
  return isClientId(kind) ? CLIENT_READERS[kind] : undefined;
}
