/**
 * The guard's last resort (an internal error) saves the raw result with a sidecar, so the index lists
 * it, with the error, instead of calling it an unfinished spill, and restore checks its bytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { guardLargeResult, restorePayload } from '../../src/pipeline/index.js';
import { tmpDir, tmpIndex } from './helpers.js';

describe('a result saved by the guard after an internal error', () => {
  it('has a sidecar: restore checks it, the index lists it with the error, not as incomplete', async () => {
    const session = path.join(tmpDir(), 'session');
    const text = Array.from({ length: 6000 }, (_, i) => `line ${i}: build step ${(i * 7919) % 1000} ok`).join('\n');
    // a clock that throws breaks the spill's naming, after the decision: the last resort takes over
    const r = (await guardLargeResult(text, { sessionPath: session, toolName: 'Bash', toolInput: { command: 'make' }, now: () => { throw new Error('clock broke'); } }))!;
    expect(r.errors).toContain('internal error: clock broke');
    expect(r.message).toContain('internal error (clock broke)');
    expect(r.message).toContain(r.payloadPath!);
    expect(r.metaPath).toBe(r.payloadPath!.replace(/\.txt$/, '.meta.json'));
    const meta = JSON.parse(fs.readFileSync(r.metaPath!, 'utf8')) as Record<string, unknown>;
    expect(meta).toMatchObject({ tool: 'Bash', toolInput: { command: 'make' }, action: 'spill', payloadIsOriginal: true, bytes: Buffer.byteLength(text), errors: ['internal error: clock broke'], message: r.message });
    expect((await restorePayload(r.payloadPath!)).toString('utf8')).toBe(text);
    // restore checks the sidecar's sha256: a changed byte is refused
    fs.writeFileSync(r.payloadPath!, text.replace('line 1:', 'line 9:'));
    await expect(restorePayload(r.payloadPath!)).rejects.toThrow(/sha256|checksum|changed/i);
    fs.writeFileSync(r.payloadPath!, text);

    const { index } = tmpIndex();
    index.addRoot(session);
    const scan = await index.scan();
    expect(scan.warnings.filter((w) => /incomplete/.test(w))).toEqual([]);
    const rows = index.listPayloads({}).rows;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ tool: 'Bash', action: 'spill', bytes: Buffer.byteLength(text) });
    // the index estimates the tokens itself: the sidecar's byte count is only an upper bound
    expect(rows[0]!.tokens).toBeGreaterThan(0);
    expect(rows[0]!.tokens).toBeLessThan(Buffer.byteLength(text) / 2);
    const detail = await index.getPayload(rows[0]!.id);
    expect(detail.meta?.errors).toEqual(['internal error: clock broke']);
  });
});
