/**
 * Read-only importers for other agents' own session files, and reading one imported result
 * again (for full-text search, and when the inspector opens it: the index keeps only a window).
 *
 * | agent       | module            | transcripts                                        |
 * | ----------- | ----------------- | -------------------------------------------------- |
 * | Claude Code | import-claude.ts  | `~/.claude/projects/<project>/<session>.jsonl`      |
 * | Codex CLI   | import-codex.ts   | `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`      |
 * | Gemini CLI  | import-gemini.ts  | `~/.gemini/tmp/<project hash>/chats/session-*.json` |
 */
import { claudeToolResultsDir } from './discover.js';
import { rereadClaude } from './import-claude.js';
import { rereadCodex } from './import-codex.js';
import { MAX_IMPORT_FILE_BYTES } from './import-common.js';
import { rereadGemini } from './import-gemini.js';
import { decodeLine } from './huge-line.js';
import { readRange } from './lines.js';
import type { SourceLocation } from './record.js';
import type { SessionSource } from './source.js';
import { isObj } from '../pipeline/values.js';
import { IndexStopping, Yielder } from './yielder.js';

export { importClaude } from './import-claude.js';
export { importCodex } from './import-codex.js';
export { importGemini } from './import-gemini.js';
export { MAX_IMPORT_FILE_BYTES } from './import-common.js';
export type { ImportContext } from './import-link.js';

/**
 * The full text of an imported payload, read again from where the scan found it. Null when the
 * transcript changed so the payload is no longer there. A result held whole in a file (a spill
 * file, a linked Spillway payload) is the caller's to read from `persistedPath`.
 */
export async function readImportedText(source: SessionSource, loc: SourceLocation, yielder: Yielder = new Yielder()): Promise<string | null> {
  if (loc.persistedPath) {
    try {
      const r = await source.readRange(loc.persistedPath, 0, MAX_IMPORT_FILE_BYTES);
      return r.bytes.toString('utf8');
    } catch {
      return null;
    }
  }
  if (loc.call !== undefined) return rereadGemini(source, loc);
  if (loc.offset === undefined || loc.length === undefined) return null;
  let o: unknown;
  try {
    // A long line in slices, its blocks past a budget merged, as the listing read it (huge-line.ts).
    o = (await decodeLine(await readRange(source, loc.transcript, loc.offset, loc.length), yielder)).value;
  } catch (err) {
    if (err instanceof IndexStopping) throw err;
    return null;
  }
  if (!isObj(o)) return null;
  if (loc.field === 'output' || loc.field === 'event') return rereadCodex(loc, o);
  return rereadClaude(source, loc, o, claudeToolResultsDir(loc.transcript));
}
