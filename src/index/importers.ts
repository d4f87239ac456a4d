/**
 * Read-only importers for other agents' own session files, and reading one imported result
 * again (for full-text search, and when the inspector opens it: the index keeps only a window).
 *
 * Each client's importer and re-reader is its line in `clients.ts` (the index's half of its adapter).
 */
import { MAX_IMPORT_FILE_BYTES } from './import-common.js';
import { readerOf } from './clients.js';
import type { SourceLocation } from './record.js';
import type { SessionSource } from './source.js';
import { Yielder } from './yielder.js';

export { MAX_IMPORT_FILE_BYTES } from './import-common.js';
export type { ImportContext } from './import-link.js';

/**
 * The full text of an imported payload, read again from where the scan found it, by the reader of
 * the client whose session it is (`client`: the session's kind). Null when the transcript changed so
 * the payload is no longer there. A result held whole in a file (a spill file, a linked Spillway
 * payload) is read from `persistedPath`. A kind no reader has is an error, never another client's reader.
 */
export async function readImportedText(source: SessionSource, loc: SourceLocation, client: string, yielder: Yielder = new Yielder()): Promise<string | null> {
  if (loc.persistedPath) {
    try {
      const r = await source.readRange(loc.persistedPath, 0, MAX_IMPORT_FILE_BYTES);
      return r.bytes.toString('utf8');
    } catch {
      return null;
    }
  }
  const reader = readerOf(client);
  if (!reader) throw new Error(`no reader for sessions of kind "${client}" (${loc.transcript}): not a client the registry lists`);
  return reader.reread(source, loc, yielder);
}
