import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectRootKind, discover } from '../../src/index/discover.js';
import { type ImportContext, importClaude } from '../../src/index/importers.js';
import { localSource } from '../../src/index/source.js';
import { Yielder } from '../../src/index/yielder.js';
import { tmpIndex } from './helpers.js';

// A real hooked Claude Code session (fixtures/hook-spill-elsewhere/SOURCES.md) whose spills are in a
// folder the index was not given: the transcript holds the guard's message, not the result. Listing
// those calls as "pass" told people the whole result had gone to the model.
const ROOT = path.join(import.meta.dirname, 'fixtures', 'hook-spill-elsewhere');

describe('a transcript call the guard spilled, with the spill not in any open folder', () => {
  it('is listed as a spill at the size of what the model got, and a call that passed stays a pass', async () => {
    const yielder = new Yielder();
    const asked: string[] = [];
    const ctx: ImportContext = { source: localSource, yielder, resolveSpill: async (p) => (asked.push(p), null) };
    const found = await discover({ source: localSource, root: ROOT, kind: detectRootKind(ROOT), yielder });
    expect(found.units).toHaveLength(1);
    const { payloads } = await importClaude(ctx, found.units[0]!);
    const byTool = payloads.map((p) => ({ tool: p.tool, action: p.action, bytes: p.bytes, spilledTo: p.source?.spilledTo }));
    expect(byTool.map((p) => `${p.tool}:${p.action}`)).toEqual(['Read:spill', 'Bash:spill', 'Bash:pass']);
    expect(asked).toHaveLength(2);
    for (const p of byTool.slice(0, 2)) {
      // what is in the transcript is the message (a few KB), not the 90-100 KB result: never claimed as more
      expect(p.bytes).toBeLessThan(8_000);
      expect(p.spilledTo).toMatch(/\/long_responses\/\d{8}T\d{9}Z_(Read|Bash)_[0-9a-f]{8}_0\.(txt|json)$/);
    }
    expect(byTool[2]!.spilledTo).toBeUndefined();
  });

  it("the payload's detail names where the spill went, so the inspector can say which folder to add", async () => {
    const { index } = tmpIndex();
    index.addRoot(ROOT);
    await index.scan();
    const rows = index.listPayloads({}).rows;
    const spills = rows.filter((r) => r.action === 'spill');
    expect(spills).toHaveLength(2);
    for (const r of spills) {
      const d = await index.getPayload(r.id);
      expect(d!.source!.spilledTo).toMatch(/\/long_responses\/\d{8}T\d{9}Z_(Read|Bash)_[0-9a-f]{8}_0\.(txt|json)$/);
    }
    const pass = rows.find((r) => r.action === 'pass')!;
    expect((await index.getPayload(pass.id))!.source!.spilledTo).toBeUndefined();
    index.close();
  });
});
