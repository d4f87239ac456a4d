import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { assetNames, groupStems, parseDuration, stemTime } from '../../src/pipeline/prune.js';
import { carriedSidecar, journalFloor, journalKey, journalTime, parseJournalEntry, parseJournalKey } from '../../src/pipeline/store/s3/journal.js';

describe('journal keys and retention rules (no gateway)', () => {
  it('journal keys sort by time, parse back, and the floor sorts before every key at or after its time', () => {
    const loc = { bucket: 'b-1', prefix: 'team/agents' };
    const t = Date.UTC(2026, 11, 1, 20, 9, 8, 123);
    const k = journalKey(loc, t, 'claude-code_abc', '20261201T200908123Z_fetch_0000abcd_0');
    expect(k).toBe('team/agents/.journal/20261201T200908123Z/claude-code_abc/20261201T200908123Z_fetch_0000abcd_0');
    expect(parseJournalKey('team/agents', k)).toEqual({ timeMs: t, session: 'claude-code_abc', stem: '20261201T200908123Z_fetch_0000abcd_0' });
    expect(journalFloor(loc, t) < k).toBe(true);
    expect(journalFloor(loc, t + 1) > k).toBe(true);
    const times = [t + 86_400_000, t, t + 1, t - 120_000].map(journalTime);
    expect([...times].sort()).toEqual([t - 120_000, t, t + 1, t + 86_400_000].map(journalTime));
    expect(parseJournalKey('team/agents', 'team/agents/.journal/x/s/stem')).toBeNull();
    expect(parseJournalKey('team/agents', 'team/agents/.journal/20261201T200908123Z/../stem')).toBeNull();
  });

  it('a carried sidecar is used only when it is the object its entry lists (size and MD5)', () => {
    const sidecar = JSON.stringify({ id: 's' });
    const md5 = crypto.createHash('md5').update(sidecar).digest('hex');
    const entry = parseJournalEntry(Buffer.from(JSON.stringify({ v: 1, session: 'x', stem: 's', at: '', files: { 's.meta.json': { size: sidecar.length, etag: md5 } }, sidecar })))!;
    expect(carriedSidecar(entry, 's.meta.json')?.toString()).toBe(sidecar);
    expect(carriedSidecar({ ...entry, sidecar: sidecar + ' ' }, 's.meta.json')).toBeUndefined();
    expect(parseJournalEntry(Buffer.from('{"v":1,"session":"x","stem":"s","files":{"../x":{"size":1,"etag":"e"}}}'))).toBeNull();
  });

  it('durations, stems dated by their UTC time, orphans grouped, asset names from sidecars', () => {
    expect(parseDuration('30d')).toBe(30 * 86_400_000);
    expect(parseDuration('90m')).toBe(90 * 60_000);
    expect(parseDuration('2w')).toBe(14 * 86_400_000);
    for (const bad of ['', '30', 'd', '-1d', '0d', '1x']) expect(parseDuration(bad), bad).toBeNull();
    const g = groupStems([
      { name: '20260101T000000000Z_t_0000abcd_0.txt', mtimeMs: 5, size: 10 },
      { name: '20260101T000000000Z_t_0000abcd_0.meta.json', mtimeMs: 6, size: 2 },
      { name: '20260102T000000000Z_t_0000abcd_0.json', mtimeMs: 7, size: 3 },
      { name: '.tmp-x', mtimeMs: 1, size: 1 },
    ]);
    expect([...g.keys()]).toEqual(['20260101T000000000Z_t_0000abcd_0', '20260102T000000000Z_t_0000abcd_0']);
    expect(g.get('20260102T000000000Z_t_0000abcd_0')!.sidecar).toBeUndefined();
    expect(stemTime(g.get('20260101T000000000Z_t_0000abcd_0')!)).toBe(Date.UTC(2026, 0, 1));
    expect(assetNames(JSON.stringify({ assets: [{ relPath: 'long_responses/assets/ab.png' }] }))).toEqual(['ab.png']);
    expect(assetNames('not json')).toEqual([]);
  });
});
