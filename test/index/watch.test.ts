import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { IndexEvent } from '../../src/index/index.js';
import { generateSessionsRoot, spillOne } from '../helpers/gen-sessions.js';
import { CLAUDE_PROJECTS, copyTree, tmpDir, tmpIndex, waitFor } from './helpers.js';

/** "Within a second" is the behaviour; the bound stays generous for a loaded 2-core CI box. */
const LIVE_BOUND_MS = 1_000;

const didIndex = (events: IndexEvent[]) => events.filter((e): e is Extract<IndexEvent, { event: 'onDidIndex' }> => e.event === 'onDidIndex');

/** A generated root of two sessions with `payloads` spills, on a fresh index that has scanned it once. */
async function scannedRoot(payloads: number, seed: number) {
  const dir = path.join(tmpDir(), 'sessions');
  const gen = await generateSessionsRoot(dir, { sessions: 2, payloads, seed });
  const { index, events } = tmpIndex();
  index.addRoot(dir);
  await index.scan();
  return { dir, gen, index, events };
}

describe('watching roots', () => {
  it('indexes a payload the guard writes within a second, with an onDidIndex event', async () => {
    const { gen, index, events } = await scannedRoot(10, 9);
    const stop = await index.watch();
    events.length = 0;
    const t0 = performance.now();
    await spillOne(gen.sessions[1]!, { tool: 'live_tool', input: { q: 1 }, text: 'fresh result line\n'.repeat(2_000), time: new Date() });
    const ev = await waitFor(() => didIndex(events).find((e) => e.payload.added > 0), 5_000, 'onDidIndex');
    const latency = performance.now() - t0;
    expect(latency).toBeLessThan(LIVE_BOUND_MS);
    expect(ev.payload.sessionIds).toHaveLength(1);
    const rows = index.listPayloads({ tool: 'live_tool' }).rows;
    expect(rows).toHaveLength(1);
    expect(ev.payload.sessionIds[0]).toBe(rows[0]!.sessionId);
    await stop();
  });

  it('sees deletions, new session folders and renamed folders', async () => {
    const { dir, gen, index, events } = await scannedRoot(6, 10);
    await index.watch();

    const victim = gen.payloads[0]!;
    fs.rmSync(victim.metaPath);
    fs.rmSync(victim.payloadPath);
    await waitFor(() => index.listPayloads({}).total === 5, 5_000, 'deletion to be indexed');
    expect(didIndex(events).some((e) => e.payload.removed === 1)).toBe(true);

    await spillOne(path.join(dir, 'brand-new'), { tool: 'newcomer', text: 'x y z '.repeat(3_000), time: new Date() });
    await waitFor(() => index.listSessions().some((s) => s.name === 'brand-new' && s.payloadCount === 1), 5_000, 'new session');

    fs.renameSync(gen.sessions[1]!, path.join(dir, 'moved'));
    await waitFor(
      () => {
        const names = index.listSessions().map((s) => s.name);
        return names.includes('moved') && !names.includes('session-001');
      },
      5_000,
      'rename',
    );
    expect(index.listPayloads({}).total).toBe(6);
  });

  it('re-imports a Claude Code transcript that grows', async () => {
    const projects = copyTree(path.join(CLAUDE_PROJECTS, 'sample-project'), path.join(tmpDir(), 'projects', 'sample-project'));
    const file = path.join(projects, 'fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl');
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    // Start with the first half of the session, then append the rest as Claude Code would.
    const half = Math.floor(lines.length / 2);
    fs.writeFileSync(file, lines.slice(0, half).join('\n') + '\n');
    const { index } = tmpIndex();
    index.addRoot(path.dirname(projects));
    await index.scan();
    const before = index.listPayloads({}).total;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(167);
    await index.watch();
    fs.appendFileSync(file, lines.slice(half).join('\n') + '\n');
    await waitFor(() => index.listPayloads({}).total === 167, 5_000, 'appended results');
  });

  it('watches roots added after watch() started, and stops watching removed ones', async () => {
    const { index } = tmpIndex();
    await index.watch();
    const dir = path.join(tmpDir(), 'later');
    await spillOne(path.join(dir, 'first'), { tool: 'seed', text: 'seed '.repeat(4_000), time: new Date() });
    const root = index.addRoot(dir);
    await index.scan({ rootId: root.id });
    expect(index.listPayloads({}).total).toBe(1);
    await spillOne(path.join(dir, 'first'), { tool: 'second', text: 'second '.repeat(4_000), time: new Date() });
    await waitFor(() => index.listPayloads({ tool: 'second' }).total === 1, 5_000, 'payload in a root added after watch()');
    index.removeRoot(root.id);
    expect(index.listPayloads({}).total).toBe(0);
    await spillOne(path.join(dir, 'first'), { tool: 'third', text: 'third '.repeat(4_000), time: new Date() });
    await new Promise((r) => setTimeout(r, 400));
    expect(index.listPayloads({}).total).toBe(0);
    expect(index.listRoots()).toEqual([]);
  });
});
