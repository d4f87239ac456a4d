import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture, tmpSession } from './helpers.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
function cli(args: string[], input?: string | Buffer) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts'), ...args], {
    cwd: REPO,
    input,
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr.toString() };
}

describe('spillway guard / restore', () => {
  it('prints nothing and exits 0 when the result passes; --json says pass', () => {
    const s = tmpSession();
    const r = cli(['guard', '--session', s], 'small result');
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toBe('');
    const j = cli(['guard', '-', '--session', s, '--json'], 'small result');
    expect(JSON.parse(j.stdout.toString())).toMatchObject({ action: 'pass', estimate: { strategy: 'calibrated' }, payloadPath: null, assets: [] });
  });

  it('spills from a file with --json, and restore gives the bytes back (stdout and -o)', () => {
    const s = tmpSession();
    const png = fixture('sample.png');
    const doc = JSON.stringify({ content: [{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }, { type: 'text', text: 'word '.repeat(20_000) }] });
    const file = path.join(s, 'result.json');
    fs.writeFileSync(file, doc);
    const r = cli(['guard', file, '--session', s, '--tool', 'browser_shot', '--input', '{"url":"https://x"}', '--intent', 'what is shown', '--limit', '3000', '--json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout.toString());
    expect(out.action).toBe('spill');
    expect(out.estimate.tokens).toBeGreaterThan(3000);
    expect(out.payloadPath).toMatch(/long_responses\/\d{8}T\d{9}Z_browser_shot_[0-9a-f]{8}_0\.linked\.json$/);
    expect(out.linkedPath).toBe(out.payloadPath);
    expect(out.assets).toEqual([{ path: expect.stringMatching(/assets\/[0-9a-f]{32}\.png$/), mimeType: 'image/png', bytes: png.length, sha256: expect.any(String) }]);
    expect(out.message).toContain('spillway restore');
    const back = cli(['restore', out.payloadPath]);
    expect(back.code).toBe(0);
    expect(back.stdout.toString()).toBe(doc);
    const dest = path.join(s, 'restored.json');
    expect(cli(['restore', out.payloadPath, '-o', dest]).code).toBe(0);
    expect(fs.readFileSync(dest, 'utf8')).toBe(doc);
  });

  it('plain output is the message; binary stdin round-trips through restore', () => {
    const s = tmpSession();
    const pdf = fixture('sample.pdf');
    const r = cli(['guard', '--session', s, '--limit', '500'], pdf);
    expect(r.code).toBe(0);
    expect(r.stdout.toString()).toMatch(/^\[spillway\] .*application\/pdf/s);
    const payload = /Absolute path: (.+)$/m.exec(r.stdout.toString())![1]!;
    expect(cli(['restore', payload]).stdout.equals(pdf)).toBe(true);
  });

  it('bad usage exits 2 with a clear error', () => {
    const s = tmpSession();
    const bad = cli(['guard', '--session', s, '--input', '{not json'], 'x');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--input must be JSON/);
    expect(cli(['guard', '--session', s, '--limit', 'lots'], 'x').code).toBe(2);
    expect(cli(['guard', '--session', s, '--strategy', 'magic'], 'x').code).toBe(2);
    expect(cli(['guard'], 'x').code).toBe(2); // --session is required
    expect(cli(['guard', path.join(s, 'missing.txt'), '--session', s]).code).toBe(2);
    // the verbs share one number parser: a bad number is a usage error everywhere, named in the message
    for (const verb of [['mcp', '--limit', 'lots', '--', 'true'], ['hook', 'claude-code', '--context-window', '-5'], ['summarize', '-', '--timeout', '0']]) {
      const r = cli(verb, '');
      expect(r.code, verb.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/must be a positive whole number/);
    }
    const bogus = cli(['guard', '--session', s, '--summarizer', 'bogus', '--limit', '5'], 'word '.repeat(100));
    expect(bogus.code).not.toBe(0);
    expect(bogus.stderr).toMatch(/unknown summarizer "bogus"/);
  });

  it('restore of something that is not a spilled payload fails with a message', () => {
    const plain = path.join(tmpSession(), 'notes.txt');
    fs.writeFileSync(plain, 'just a file\n');
    const r = cli(['restore', plain]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not a spilled payload/);
  });
});
