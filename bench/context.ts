/**
 * `npm run bench context`: the context timeline of a big session, against baselines of the same run.
 *
 * Writes a Claude Code transcript of 2,000 model calls with 5,000 tool results (SPILLWAY_BENCH_SCALE
 * scales both), modelled on the real 2.1.328 transcript in test/index/fixtures/timeline/claude-code-pct5
 * (its header lines and request shape kept; calls, usage and results generated, compacting every
 * 400 calls), then measures:
 *   - the background phase after the full text, which estimates the tool results the listing only
 *     placed (TurnTool.at) and keeps the numbers, and the first timeline once it ran (goal <= 300 ms),
 *     and before it ran (the request estimates them itself), vs reading the transcript once (read +
 *     JSON.parse of every line);
 *   - the cold timeline (a fresh index process state, no series kept, the estimates kept); goal <= 300 ms;
 *   - one replay per slider move (the series and the guard's messages kept); goal <= 30 ms; and a
 *     move to a new limit, whose messages the real guard builds offline (within its budget);
 *   - the index's listing phase with the turn reader vs with it switched off; goal <= +20%;
 *   - the ledger's share of the listing phase (issue 29: at most 10%): the CPU profile of one more
 *     listing, the samples inside ledger.ts (ledgerOf, and assetSizes reading image heads) over the
 *     samples of the listing. The ledger cannot be switched off without changing the writer, so its
 *     cost is read from where the time went; the listing's writer thread is not sampled.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { openIndex } from '../src/index/index.js';
import { openTimelines } from '../src/timeline/index.js';
import { ClaudeTurns } from '../src/index/turns-claude.js';

const SCALE = Number(process.env.SPILLWAY_BENCH_SCALE ?? '1') || 1;
const CALLS = Math.max(50, Math.round(2_000 * SCALE));
const RESULTS = Math.max(100, Math.round(5_000 * SCALE));
const COMPACT_EVERY = 400;
const REPEATS = 5;
/** Listings with the turn reader and without, alternated. */
const LISTINGS = 4;
const TEMPLATE = path.join(import.meta.dirname, '..', 'test', 'index', 'fixtures', 'timeline', 'claude-code-pct5', '-home-dev-project', 'b6c8ada3-0627-4c6a-9893-2935c9fb2b12.jsonl');
const SESSION = '0b3e1c2a-5d6f-4a7b-8c9d-0e1f2a3b4c5d';

