/**
 * `spillway index` (indexFolders) writes each tool result's ledger as `serve` does: the index cannot
 * measure what entered the context itself (that takes the timeline's assembly), so an index opened
 * without its timeline layer wrote every "entered" as estimated (13,437 tokens on the realistic
 * session, against 20,626 measured) and the CLI's figures disagreed with the inspector's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { indexFolders } from '../../src/service/offline.js';
import { openIndexWithTimelines } from '../../src/timeline/index.js';

const REALISTIC = path.resolve(__dirname, '../clients/fixtures/realistic/claude-code');
// A private folder of our own under the system's temp folder, never the temp folder itself.
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-index-ledger-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

type LedgerRow = { id: string; entered: number | null; how: string | null };
function ledgers(dbPath: string): LedgerRow[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    return db.prepare('SELECT id, l_entered AS entered, l_entered_how AS how FROM payloads ORDER BY id').all() as LedgerRow[];
  } finally {
    db.close();
  }
}

describe('spillway index writes the ledgers serve writes', () => {
  it('every result of the realistic session has the same "entered", measured, from both', async () => {
    const home = path.join(base, 'home');
    const cliDb = path.join(base, 'cli', 'index.sqlite');
    fs.mkdirSync(path.dirname(cliDb), { recursive: true });
    await indexFolders({ dirs: [REALISTIC], dbPath: cliDb, env: { SPILLWAY_HOME: home } });

    // The service's way: the timeline attached before the first scan (src/service/context.ts).
    const serveDb = path.join(base, 'serve', 'index.sqlite');
    fs.mkdirSync(path.dirname(serveDb), { recursive: true });
    const { index } = openIndexWithTimelines({ dbPath: serveDb });
    const root = index.addRoot(REALISTIC);
    await index.scan({ rootId: root.id, full: true });
    await index.close();

    const cli = ledgers(cliDb);
    const serve = ledgers(serveDb);
    expect(cli.length).toBeGreaterThan(10);
    expect(cli).toEqual(serve);
    expect(cli.filter((r) => r.how !== 'measured')).toEqual([]);
  }, 120_000);
});
