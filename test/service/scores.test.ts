/**
 * `scoreSummaries`: the scores without a judge of a payload's summary runs, through the service,
 * with the read-backs the index linked from a Claude Code transcript (Read with an offset, grep in
 * Bash). The runs are written into the spill's sidecar with known text, so every figure is counted by hand.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendSummaryRun, estimateTokens, handleLargeResponse, metaPathFor } from '../../src/pipeline/index.js';
import type { SummaryRun } from '../../src/service/contract.js';
import { readBackEvidence } from '../../src/service/read-back-evidence.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';
import { writeClaudeSession, type ToolCall } from '../helpers/claude-session.js';

const LOG = [
  'start build 7f3a9c2', //                              1
  'step compile ok', //                                  2
  'step test ok', //                                     3
  'ERROR pool.ts:88 timeout after 30,000 ms', //         4
  'step lint ok',
  'step docs ok',
  'step pack ok',
  'ERROR exit code 137 in the worker', //               8
  ...Array.from({ length: 200 }, () => `pad ${'x'.repeat(200)}`),
].join('\n');

let tmp: string;
let svc: InspectorService | undefined;
afterAll(async () => {
  await svc?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

function run(id: string, summary: string, extra: Partial<SummaryRun> = {}): SummaryRun {
  return { id, createdAt: '2026-12-01T11:00:00.000Z', status: 'ok', summary, provider: 'structural', model: 'structural', inputTokens: 1000, outputTokens: 20, ms: 42, ...extra };
}

describe('scoreSummaries', () => {
  it('scores every run of a spill against what the agent read back of it', async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-scores-'));
    const spills = path.join(tmp, 'spills');
    const res = await handleLargeResponse({
      text: LOG,
      sessionPath: path.join(spills, 'hook'),
      context: { toolName: 'Bash', toolInput: { command: 'make' }, limitTokens: 100, call: { client: 'claude-code' } },
      now: () => new Date('2026-12-01T10:00:00.000Z'),
    });
    const spilled = res.payloadPath!;
    const meta = metaPathFor(spilled);
    await appendSummaryRun(meta, run('run_a', 'Build 7f3a9c2: timeout in pool.ts:88 after 30000 ms; a worker died with exit code 137.', { costUsd: 0.0004 }));
    await appendSummaryRun(meta, run('run_b', 'Build finished.'));
    await appendSummaryRun(meta, run('run_c', 'Timeout at pool.ts:88 after 45,000 ms.'));
    await appendSummaryRun(meta, run('run_d', '', { status: 'error', error: 'boom' }));

    // A Claude Code session that reads the spill back: lines 3-4 by Read, then `grep ERROR` (lines 4 and 8).
    const sid = '11111111-2222-4333-8444-555555555555';
    const calls: ToolCall[] = [
      ['toolu_read', 'Read', { file_path: spilled, offset: 3, limit: 2 }, 'lines'],
      ['toolu_grep', 'Bash', { command: `grep -n ERROR ${spilled}` }, '4:ERROR\n8:ERROR'],
    ];
    writeClaudeSession(tmp, sid, 'build it', calls);

    svc = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'app'), roots: [path.join(tmp, 'projects'), spills], transport: 'http', scanOnStart: false });
    await svc.ready;
    await svc.reindex({});
    const row = (await svc.listPayloads({})).rows.find((r) => r.action === 'spill' && r.tool === 'Bash')!;
    const detail = await svc.getPayload({ id: row.id });
    expect(detail.readBacks?.map((r) => r.part)).toEqual([
      { kind: 'lines', start: 3, end: 4 },
      { kind: 'grep', pattern: 'ERROR', regex: 'basic', ignoreCase: false, matched: [4, 8], matchCount: 2 },
    ]);

    const res2 = await svc.scoreSummaries({ payloadId: row.id });
    expect(res2.readBacks).toBe(2);
    const by = new Map(res2.runs.map((r) => [r.runId, r]));

    // run_a: line 3 (no anchor, not quoted) is not held; line 4 (pool.ts, 88, 30000) and line 8 (exit 137) are.
    const a = by.get('run_a')!.scores!;
    expect(a.readBackRecall).toMatchObject({ lines: 3, held: 2 });
    expect(a.readBackRecall!.perReadBack.map((p) => [p.label, p.score])).toEqual([
      ['lines 3–4', 0.5],
      ['grep ERROR', 1],
    ]);
    // Whole payload (no focus): 7f3a9c2, pool.ts, 88, 30000, exit 137: all five held; nothing invented.
    expect(a.anchorRecall).toMatchObject({ scope: 'whole', anchors: 5, held: 5, score: 1 });
    expect(a.inventedAnchors).toMatchObject({ count: 0, summaryAnchors: 5 });
    // Compression divides by the payload's one figure, with its profile; cost and latency are the run's.
    const summaryTokens = estimateTokens('Build 7f3a9c2: timeout in pool.ts:88 after 30000 ms; a worker died with exit code 137.', { profile: detail.figure.profile, strategy: 'calibrated' }).tokens;
    expect(a.compression).toMatchObject({ payloadTokens: detail.figure.tokens, profile: detail.figure.profile, payloadCount: 'given', summaryTokens, ratio: summaryTokens / detail.figure.tokens });
    expect(a.cost).toEqual({ usd: 0.0004, inputTokens: 1000, outputTokens: 20, latencyMs: 42 });

    // run_b dropped every line the agent needed; run_c invented 45,000.
    expect(by.get('run_b')!.scores!.readBackRecall).toMatchObject({ score: 0, held: 0 });
    expect(by.get('run_c')!.scores!.inventedAnchors.invented.map((x) => x.text)).toEqual(['45,000']);
    // A failed run has no summary to score, and says so.
    expect(by.get('run_d')).toEqual({ runId: 'run_d', note: 'the run ended error: no summary to score' });

    // One focus for every run: anchor recall over the lines that hold it.
    const focused = await svc.scoreSummaries({ payloadId: row.id, focus: 'timeout' });
    expect(focused.runs.find((r) => r.runId === 'run_b')!.scores!.anchorRecall).toMatchObject({ scope: 'focus', lines: 1, anchors: 3, held: 0 });
  });
});

describe('readBackEvidence: the lines each read-back read', () => {
  const text = ['alpha', 'beta', 'gamma', 'délta', 'eps'].join('\n');
  const rb = (part: never) => ({ readerId: 'r', sessionId: 's', tool: 't', at: '', via: 'read' as const, path: 'p', spillId: 'x', tokens: 1, part });
  it('ranges, tails, grep matches, byte and char windows; whole reads and queries are unscored', () => {
    const ev = readBackEvidence(
      [
        rb({ kind: 'lines', start: 2, end: 3 } as never),
        rb({ kind: 'lines', start: 4 } as never),
        rb({ kind: 'tail', count: 2 } as never),
        rb({ kind: 'grep', pattern: 'a', regex: 'fixed', ignoreCase: false, matched: [1, 9] } as never),
        rb({ kind: 'grep', pattern: 'a', regex: 'fixed', ignoreCase: false } as never),
        // chars 6-11 are "beta\ng": lines 2 and 3. Bytes 18-20 are in "délta" (é is two bytes): line 4.
        rb({ kind: 'chars', start: 6, end: 12 } as never),
        rb({ kind: 'bytes', start: 18, end: 20 } as never),
        rb({ kind: 'whole' } as never),
        rb({ kind: 'json', path: '$.a' } as never),
      ],
      text,
    );
    expect(ev.map((e) => [e.label, e.lines?.map((l) => l.n) ?? null])).toEqual([
      ['lines 2–3', [2, 3]],
      ['lines 4–end', [4, 5]],
      ['the last 2 lines', [4, 5]],
      ['grep a', [1]],
      ['grep a', null],
      ['chars 6–12', [2, 3]],
      ['bytes 18–20', [4]],
      ['the whole file', null],
      ['json $.a', null],
    ]);
    expect(readBackEvidence(undefined, text)).toEqual([]);
  });
});