const ms = (t0: number) => performance.now() - t0;
const fmt = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 2 : 0)} ms`);
const cpuMs = (c0: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(c0);
  return (d.user + d.system) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Text a Read or Bash would return: numbered lines of words, of about `bytes`. */
function resultText(r: () => number, bytes: number): string {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'return', 'const', 'function', 'value', 'index', 'error', 'the', 'of', '{', '}', '=>', '0x1f'];
  const lines: string[] = [];
  let n = 0;
  while (n < bytes) {
    const w = Array.from({ length: 6 + Math.floor(r() * 10) }, () => words[Math.floor(r() * words.length)]).join(' ');
    lines.push(`${lines.length + 1}\t${w}`);
    n += w.length + 6;
  }
  return lines.join('\n');
}

/** The transcript: the template's header (up to its first call), then generated calls and results. */
export function writeTranscript(file: string): { bytes: number } {
  const r = rng(2026);
  const head = fs.readFileSync(TEMPLATE, 'utf8').split('\n').filter(Boolean);
  const firstCall = head.findIndex((l) => l.includes('"type":"assistant"'));
  const out: string[] = head.slice(0, firstCall).map((l) => l.replaceAll('b6c8ada3-0627-4c6a-9893-2935c9fb2b12', SESSION));
  const base = { isSidechain: false, userType: 'external', entrypoint: 'sdk-cli', cwd: '/home/dev/project', sessionId: SESSION, version: '2.1.328', gitBranch: 'HEAD' };
  let ctx = 20_487;
  let parent = 'root';
  let tool = 0;
  const t0 = Date.parse('2026-12-01T20:43:18.000Z');
  for (let i = 0; i < CALLS; i++) {
    const at = new Date(t0 + i * 4_000).toISOString();
    if (i > 0 && i % COMPACT_EVERY === 0) {
      out.push(JSON.stringify({ ...base, parentUuid: null, type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: ctx, postTokens: 24_000 }, uuid: `c${i}`, timestamp: at }));
      out.push(JSON.stringify({ ...base, parentUuid: `c${i}`, type: 'user', isCompactSummary: true, message: { role: 'user', content: `This session is being continued from a previous conversation. Summary: ${resultText(r, 8_000)}` }, uuid: `s${i}`, timestamp: at }));
      ctx = 24_000;
    }
    // Tool calls of this call: RESULTS spread over CALLS.
    const k = Math.floor(((i + 1) * RESULTS) / CALLS) - Math.floor((i * RESULTS) / CALLS);
    const ids = Array.from({ length: k }, () => `toolu_bench${String(tool++).padStart(6, '0')}`);
    const msg = `msg_bench${i}`;
    const usage = { input_tokens: 3, cache_creation_input_tokens: 2_000, cache_read_input_tokens: ctx - 2_003, output_tokens: 40 + Math.floor(r() * 200) };
    out.push(JSON.stringify({ ...base, parentUuid: parent, type: 'assistant', uuid: `a${i}`, timestamp: at, requestId: `req_bench${i}`, message: { id: msg, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [{ type: 'text', text: 'Next.' }], stop_reason: 'tool_use', usage } }));
    for (const [j, id] of ids.entries()) {
      const name = j % 3 === 2 ? 'mcp__fs__read_text_file' : j % 2 ? 'Bash' : 'Read';
      out.push(JSON.stringify({ ...base, parentUuid: `a${i}`, type: 'assistant', uuid: `a${i}-${j}`, timestamp: at, requestId: `req_bench${i}`, message: { id: msg, type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [{ type: 'tool_use', id, name, input: name === 'Bash' ? { command: `cat f${j}` } : { file_path: `/home/dev/project/f${j}.txt` } }], stop_reason: 'tool_use', usage } }));
    }
    parent = `a${i}`;
    let added = 0;
    if (ids.length) {
      // Mostly small results, some big ones (the guard's business): 1 KB .. 60 KB.
      const content = ids.map((id) => {
        const bytes = r() < 0.15 ? 20_000 + Math.floor(r() * 40_000) : 500 + Math.floor(r() * 4_000);
        added += Math.round(bytes / 3.6);
        return { tool_use_id: id, type: 'tool_result', content: resultText(r, bytes) };
      });
      out.push(JSON.stringify({ ...base, parentUuid: parent, type: 'user', uuid: `u${i}`, timestamp: at, message: { role: 'user', content } }));
      parent = `u${i}`;
    }
    ctx += added + usage.output_tokens;
  }
  const text = out.join('\n') + '\n';
  fs.writeFileSync(file, text);
  return { bytes: Buffer.byteLength(text) };
}

/**
 * The listing phase: until scan() says it listed (ScanResult.listSeconds), full text left out. Not
 * the first progress event that says every unit is done: the unit is counted done before it is
 * read, so that event came with the first yield while reading it, after a slice and a chunk.
 * Also the CPU time of the process (its threads too) up to the listing's last progress event, less
 * sensitive to other processes on a shared machine.
 */
/**
 * The ledger's share of a listing: CPU-profile the main thread through one listing (its
 * `listSeconds`) and count the samples whose stack passes through ledger.ts.
 */
async function ledgerShare(root: string, db: string): Promise<{ share: number; ledgerMs: number; listMs: number }> {
  const index = openIndex({ dbPath: db, backgroundEstimates: false });
  index.addRoot(root);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  const r = await index.scan();
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  await index.close();
  // The listing phase as the scan counts it (ScanResult.listSeconds), from the profile's start.
  const end = profile.startTime + r.listSeconds * 1e6;
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const inLedger = new Map<number, boolean>();
  const ledgerNode = (id: number): boolean => {
    let v = inLedger.get(id);
    if (v === undefined) {
      const n = byId.get(id)!;
      const p = parent.get(id);
      v = /[\\/]index[\\/]ledger\.[jt]s$/.test(n.callFrame.url) || (p !== undefined && ledgerNode(p));
      inLedger.set(id, v);
    }
    return v;
  };
  let at = profile.startTime;
  let all = 0;
  let ledger = 0;
  profile.samples?.forEach((id, i) => {
    const dt = profile.timeDeltas?.[i] ?? 0;
    at += dt;
    if (at > end) return;
    const name = byId.get(id)!.callFrame.functionName;
    // Idle samples are not the listing's work.
    if (name === '(idle)') return;
    all += dt;
    if (ledgerNode(id)) ledger += dt;
  });
  return { share: all ? ledger / all : 0, ledgerMs: ledger / 1000, listMs: all / 1000 };
}

async function listingMs(root: string, db: string): Promise<{ wall: number; cpu: number }> {
  // The background phase after the full text is timed on its own (below): these databases keep the results only placed.
  const index = openIndex({ dbPath: db, backgroundEstimates: false });
  index.addRoot(root);
  const c0 = process.cpuUsage();
  let cpu = NaN;
  const r = await index.scan({ onProgress: (p) => void (p.phase === 'list' && (cpu = cpuMs(c0))) });
  await index.close();
  return { wall: r.listSeconds * 1000, cpu };
}

export async function run(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bench-context-'));
  try {
    const root = path.join(tmp, 'claude', '-home-dev-project');
    fs.mkdirSync(root, { recursive: true });
    const file = path.join(root, `${SESSION}.jsonl`);
    const { bytes } = writeTranscript(file);
    console.log(`session: ${CALLS} calls, ${RESULTS} tool results, ${(bytes / 1024 / 1024).toFixed(0)} MB transcript`);

    // Baseline: the transcript read once, every line parsed.
    const reads: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      let n = 0;
      for (const l of fs.readFileSync(file, 'utf8').split('\n')) if (l) n += JSON.parse(l) ? 1 : 0;
      reads.push(ms(t));
      void n;
    }
    const read = Math.min(...reads);

    // Listing phase, the turn reader on and off (alternated; the fastest of each).
    // Off: the reader asks for no line and takes none (the importer then decodes only what it needs itself).
    const proto = ClaudeTurns.prototype as unknown as { wants: (...a: unknown[]) => boolean; take: (...a: unknown[]) => void };
    const { wants, take } = proto;
    const withTurns: Array<{ wall: number; cpu: number }> = [];
    const without: Array<{ wall: number; cpu: number }> = [];
    for (let i = 0; i < LISTINGS; i++) {
      withTurns.push(await listingMs(path.dirname(root), path.join(tmp, `with-${i}.sqlite`)));
      proto.wants = () => false;
      proto.take = () => {};
      try {
        without.push(await listingMs(path.dirname(root), path.join(tmp, `without-${i}.sqlite`)));
      } finally {
        proto.wants = wants;
        proto.take = take;
      }
    }
    const ledger = await ledgerShare(path.dirname(root), path.join(tmp, 'ledger-share.sqlite'));
    const listOn = Math.min(...withTurns.map((x) => x.wall));
    const listOff = Math.min(...without.map((x) => x.wall));
    const cpuOn = Math.min(...withTurns.map((x) => x.cpu));
    const cpuOff = Math.min(...without.map((x) => x.cpu));

    // First timeline: each database a listing wrote, never asked for a timeline.
    const firsts: number[] = [];
    for (let i = 0; i < withTurns.length; i++) {
      const index = openIndex({ dbPath: path.join(tmp, `with-${i}.sqlite`) });
      const timelines = openTimelines(index);
      const t = performance.now();
      const tl = await timelines.timeline({ sessionId: index.listSessions()[0]!.id });
      firsts.push(ms(t));
      if (!tl || tl.turns.length !== CALLS) throw new Error(`timeline has ${tl?.turns.length} calls, expected ${CALLS}`);
      await index.close();
    }
    const first = Math.min(...firsts);

    // The background phase: a listing left to estimate what it placed once the full text is in, then the first timeline.
    const bgDb = path.join(tmp, 'background.sqlite');
    const bgIndex = openIndex({ dbPath: bgDb });
    const bgTimelines = openTimelines(bgIndex);
    bgIndex.addRoot(path.dirname(root));
    // A waited scan includes the background phase: it runs from the full text's last progress event to the scan's end.
    let fullTextAt = NaN;
    let fullTextCpu = process.cpuUsage();
    await bgIndex.scan({ onProgress: (p) => void (p.phase === 'fulltext' && p.done === p.total && ((fullTextAt = performance.now()), (fullTextCpu = process.cpuUsage()))) });
    await bgIndex.idle();
    const background = ms(fullTextAt);
    const backgroundCpu = cpuMs(fullTextCpu);
    let t = performance.now();
    const c1 = process.cpuUsage();
    const bgTimeline = await bgTimelines.timeline({ sessionId: bgIndex.listSessions()[0]!.id });
    const firstWarm = ms(t);
    const firstWarmCpu = cpuMs(c1);
    if (!bgTimeline || bgTimeline.turns.length !== CALLS) throw new Error('background timeline incomplete');
    await bgIndex.close();

    // Cold timeline: a fresh index over the database the listing wrote (no series kept).
    const db = path.join(tmp, 'with-0.sqlite');
    const colds: number[] = [];
    const coldCpus: number[] = [];
    const coldsGuard: number[] = [];
    let sessionId = '';
    for (let i = 0; i < REPEATS; i++) {
      const index = openIndex({ dbPath: db });
      const timelines = openTimelines(index);
      sessionId ||= index.listSessions()[0]!.id;
      let t = performance.now();
      const c0 = process.cpuUsage();
      const tl = await timelines.timeline({ sessionId });
      colds.push(ms(t));
      coldCpus.push(cpuMs(c0));
      if (!tl || tl.turns.length !== CALLS) throw new Error(`timeline has ${tl?.turns.length} calls, expected ${CALLS}`);
      await index.close();
      const again = openIndex({ dbPath: db });
      const againTimelines = openTimelines(again);
      t = performance.now();
      await againTimelines.timeline({ sessionId, limits: [8_000] });
      coldsGuard.push(ms(t));
      await again.close();
    }

    // Slider moves: the series kept; the guard's messages kept (warm) or built for a new limit.
    const index = openIndex({ dbPath: db });
    const timelines = openTimelines(index);
    await timelines.timeline({ sessionId, limits: [8_000] });
    const moves: number[] = [];
    const moveCpus: number[] = [];
    const fresh: number[] = [];
    let pendingLeft = 0;
    for (let i = 0; i < 10; i++) {
      // The messages of this limit built first (as the view's asking again ends up doing).
      const limit = 8_000 + (i % 5) * 1_000;
      let r = await timelines.timeline({ sessionId, limits: [limit], replayOnly: true }, { guardBudgetMs: 600_000 });
      const t = performance.now();
      const c0 = process.cpuUsage();
      r = await timelines.timeline({ sessionId, limits: [limit], replayOnly: true });
      moves.push(ms(t));
      moveCpus.push(cpuMs(c0));
      pendingLeft += r!.replays[2]!.pending ?? 0;
    }
    // A new limit, messages not built: one request, bounded by the guard's budget; then until none is pending.
    let settle = 0;
    let built = 0;
    const NEW = 3;
    for (let i = 0; i < NEW; i++) {
      const limit = 6_001 + i * 10;
      const runs = timelines.guardRuns();
      let t = performance.now();
      await timelines.timeline({ sessionId, limits: [limit], replayOnly: true });
      fresh.push(ms(t));
      t = performance.now();
      await timelines.timeline({ sessionId, limits: [limit], replayOnly: true }, { guardBudgetMs: 600_000 });
      settle += ms(t) + fresh[fresh.length - 1]!;
      built += timelines.guardRuns() - runs;
    }
    await index.close();
    const move = median(moves);
    const freshMove = median(fresh);

    const cold = median(colds);
    const coldCpu = median(coldCpus);
    const moveCpu = median(moveCpus);
    const coldGuard = median(coldsGuard);
    console.log('');
    console.log(`| measure | time | baseline | ratio | goal |`);
    console.log(`| --- | --- | --- | --- | --- |`);
    console.log(`| background phase after the full text (estimates, measured ledgers; off the listing) | ${fmt(background)} (CPU ${fmt(backgroundCpu)}) | read+parse the transcript ${fmt(read)} | ${(background / read).toFixed(2)}x | - |`);
    console.log(`| first timeline once they ran | ${fmt(firstWarm)} (CPU ${fmt(firstWarmCpu)}) | read+parse the transcript ${fmt(read)} | ${(firstWarm / read).toFixed(2)}x | <= 300 ms: ${firstWarm <= 300 ? 'met' : 'MISSED'} |`);
    console.log(`| first timeline before they ran (estimates the tool results itself) | ${fmt(first)} | read+parse the transcript ${fmt(read)} | ${(first / read).toFixed(2)}x | - |`);
    console.log(`| cold timeline (no replay asked) | ${fmt(cold)} | read+parse the transcript ${fmt(read)} | ${(cold / read).toFixed(2)}x | <= 300 ms: ${cold <= 300 ? 'met' : 'MISSED'} |`);
    console.log(`| cold timeline, guard at 8K (messages built offline, budgeted) | ${fmt(coldGuard)} | ${fmt(read)} | ${(coldGuard / read).toFixed(2)}x | - |`);
    console.log(`| slider move (series and messages kept) | ${fmt(move)} | cold timeline ${fmt(cold)} | ${(move / cold).toFixed(3)}x | <= 30 ms: ${move <= 30 ? 'met' : 'MISSED'} |`);
    console.log(`| slider move to a new limit (guard builds within budget) | ${fmt(freshMove)} | ${fmt(cold)} | ${(freshMove / cold).toFixed(2)}x | - |`);
    console.log(`| all messages of a new limit built (per limit, ${Math.round(built / NEW)} guard runs) | ${fmt(settle / NEW)} | ${fmt(cold)} | ${(settle / NEW / cold).toFixed(2)}x | - |`);
    console.log(`| listing phase with turns | ${fmt(listOn)} | without the turn reader ${fmt(listOff)} | +${(((listOn - listOff) / listOff) * 100).toFixed(1)}% | <= +20%: ${listOn <= listOff * 1.2 ? 'met' : 'MISSED'} |`);
    console.log(`| the ledger in the listing phase (main thread's CPU samples in ledger.ts) | ${fmt(ledger.ledgerMs)} | of ${fmt(ledger.listMs)} sampled | ${(ledger.share * 100).toFixed(1)}% | <= 10%: ${ledger.share <= 0.1 ? 'met' : 'MISSED'} |`);
    console.log('');
    console.log(`CPU time (less sensitive to other processes on the machine): cold timeline ${fmt(coldCpu)} (${(coldCpu / read).toFixed(2)}x the read's wall time), slider move ${fmt(moveCpu)}, listing with turns ${fmt(cpuOn)} vs without ${fmt(cpuOff)} (+${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)}%)`);
    if (pendingLeft) console.log(`(${pendingLeft} messages still pending after settling)`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
