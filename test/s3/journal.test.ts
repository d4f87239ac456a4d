import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { PutBucketPolicyCommand, DeleteBucketPolicyCommand } from '@aws-sdk/client-s3';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { openIndex } from '../../src/index/index.js';
import { S3SpillStore, closeBuckets, flushJournal, resetStoreHealth } from '../../src/pipeline/store/s3/index.js';
import { journalTime, writeJournal } from '../../src/pipeline/store/s3/journal.js';
import { listPending, queuePending } from '../../src/pipeline/store/s3/sync.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';
import { FILESYSTEM, RawPeer, makeLog } from '../integrations/helpers.js';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const CLI = ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src/cli/main.ts')];
const SWITCH = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

s3Suite('the journal, retention and a quiet SDK on a real gateway', () => {
  const f = useGateway('s3journal');
  const keysUnder = async (prefix: string) => {
    const out: string[] = [];
    for await (const page of f.s3.list(prefix)) out.push(...page.map((o) => o.key));
    return out;
  };
  const spill = async (store: string, session: string, text: string, clock?: () => number) => {
    const r = await guardLargeResult(text, { sessionPath: path.join(f.tmp, 'local', session), toolName: 'jt', store: new S3SpillStore(store, session, clock ? { clock } : {}) });
    expect(r?.payloadPath, r?.message).toMatch(/^s3:\/\//);
    await flushJournal(); // the journal write runs after the spill returns
    return r!;
  };
  const big = (tag: string) => `${tag} ` + crypto.randomBytes(20_000).toString('hex');

  it('a spill writes a journal entry after its sidecar; a poll notices it from the journal alone', async () => {
    const store = `s3://${f.gw.bucket}/j1`;
    await spill(store, 'sess-a', big('first'));
    const journal = await keysUnder('j1/.journal/');
    expect(journal).toHaveLength(1);
    expect(journal[0]).toMatch(/^j1\/\.journal\/\d{8}T\d{9}Z\/sess-a\/\d{8}T\d{9}Z_jt_[0-9a-f]{8}_\d+$/);
    const body = JSON.parse((await f.s3.get(journal[0]!))!.toString('utf8'));
    expect(Object.keys(body.files).some((n: string) => n.endsWith('.meta.json'))).toBe(true);
    expect(typeof body.sidecar).toBe('string');

    const index = openIndex({ dbPath: path.join(f.tmp, 'j1.sqlite') });
    try {
      const root = index.addRoot(store);
      expect((await index.scan({ rootId: root.id })).payloads).toBe(1);
      await spill(store, 'sess-b', big('second'));
      const polled = await index.scan({ rootId: root.id });
      expect(polled.added).toBe(1);
      // Only the new session was looked at: a full listing would have counted sess-a's spill unchanged.
      expect(polled.unchanged).toBe(0);
      expect(index.listPayloads({ query: 'second' }).rows).toHaveLength(1);
    } finally {
      await index.close();
    }
    // A restart keeps the cursor: the next poll reads only the journal's overlap, and finds nothing to add.
    const again = openIndex({ dbPath: path.join(f.tmp, 'j1.sqlite') });
    try {
      const root = again.listRoots()[0]!;
      const r = await again.scan({ rootId: root.id });
      // Only the journal's overlap window is read again (two entries here): nothing added or lost.
      expect(r.added + r.removed + r.changed).toBe(0);
      expect(r.unchanged).toBeLessThanOrEqual(2);
      expect(r.payloads).toBe(2);
      // Its payloads can still be read (the session is listed on demand).
      const row = again.listPayloads({ query: 'first' }).rows[0]!;
      const c = await again.payloadContent(row.id);
      expect(c).toMatchObject({ type: 'file' });
    } finally {
      await again.close();
    }
  });

  it('a spill whose journal write fails is still found by the reconciling listing', async () => {
    const store = `s3://${f.gw.bucket}/j2`;
    const index = openIndex({ dbPath: path.join(f.tmp, 'j2.sqlite') });
    try {
      await spill(store, 'before', big('before'));
      const root = index.addRoot(store);
      expect((await index.scan({ rootId: root.id })).payloads).toBe(1);
      // The gateway refuses every PUT under the journal: a real failure of the journal write.
      await f.s3.client.send(
        new PutBucketPolicyCommand({
          Bucket: f.gw.bucket,
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [{ Effect: 'Deny', Principal: '*', Action: 's3:PutObject', Resource: `arn:aws:s3:::${f.gw.bucket}/j2/.journal/*` }],
          }),
        }),
      );
      try {
        const r = await spill(store, 'unjournaled', big('unjournaled'));
        expect(r.message).not.toMatch(/fell back|unavailable/i); // the spill itself committed
      } finally {
        await f.s3.client.send(new DeleteBucketPolicyCommand({ Bucket: f.gw.bucket }));
      }
      expect((await keysUnder('j2/.journal/')).filter((k) => k.includes('/unjournaled/'))).toEqual([]);
      expect((await keysUnder('j2/unjournaled/long_responses/')).some((k) => k.endsWith('.meta.json'))).toBe(true);
      // Polls read the journal only: the spill is not there yet (latency, not loss)...
      const polled = await index.scan({ rootId: root.id });
      expect(polled.payloads).toBe(1);
      // ...and the reconciling listing (on demand here; hourly while polling) finds it.
      const full = await index.scan({ rootId: root.id, full: true });
      expect(full.added).toBe(1);
      expect(index.listPayloads({ query: 'unjournaled' }).rows).toHaveLength(1);
    } finally {
      await index.close();
    }
  });

  it('writers whose clocks are 2 minutes ahead and behind lose nothing between polls', async () => {
    const store = `s3://${f.gw.bucket}/j3`;
    const index = openIndex({ dbPath: path.join(f.tmp, 'j3.sqlite') });
    const clocks = { ahead: () => Date.now() + 120_000, behind: () => Date.now() - 120_000, right: () => Date.now() };
    try {
      await spill(store, 'seed', big('seed'));
      const root = index.addRoot(store);
      await index.scan({ rootId: root.id });
      let n = 1;
      for (let round = 0; round < 3; round++) {
        for (const [name, clock] of Object.entries(clocks)) {
          await spill(store, `${name}-${round}`, big(`${name} round ${round}`), clock);
          n++;
          const r = await index.scan({ rootId: root.id });
          expect(r.added, `${name} round ${round}`).toBe(1);
          expect(r.unchanged).toBe(0); // from the journal, not a listing of the bucket
          expect(r.payloads).toBe(n);
        }
      }
      // The journal's keys carry each writer's own time.
      const times = (await keysUnder('j3/.journal/')).map((k) => k.split('/')[2]!);
      const now = journalTime(Date.now());
      expect(times.some((t) => t > now)).toBe(true);
    } finally {
      await index.close();
    }
  });

  it('a first open shows the newest sessions first, in batches, before the older ones are read; progress counts over them all', async () => {
    const store = `s3://${f.gw.bucket}/j5`;
    const base = Date.now() - 40 * 60_000;
    // Session names sort against their time (the newest has the smallest name): the order must come from the journal.
    const names = Array.from({ length: 20 }, (_, i) => `s${String(99 - i)}`);
    for (const [i, name] of names.entries()) await spill(store, name, big(`spill of ${name}`), () => base + i * 60_000);
    const newestFirst = [...names].reverse();
    const shown: Array<{ names: string[]; payloads: number; fulltextStarted: boolean }> = [];
    let fulltextStarted = false;
    const progress: Array<{ done: number; total: number }> = [];
    const index = openIndex({
      dbPath: path.join(f.tmp, 'j5.sqlite'),
      onEvent: (e) => {
        if (e.event !== 'onDidIndex') return;
        const sessions = index.listSessions({ rootId: root.id });
        shown.push({ names: sessions.map((x) => x.name).sort(), payloads: sessions.reduce((a, x) => a + x.payloadCount, 0), fulltextStarted });
      },
    });
    const root = index.addRoot(store);
    try {
      const r = await index.scan({
        rootId: root.id,
        onProgress: (p) => {
          if (p.phase === 'fulltext') fulltextStarted = true;
          else progress.push({ done: p.done, total: p.total });
        },
      });
      expect(r.payloads).toBe(20);
      // The first announcement holds the 4 newest sessions and nothing older: the rest was not read yet.
      expect(shown[0]).toEqual({ names: newestFirst.slice(0, 4).sort(), payloads: 4, fulltextStarted: false });
      // Then twice as many each time, always the newest ones, before the whole bucket is listed.
      expect(shown[1]).toEqual({ names: newestFirst.slice(0, 12).sort(), payloads: 12, fulltextStarted: false });
      expect(shown[2]).toEqual({ names: newestFirst.slice(0, 20).sort(), payloads: 20, fulltextStarted: false });
      // Progress of the batches counts on from the one before: never back to zero within them.
      const batches = progress.slice(0, progress.findIndex((p) => p.total === 20 && p.done === 20) + 1);
      expect(batches.length).toBeGreaterThan(2);
      for (let i = 1; i < batches.length; i++) expect(batches[i]!.done).toBeGreaterThanOrEqual(batches[i - 1]!.done);
      // The full listing came after, and kept its cursor: the next scan reads only the journal.
      const again = await index.scan({ rootId: root.id });
      expect(again.added + again.removed).toBe(0);
    } finally {
      await index.close();
    }
  });

  it('prune never leaves a sidecar without its payload, even when SIGKILLed midway; the next prune finishes', async () => {
    const prefix = 'j4';
    const old = Date.now() - 40 * 86_400_000;
    const put = async (k: string, body: string) => void (await f.s3.putIfAbsent(k, body));
    const stems: Array<{ sidecar: string; payload: string }> = [];
    const jobs: Array<() => Promise<void>> = [];
    for (let i = 0; i < 1_100; i++) {
      const t = journalTime(old + i * 1000);
      const stem = `${t}_tool_${crypto.randomBytes(4).toString('hex')}_0`;
      const dir = `${prefix}/s${String(i % 24).padStart(2, '0')}/long_responses`;
      const s = { sidecar: `${dir}/${stem}.meta.json`, payload: `${dir}/${stem}.txt` };
      stems.push(s);
      jobs.push(async () => {
        if (i % 10 === 0) await put(`${dir}/.claims/${stem}`, '{}');
        await put(s.payload, `payload ${i}`);
        await put(s.sidecar, JSON.stringify({ id: stem, assets: [] }));
        if (i % 10 === 0) await put(`${prefix}/.journal/${t}/s${String(i % 24).padStart(2, '0')}/${stem}`, '{}');
      });
    }
    let next = 0;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }));
    const young = await spill(`s3://${f.gw.bucket}/${prefix}`, 's00', big('young'));

    const first = [...stems].sort((a, b) => (a.sidecar < b.sidecar ? -1 : 1))[0]!;
    const child = spawn(process.execPath, [...CLI, 'prune', '--older-than', '30d', '--store', `s3://${f.gw.bucket}/${prefix}`, '--db', path.join(f.tmp, 'none.sqlite')], {
      cwd: REPO,
      env: { ...process.env },
      stdio: 'ignore',
    });
    const exited = new Promise((r) => child.once('exit', r));
    // Killed as soon as the first sidecars are gone: in the middle of the deletes.
    for (;;) {
      if (!(await f.s3.head(first.sidecar))) break;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 2));
    }
    child.kill('SIGKILL');
    await exited;
    const left = new Set(await keysUnder(`${prefix}/`));
    const sidecars = [...left].filter((k) => k.endsWith('.meta.json'));
    for (const s of sidecars) {
      const stem = s.slice(0, -'.meta.json'.length);
      expect([...left].some((k) => k.startsWith(stem + '.') && k !== s), `dangling sidecar ${s}`).toBe(true);
    }
    // The kill did land midway: some old sidecars are gone, and some old payloads are left.
    const oldLeft = stems.filter((s) => left.has(s.payload)).length;
    expect(stems.filter((s) => left.has(s.sidecar)).length).toBeLessThan(stems.length);
    expect(oldLeft).toBeGreaterThan(0);

    const done = spawnSync(process.execPath, [...CLI, 'prune', '--older-than', '30d', '--store', `s3://${f.gw.bucket}/${prefix}`, '--json', '--db', path.join(f.tmp, 'none.sqlite')], {
      cwd: REPO,
      env: { ...process.env },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(done.status, done.stderr).toBe(0);
    const report = JSON.parse(done.stdout.trim().split('\n').pop()!);
    expect(report.spills).toBe(oldLeft);
    const after = await keysUnder(`${prefix}/`);
    expect(after.filter((k) => stems.some((s) => k === s.payload || k === s.sidecar))).toEqual([]);
    expect(after.filter((k) => k.includes('/.journal/') && !k.includes('/s00/') && !k.includes('/.pruned/'))).toEqual([]);
    // What is left in the journal of the old spills is the prunes' tombstones, one per group of pruned spills.
    expect(after.filter((k) => k.includes('/.journal/') && k.includes('/.pruned/')).length).toBeGreaterThan(0);
    expect(after).toContain(young.metaPath!.replace(`s3://${f.gw.bucket}/`, ''));
    expect(after).toContain(young.payloadPath!.replace(`s3://${f.gw.bucket}/`, ''));
  }, 240_000);

  it("prune writes tombstones: another reader's index drops the pruned spills at its next poll, without a full listing; the sync queue forgets them", async () => {
    const prefix = 'j6';
    const store = `s3://${f.gw.bucket}/${prefix}`;
    const young = await spill(store, 'young-a', big('young spill'));
    const template = JSON.parse((await f.s3.get(young.metaPath!.replace(`s3://${f.gw.bucket}/`, '')))!.toString('utf8'));
    // Old spills in the real layout (the guard dates a stem by its own clock): payload, sidecar, journal entry.
    const old = Date.now() - 40 * 86_400_000;
    for (const [i, session] of ['old-a', 'old-a', 'old-b'].entries()) {
      const stem = `${journalTime(old + i * 1000)}_jt_0000abcd_0`;
      const lr = `${prefix}/${session}/long_responses`;
      const payload = `old payload ${i} ` + crypto.randomBytes(200).toString('hex');
      const meta = JSON.stringify({ ...template, id: stem, payloadFile: `${stem}.txt`, bytes: Buffer.byteLength(payload), chars: payload.length, createdAt: new Date(old).toISOString() });
      const p = await f.s3.putIfAbsent(`${lr}/${stem}.txt`, payload);
      const m = await f.s3.putIfAbsent(`${lr}/${stem}.meta.json`, meta);
      const files = { [`${stem}.txt`]: { size: Buffer.byteLength(payload), etag: p.etag }, [`${stem}.meta.json`]: { size: Buffer.byteLength(meta), etag: m.etag } };
      expect(await writeJournal(f.s3, { bucket: f.gw.bucket, prefix }, { session, stem, files, sidecar: meta }, { now: old + i * 1000 })).toBe(true);
    }
    const queuedOld = `${journalTime(old)}_jt_0000beef_0`;
    await queuePending({ v: 1, store, session: path.join(f.tmp, 'fell-back'), stem: queuedOld, remoteSession: 'fell-back', reason: 'down', at: new Date(old).toISOString() }, process.env);

    const index = openIndex({ dbPath: path.join(f.tmp, 'j6.sqlite') });
    try {
      const root = index.addRoot(store);
      expect((await index.scan({ rootId: root.id })).payloads).toBe(4);
      expect((await index.scan({ rootId: root.id })).added).toBe(0); // a poll from here on

      // Pruned by someone else: this index is not the one the prune updates.
      const r = spawnSync(process.execPath, [...CLI, 'prune', '--older-than', '30d', '--store', store, '--json', '--db', path.join(f.tmp, 'other.sqlite')], { cwd: REPO, env: { ...process.env }, encoding: 'utf8', timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toMatchObject({ spills: 3 });
      const graves = (await keysUnder(`${prefix}/.journal/`)).filter((k) => k.includes('/.pruned/'));
      expect(graves).toHaveLength(1);

      const polled = await index.scan({ rootId: root.id });
      expect(polled.removed).toBe(3);
      expect(polled.unchanged).toBe(0); // no listing of the bucket: the young spill was not even looked at
      expect(polled.payloads).toBe(1);
      expect(index.listSessions({ rootId: root.id }).map((x) => x.name)).toEqual(['young-a']);
      // The next poll reads the tombstone's key again (the overlap window) but drops nothing twice.
      const again = await index.scan({ rootId: root.id });
      expect(again.removed + again.added).toBe(0);
    } finally {
      await index.close();
    }
    // A queued fallback for this bucket, older than the cutoff, would only put back what retention let go.
    expect((await listPending(process.env)).map((x) => x.record?.stem)).not.toContain(queuedOld);
  }, 180_000);

  it('a local prune removes old spills and their unreferenced assets, keeps young ones, and the index drops them', async () => {
    const session = path.join(f.tmp, 'local-prune', 'sess');
    const lr = path.join(session, 'long_responses');
    fs.mkdirSync(path.join(lr, 'assets'), { recursive: true });
    const old = journalTime(Date.now() - 40 * 86_400_000);
    const oldStem = `${old}_tool_0000abcd_0`;
    fs.writeFileSync(path.join(lr, `${oldStem}.txt`), 'old payload');
    fs.writeFileSync(path.join(lr, `${oldStem}.meta.json`), JSON.stringify({ id: oldStem, assets: [{ relPath: 'long_responses/assets/aa.png' }] }));
    fs.writeFileSync(path.join(lr, `${old}_orphan_0000abcd_0.txt`), 'payload left without its sidecar');
    fs.writeFileSync(path.join(lr, 'assets', 'aa.png'), 'asset of the old spill');
    const past = new Date(Date.now() - 40 * 86_400_000);
    fs.utimesSync(path.join(lr, 'assets', 'aa.png'), past, past);
    const young = await guardLargeResult(big('young local'), { sessionPath: session, toolName: 'young' });
    const db = path.join(f.tmp, 'local-prune.sqlite');
    const index = openIndex({ dbPath: db });
    const root = index.addRoot(path.dirname(session));
    await index.scan({ rootId: root.id });
    expect(index.listPayloads({}).rows.length).toBe(3);
    await index.close();

    const dry = spawnSync(process.execPath, [...CLI, 'prune', '--older-than', '30d', '--session', session, '--dry-run', '--json', '--db', db], { cwd: REPO, encoding: 'utf8' });
    expect(dry.status, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ spills: 2, orphans: 1, assets: 1, dryRun: true });
    expect(fs.existsSync(path.join(lr, `${oldStem}.meta.json`))).toBe(true);

    const r = spawnSync(process.execPath, [...CLI, 'prune', '--older-than', '30d', '--session', session, '--db', db], { cwd: REPO, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/removed 2 spill\(s\) \(1 without a sidecar\), 1 asset/);
    expect(r.stderr).toMatch(/the index dropped 2 payload/);
    expect(fs.readdirSync(lr).sort()).toEqual(['assets', path.basename(young!.metaPath!), path.basename(young!.payloadPath!)].sort());
    expect(fs.readdirSync(path.join(lr, 'assets'))).toEqual([]);
    const after = openIndex({ dbPath: db });
    try {
      expect(after.listPayloads({}).rows.map((x) => x.tool)).toEqual(['young']);
    } finally {
      await after.close();
    }
  });

  it('no SDK deprecation warning on stderr from the CLI; its own messages still show', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SPILLWAY_HOME: path.join(f.tmp, 'quiet-home') };
    delete env[SWITCH];
    // The control: without Spillway's switch, this SDK does print the notice under Node 20.
    const control = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', `import { S3Client } from '@aws-sdk/client-s3'; new S3Client({ region: 'us-east-1' });`],
      { cwd: REPO, env, encoding: 'utf8' },
    );
    if (Number(process.versions.node.split('.')[0]) < 22) expect(control.stderr).toMatch(/NodeVersionSupportWarning/);

    const store = `s3://${f.gw.bucket}/quiet`;
    const text = big('quiet spill');
    const g = spawnSync(process.execPath, [...CLI, 'guard', '--session', path.join(f.tmp, 'quiet-session'), '--store', store, '--tool', 'q'], { cwd: REPO, env, input: text, encoding: 'utf8' });
    expect(g.status, g.stderr).toBe(0);
    expect(g.stdout).toContain(store);
    expect(g.stderr).not.toMatch(/NodeVersionSupportWarning|AWS SDK/);
    const p = spawnSync(process.execPath, [...CLI, 'prune', '--older-than', '1x', '--store', store], { cwd: REPO, env, encoding: 'utf8' });
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/^spillway prune: --older-than needs a duration/); // our own message still shows
    const i = spawnSync(process.execPath, [...CLI, 'index', store, '--db', path.join(f.tmp, 'quiet.sqlite')], { cwd: REPO, env, encoding: 'utf8' });
    expect(i.status, i.stderr).toBe(0);
    expect(i.stderr).toMatch(/listing done/);
    expect(i.stderr).not.toMatch(/NodeVersionSupportWarning|AWS SDK/);
    // Children of Spillway's processes do not inherit the switch.
    expect(process.env[SWITCH] === undefined || process.env[SWITCH] === 'true').toBe(true);
    resetStoreHealth();
    await closeBuckets();
  });

  it('no SDK deprecation warning on stderr from the Claude Code hook or the MCP proxy when they spill to a bucket', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, SPILLWAY_HOME: path.join(f.tmp, 'quiet-home-2') };
    delete env[SWITCH];
    const store = `s3://${f.gw.bucket}/quiet2`;
    const warning = /NodeVersionSupportWarning|AWS SDK/;

    // The hook, as Claude Code runs it: a PostToolUse event on stdin, the answer on stdout.
    const event = {
      session_id: '7b3c1f0e-5d2a-4c8b-9e61-0a1b2c3d4e5f',
      transcript_path: path.join(f.tmp, 'none.jsonl'),
      cwd: f.tmp,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'cat big.log' },
      tool_response: { stdout: makeLog(200_000), stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
      tool_use_id: 'toolu_01QUIETQUIETQUIETQUIETQUI',
    };
    const h = spawnSync(process.execPath, [...CLI, 'hook', 'claude-code', '--store', store, '--session', path.join(f.tmp, 'quiet-hook')], { cwd: REPO, env, input: JSON.stringify(event), encoding: 'utf8' });
    expect(h.status, h.stderr).toBe(0);
    expect(h.stdout).toContain(`s3://${f.gw.bucket}/quiet2/quiet-hook/long_responses/`);
    expect(h.stderr).not.toMatch(warning);

    // The proxy in front of a real MCP server: a result over the limit is spilled to the bucket.
    const data = fs.realpathSync(fs.mkdtempSync(path.join(f.tmp, 'quiet-data-')));
    fs.writeFileSync(path.join(data, 'big.log'), makeLog(300_000));
    const proxy = new RawPeer(process.execPath, [...CLI, 'mcp', '--store', store, '--session', path.join(f.tmp, 'quiet-proxy'), '--', process.execPath, FILESYSTEM, data], env, REPO);
    try {
      await proxy.initialize();
      const r = await proxy.request('tools/call', { name: 'read_text_file', arguments: { path: path.join(data, 'big.log') } }, 5, 120_000);
      const meta = (r.msg.result as { _meta?: Record<string, { payloadPath?: string }> })._meta?.['spillway/spill'];
      expect(meta?.payloadPath).toMatch(new RegExp(`^s3://${f.gw.bucket}/quiet2/quiet-proxy/long_responses/`));
    } finally {
      await proxy.close();
    }
    expect(proxy.stderr).not.toMatch(warning);
    resetStoreHealth();
    await closeBuckets();
  }, 180_000);
});
