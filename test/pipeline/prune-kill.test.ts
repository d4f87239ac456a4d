/**
 * `spillway prune --session DIR` SIGKILLed at random points of its deletes: whatever the point,
 * no sidecar is left without its payload and no remaining sidecar without its assets, and a
 * re-run completes. Also: the sync queue forgets the spills prune removed.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { journalTime } from '../../src/pipeline/store/s3/journal.js';
import { listPending, queuePending } from '../../src/pipeline/store/s3/sync.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts')];
const OLD_SPILLS = 4_000;
const ROUNDS = 4;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-prune-kill-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('a local prune killed midway', () => {
  it('never leaves a sidecar without its payload or its assets, whatever the kill point; a re-run finishes', async () => {
    const session = path.join(tmp, 'sess');
    const lr = path.join(session, 'long_responses');
    fs.mkdirSync(path.join(lr, 'assets'), { recursive: true });
    const old = Date.now() - 40 * 86_400_000;
    const young = Date.now() - 86_400_000;
    const past = new Date(old);
    const stems: string[] = [];
    // Every 10th spill shares an asset with the next one: an asset may go only when neither names it.
    for (let i = 0; i < OLD_SPILLS + 50; i++) {
      const stem = `${journalTime((i < OLD_SPILLS ? old : young) + i * 1000)}_tool_${crypto.randomBytes(4).toString('hex')}_0`;
      const asset = `a${Math.floor(i / 2)}.png`;
      fs.writeFileSync(path.join(lr, `${stem}.txt`), `payload ${i}`);
      fs.writeFileSync(path.join(lr, `${stem}.meta.json`), JSON.stringify({ id: stem, payloadFile: `${stem}.txt`, assets: i % 10 < 2 ? [{ relPath: `long_responses/assets/${asset}` }] : [] }));
      if (i % 10 < 2 && !fs.existsSync(path.join(lr, 'assets', asset))) {
        fs.writeFileSync(path.join(lr, 'assets', asset), `asset ${asset}`);
        fs.utimesSync(path.join(lr, 'assets', asset), past, past);
      }
      stems.push(stem);
    }
    const db = path.join(tmp, 'none.sqlite');
    const args = [...CLI, 'prune', '--older-than', '30d', '--session', session, '--db', db];

    const check = (round: string) => {
      const names = new Set(fs.readdirSync(lr));
      const assets = new Set(fs.readdirSync(path.join(lr, 'assets')));
      for (const n of names) {
        if (!n.endsWith('.meta.json')) continue;
        const stem = n.slice(0, -'.meta.json'.length);
        expect(names.has(`${stem}.txt`), `${round}: dangling sidecar ${n}`).toBe(true);
        const m = JSON.parse(fs.readFileSync(path.join(lr, n), 'utf8')) as { assets: Array<{ relPath: string }> };
        for (const a of m.assets) expect(assets.has(path.basename(a.relPath)), `${round}: ${n} lost its asset ${a.relPath}`).toBe(true);
      }
      return stems.slice(0, OLD_SPILLS).filter((s) => names.has(`${s}.txt`)).length;
    };

    let midway = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const before = check(`before round ${round}`);
      if (before === 0) break;
      const child = spawn(process.execPath, args, { cwd: REPO, stdio: 'ignore' });
      const exited = new Promise((r) => child.once('exit', r));
      // Wait for the deletes to begin (some old sidecar gone), then kill after a random number of them.
      const sample = stems.slice(0, OLD_SPILLS).filter((s) => fs.existsSync(path.join(lr, `${s}.meta.json`)));
      const watch = sample.filter((_, i) => i % Math.max(1, Math.floor(sample.length / 200)) === 0);
      const goal = 1 + crypto.randomInt(Math.max(1, Math.floor(watch.length / 2)));
      while (child.exitCode === null && watch.filter((s) => !fs.existsSync(path.join(lr, `${s}.meta.json`))).length < goal) {
        await new Promise((r) => setTimeout(r, 1));
      }
      child.kill('SIGKILL');
      await exited;
      const after = check(`after kill ${round}`);
      if (after > 0 && after < before) midway++;
    }
    // At least one kill landed between the first and the last delete.
    expect(midway).toBeGreaterThan(0);
    const done = spawnSync(process.execPath, [...args, '--json'], { cwd: REPO, encoding: 'utf8', timeout: 120_000 });
    expect(done.status, done.stderr).toBe(0);
    expect(check('after the re-run')).toBe(0);
    const names = fs.readdirSync(lr).filter((n) => n !== 'assets');
    expect(names.length).toBe(2 * 50); // the young spills, payload and sidecar each
    // Assets the young spills name stay; the others went.
    const kept = new Set(fs.readdirSync(path.join(lr, 'assets')));
    for (const s of stems.slice(OLD_SPILLS)) {
      const m = JSON.parse(fs.readFileSync(path.join(lr, `${s}.meta.json`), 'utf8')) as { assets: Array<{ relPath: string }> };
      for (const a of m.assets) expect(kept.has(path.basename(a.relPath))).toBe(true);
    }
    expect(kept.size).toBeLessThanOrEqual(5);
  }, 300_000);

  it('drops the sync-queue records of the spills it removed, and of spills queued for the pruned bucket past the cutoff', async () => {
    const home = path.join(tmp, 'home');
    const env = { ...process.env, SPILLWAY_HOME: home };
    const session = path.join(tmp, 'queued');
    const lr = path.join(session, 'long_responses');
    fs.mkdirSync(lr, { recursive: true });
    const stemAt = (t: number) => `${journalTime(t)}_tool_${crypto.randomBytes(4).toString('hex')}_0`;
    const oldStem = stemAt(Date.now() - 40 * 86_400_000);
    const youngStem = stemAt(Date.now() - 60_000);
    for (const s of [oldStem, youngStem]) {
      fs.writeFileSync(path.join(lr, `${s}.txt`), 'payload');
      fs.writeFileSync(path.join(lr, `${s}.meta.json`), JSON.stringify({ id: s, payloadFile: `${s}.txt`, assets: [] }));
    }
    const elsewhere = path.join(tmp, 'elsewhere');
    const oldElsewhere = stemAt(Date.now() - 50 * 86_400_000);
    const record = (sess: string, stem: string, store: string) => ({ v: 1 as const, store, session: sess, stem, remoteSession: path.basename(sess), reason: 'down', at: new Date().toISOString() });
    await queuePending(record(session, oldStem, 's3://team-spills/p'), env);
    await queuePending(record(session, youngStem, 's3://team-spills/p'), env);
    await queuePending(record(elsewhere, oldElsewhere, 's3://team-spills/other'), env);
    const r = spawnSync(process.execPath, [...CLI, 'prune', '--older-than', '30d', '--session', session, '--db', path.join(tmp, 'none.sqlite')], { cwd: REPO, env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr, r.stdout).toMatch(/dropped 1 sync-queue record/);
    const left = (await listPending(env)).map((x) => x.record!.stem).sort();
    expect(left).toEqual([oldElsewhere, youngStem].sort());
  });
});
