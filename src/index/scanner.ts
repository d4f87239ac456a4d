/**
 * Bringing the index in line with the files, in two phases.
 *
 * 1. **List** (this module): walk each root, read what changed (a Spillway payload's sidecar; a
 *    transcript), and write every payload's row: from then on it is listed, sortable and
 *    openable. Incremental: a unit (a payload's files, or a transcript) whose sizes and mtimes
 *    are unchanged is skipped; when they changed, its content hash decides whether it is
 *    re-indexed. Units that disappeared leave the index, so a renamed folder shows up under its
 *    new name and leaves under the old. Listing runs one scan at a time, in time slices.
 * 2. **Full text** (fulltext.ts): search fills in behind, with `onIndexProgress` events
 *    (`phase: 'fulltext'`); a search made meanwhile says it is partial.
 *
 * `scan()` resolves when both are done; `ScanResult.listSeconds` says when the first was.
 */
import fs from 'node:fs';
import path from 'node:path';
import { LINKED_SUFFIX, META_SUFFIX, classifyLongResponseFile } from '../pipeline/index.js';
import type { IndexCore } from './core.js';
import { type Discovery, STAT_PENDING, type Unit, type UnitKind, discover, fingerprint } from './discover.js';
import type { FullText } from './fulltext.js';
import { relink } from './join.js';
import { type Awaitable, type RefreshPlan, isPromiseLike } from './source.js';
import { CLIENT_READERS } from './clients.js';
import type { ImportContext } from './importers.js';
import type { PayloadRecord, UnitResult } from './record.js';
import { type RootRow, type Roots, isInsidePath } from './roots.js';
import { isS3Path } from './s3.js';
import type { IndexProgressEvent, IndexStats } from './rows.js';
import { readSpillwayUnit } from './import-spillway.js';
import { ReadBuffers } from './window.js';
import { type RowWriter, sessionIdOf } from './writer.js';
import { IndexStopping, Yielder } from './yielder.js';

export interface ScanOptions {
  /** Only this root; default every root. */
  rootId?: string;
  /** Progress of both phases (`phase: 'list'`, then `'fulltext'`). */
  onProgress?: (p: IndexProgressEvent) => void;
  /** Only these paths inside the root (folders or files): the watcher uses this. */
  scopes?: string[];
  /** List every root whole, even one whose source can tell what changed (S3's journal): a reindex. */
  full?: boolean;
}

/** What `scan()` returns: the contract's IndexStats (totals over the scanned roots) plus what changed. */
export interface ScanResult extends IndexStats {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  /** Units (payload groups or transcripts) read in this scan. */
  read: number;
  /** Which thread wrote the full-text rows: 'worker' when a writer thread did (see bulk.ts). */
  writer: 'main' | 'worker';
  /** When every payload was listed (sortable, openable), from the start of the scan. */
  listSeconds: number;
  warnings: string[];
}

interface Known {
  id: number;
  fingerprint: string;
  hash: string | null;
  kind: UnitKind;
  session_id: string;
}

/** One root's listing pass: its progress, its transaction slices, what it touched. */
interface Pass {
  root: RootRow;
  res: ScanResult;
  touched: Set<string>;
  yielder: Yielder;
  inScope: (p: string) => boolean;
  /** The index held nothing when the scan began: no id can clash. */
  fresh: boolean;
  done: number;
  total: number;
  /** Units done and counted by the passes before this one in the same progress (newest-first batches). */
  before: { done: number; total: number };
  /** Session ids by session path (one hash per session, not per unit). */
  sessionIds: Map<string, string>;
}

/**
 * New units are read, then written, this many at a time: reading sidecars and writing rows each
 * keep their code and data in the CPU's caches instead of evicting each other unit by unit (a
 * fifth off a first listing of 10,000 payloads).
 */
const LIST_BATCH_UNITS = 256;
/** A first open's newest sessions (RefreshPlan.inOrder): the first batch, then twice as many each time, up to the last. */
const IN_ORDER_FIRST_BATCH = 4;
const IN_ORDER_MAX_BATCH = 32;

function counted(pass: Pass, result: UnitResult): UnitResult {
  pass.res.read++;
  if (result.warnings.length) pass.res.warnings.push(...result.warnings);
  return result;
}

function unreadable(unit: Unit, pass: Pass, err: unknown): undefined {
  pass.res.warnings.push(`${unit.key}: ${(err as Error).message}`);
  return undefined;
}

const byKey = (a: Unit, b: Unit) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export class Scanner {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly buffers = new ReadBuffers();

  constructor(
    private readonly core: IndexCore,
    private readonly roots: Roots,
    private readonly writer: RowWriter,
    private readonly fullText: FullText,
    private readonly totals: (rootIds: string[]) => Omit<IndexStats, 'seconds'>,
    /** Phase 3, in the background once the full text is in: the timeline's estimates of what was listed. */
    private readonly afterSearch: (sessionIds: string[]) => Promise<void> | void = () => undefined,
  ) {}
  /** Phase 3 of the last listing that touched sessions: a scan that waits for the full text waits for it too. */
  private phase3: Promise<void> = Promise.resolve();

  /** Both phases; with `waitForFullText` false, resolves once listed (full text fills in behind). */
  scan(opts: ScanOptions = {}, waitForFullText = true): Promise<ScanResult> {
    const t0 = performance.now();
    // Listening from the start: the filler begins as soon as the listing ends.
    const mine = opts.rootId ? new Set([opts.rootId]) : null;
    const listener = (p: IndexProgressEvent) => {
      if (!mine || mine.has(p.rootId)) opts.onProgress?.(p);
    };
    const listen = Boolean(opts.onProgress) && waitForFullText;
    if (listen) this.fullText.listeners.add(listener);
    const listed = this.queue.then(() => this.list(opts, t0));
    this.queue = listed.catch(() => undefined);
    if (!waitForFullText) return listed;
    return listed.then((res) => this.search(res, t0)).finally(() => this.fullText.listeners.delete(listener));
  }

  /** Resolves when the listing scans queued so far are done. */
  listed(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  private async list(opts: ScanOptions, t0: number): Promise<ScanResult> {
    if (this.core.closed) throw new Error('index is closed');
    const roots = opts.rootId ? [this.roots.row(opts.rootId)] : this.roots.rows();
    const res: ScanResult = { sessions: 0, payloads: 0, assets: 0, bytes: 0, seconds: 0, added: 0, changed: 0, removed: 0, unchanged: 0, read: 0, writer: 'main', listSeconds: 0, warnings: [] };
    const touched = new Set<string>();
    const q = this.core.q('SELECT EXISTS(SELECT 1 FROM sources) OR EXISTS(SELECT 1 FROM payloads) OR EXISTS(SELECT 1 FROM summary_runs) AS n');
    const fresh = (q.get() as { n: number }).n === 0;
    await this.fullText.pause();
    // A first listing writes rows only; the full-text phase begins by building the read indexes.
    if (fresh) this.core.dropIndexes();
    else await this.core.buildIndexes();
    const releaseCheckpoints = this.core.holdCheckpoints();
    try {
      for (const root of roots) await this.listRoot(root, opts, res, touched, fresh);
      if (res.added || res.changed || res.removed) {
        // Across roots: a hook's spills are in app data, its transcript under ~/.claude.
        this.writer.begin();
        relink(this.core);
      }
    } finally {
      // A failed scan keeps what it finished: every unit's rows were replaced in one synchronous step.
      this.writer.commit();
      releaseCheckpoints();
      this.fullText.resume();
      if (touched.size) {
        const previous = this.phase3;
        this.phase3 = this.fullText.fill().then(
          async () => {
            await previous;
            await this.afterSearch([...touched]);
          },
          () => undefined,
        ).catch(() => undefined);
      }
      else void this.fullText.fill();
    }
    Object.assign(res, this.totals(roots.map((r) => r.id)));
    res.listSeconds = (performance.now() - t0) / 1000;
    for (const w of res.warnings) this.core.warn(w);
    if (res.added || res.changed || res.removed) {
      this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [...touched], added: res.added, changed: res.changed, removed: res.removed } });
    }
    return res;
  }

  /** Phase 2: wait for full-text search of what was listed. */
  private async search(res: ScanResult, t0: number): Promise<ScanResult> {
    res.writer = (await this.fullText.fill()).writer;
    // The ledger's measured figures are part of the index: a scan asked for and waited on (reindex, `spillway index`) includes them.
    await this.phase3;
    res.seconds = (performance.now() - t0) / 1000;
    return res;
  }

  private async listRoot(root: RootRow, opts: ScanOptions, res: ScanResult, touched: Set<string>, fresh: boolean): Promise<void> {
    let scopes = opts.scopes && root.kind !== 'file' && root.kind !== 'session' ? opts.scopes : null;
    let plan: RefreshPlan | void;
    try {
      plan = await this.core.source.refresh?.(root.path, { full: opts.full === true, state: this.sourceState(root.id), ...(scopes ? { scopes } : {}) });
    } catch (err) {
      // A bucket that cannot be listed now (down, credentials): keep its rows, say why.
      res.warnings.push(`root ${root.path} could not be listed (${(err as Error).message}); kept its index entries`);
      return;
    }
    if (plan?.gone?.length) this.dropPruned(root, plan.gone, res, touched);
    if (!scopes && plan?.inOrder && plan.sessions) {
      // Newest first: each batch is listed, read, committed and announced before the next.
      if (!(await this.listInOrder(root, opts, res, touched, fresh, plan.sessions))) return;
    } else {
      // The source knows what changed (S3's journal): only those sessions are listed.
      const additive = !scopes && plan?.additive === true;
      if (!scopes && plan?.sessions) scopes = plan.sessions.map((s) => path.join(root.path, s));
      if (scopes && scopes.length === 0 && !plan?.more) {
        this.saveState(root.id, plan);
        return;
      }
      await this.listPass(this.pass(root, res, touched, fresh, scopes, opts), opts, scopes, additive);
    }
    this.saveState(root.id, plan);
    if (plan?.more) {
      // The newest sessions are listed and committed: show them, then list the whole root.
      if (!plan.inOrder && touched.size) this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [...touched], added: res.added, changed: res.changed, removed: res.removed } });
      await this.listRoot(root, { ...opts, full: true }, res, touched, fresh);
    }
  }

  private pass(root: RootRow, res: ScanResult, touched: Set<string>, fresh: boolean, scopes: string[] | null, opts: ScanOptions, before?: { done: number; total: number }): Pass {
    const pass: Pass = {
      root,
      res,
      touched,
      fresh,
      done: 0,
      total: 0,
      before: before ?? { done: 0, total: 0 },
      sessionIds: new Map(),
      inScope: (p) => !scopes || scopes.some((s) => isInsidePath(s, p)),
      yielder: new Yielder(
        undefined,
        () => {
          this.writer.commitIfDue();
          if (pass.total) this.progress(pass, opts);
        },
        () => this.core.stopping,
      ),
    };
    return pass;
  }

  /**
   * Sessions newest first (RefreshPlan.inOrder), IN_ORDER_FIRST_BATCH of them, then twice as many
   * each time up to IN_ORDER_MAX_BATCH: each batch is listed by the source (`refresh` with its
   * scopes), read, committed and announced with `onDidIndex`, so the newest sessions show before
   * the older ones are read. Progress counts over all the batches. False when the source failed.
   */
  private async listInOrder(root: RootRow, opts: ScanOptions, res: ScanResult, touched: Set<string>, fresh: boolean, sessions: string[]): Promise<boolean> {
    const before = { done: 0, total: 0 };
    for (let i = 0, size = IN_ORDER_FIRST_BATCH; i < sessions.length; i += size, size = Math.min(size * 2, IN_ORDER_MAX_BATCH)) {
      const scopes = sessions.slice(i, i + size).map((s) => path.join(root.path, s));
      try {
        await this.core.source.refresh?.(root.path, { scopes, state: this.sourceState(root.id) });
      } catch (err) {
        res.warnings.push(`root ${root.path} could not be listed (${(err as Error).message}); kept its index entries`);
        return false;
      }
      const mine = new Set<string>();
      const counts = { added: res.added, changed: res.changed, removed: res.removed };
      const pass = this.pass(root, res, mine, fresh, scopes, opts, before);
      await this.listPass(pass, opts, scopes, true);
      before.done += pass.done;
      before.total += pass.total;
      for (const id of mine) touched.add(id);
      if (mine.size) {
        this.core.emit({ event: 'onDidIndex', payload: { sessionIds: [...mine], added: res.added - counts.added, changed: res.changed - counts.changed, removed: res.removed - counts.removed } });
      }
    }
    return true;
  }

  /** The state the root's source asked to keep (RefreshPlan.state). */
  private sourceState(rootId: string): string | null {
    return (this.core.q('SELECT source_state AS s FROM roots WHERE id = ?').get(rootId) as { s: string | null } | undefined)?.s ?? null;
  }

  private saveState(rootId: string, plan: RefreshPlan | void): void {
    if (plan?.state !== undefined) this.core.q('UPDATE roots SET source_state = ? WHERE id = ?').run(plan.state, rootId);
  }

  private async listPass(pass: Pass, opts: ScanOptions, scopes: string[] | null, additive: boolean): Promise<void> {
    const { root, res } = pass;
    if ((await this.core.source.list(root.path)) === null && (await this.core.source.stat(root.path)) === null) {
      // A root on an unmounted disk: keep its rows (they come back with the disk), but say so.
      res.warnings.push(`root ${root.path} is missing; kept its index entries`);
      return;
    }
    const known = this.knownUnits(pass);
    let disc: Discovery;
    try {
      const kinds = new Map([...known].map(([k, v]) => [k, v.kind]));
      disc = await discover({ source: this.core.source, root: root.path, kind: root.kind, readOnly: root.read_only === 1, scopes, known: kinds, yielder: pass.yielder });
    } catch (err) {
      res.warnings.push(`scan of ${root.path} failed: ${(err as Error).message}`);
      return;
    }
    pass.total = disc.units.length;
    this.progress(pass, opts);
    this.writer.begin();
    const liveSessions = new Set<string>();
    for (const s of disc.sessions.values()) {
      const id = this.writer.upsertSession(root.id, s);
      liveSessions.add(id);
      pass.sessionIds.set(s.path, id);
    }
    await this.listUnits(pass, disc.units, known);
    if (!additive) this.dropGone(pass, known, disc, liveSessions);
    this.core.q('UPDATE roots SET last_scan_at = ? WHERE id = ?').run(new Date().toISOString(), root.id);
    this.writer.commit();
    this.progress(pass, opts);
  }

  private progress(pass: Pass, opts: ScanOptions): void {
    const p: IndexProgressEvent = { rootId: pass.root.id, done: pass.before.done + pass.done, total: pass.before.total + pass.total, phase: 'list' };
    opts.onProgress?.(p);
    this.core.emit({ event: 'onIndexProgress', payload: p });
  }

  private knownUnits(pass: Pass): Map<string, Known> {
    const known = new Map<string, Known>();
    const rows = this.core.q('SELECT id, key, fingerprint, hash, kind, session_id FROM sources WHERE root_id = ?').iterate(pass.root.id) as Iterable<Known & { key: string }>;
    for (const s of rows) if (pass.inScope(s.key)) known.set(s.key, s);
    return known;
  }

  /** Read and write every unit that is new or whose files changed (units never seen go last). */
  private async listUnits(pass: Pass, units: Unit[], known: Map<string, Known>): Promise<void> {
    const fresh: Unit[] = [];
    for (const unit of units) {
      const ex = known.get(unit.key);
      if (!ex) {
        fresh.push(unit);
        continue;
      }
      pass.done++;
      const sessionId = this.sessionId(pass, unit);
      const fp = fingerprint(unit.files);
      if (ex.fingerprint === fp && ex.session_id === sessionId) pass.res.unchanged++;
      else await this.relist(pass, unit, ex, sessionId, fp);
      if (pass.yielder.due) await pass.yielder.now();
    }
    await this.listNew(pass, fresh);
  }

  /**
   * Units never seen, read and then written LIST_BATCH_UNITS at a time, in key order: each new
   * source's key then goes into its index after the last one (a third off those inserts).
   */
  private async listNew(pass: Pass, units: Unit[]): Promise<void> {
    units.sort(byKey);
    const batch: Array<[Unit, UnitResult]> = [];
    for (let i = 0; i < units.length; ) {
      while (i < units.length && batch.length < LIST_BATCH_UNITS && !pass.yielder.due) {
        const unit = units[i++]!;
        pass.done++;
        const read = this.readCounted(unit, pass);
        const result = isPromiseLike(read) ? await read : read;
        if (result) batch.push([unit, result]);
      }
      for (const [unit, result] of batch) this.write(pass, unit, this.sessionId(pass, unit), fingerprint(unit.files), result, undefined);
      batch.length = 0;
      if (pass.yielder.due) await pass.yielder.now();
    }
  }

  private sessionId(pass: Pass, unit: Unit): string {
    let id = pass.sessionIds.get(unit.session.path);
    if (!id) pass.sessionIds.set(unit.session.path, (id = sessionIdOf(unit.session.path)));
    return id;
  }

  /** A known unit whose files changed: re-read it; its hash says whether the content did. */
  private async relist(pass: Pass, unit: Unit, ex: Known, sessionId: string, fp: string): Promise<void> {
    const result = await this.readCounted(unit, pass);
    if (!result) return;
    this.writer.begin();
    if (ex.hash && ex.hash === result.hash && ex.session_id === sessionId) {
      this.writer.touch(ex.id, fp);
      this.writer.noteSession(sessionId, result.session);
      this.writer.noteSpill(sessionId, result.spill);
      pass.res.unchanged++;
    } else this.write(pass, unit, sessionId, fp, result, ex.id);
  }

  private write(pass: Pass, unit: Unit, sessionId: string, fp: string, result: UnitResult, existing: number | undefined): void {
    this.writer.begin();
    const n = this.writer.replaceSource(pass.root.id, sessionId, unit, fp, result, existing, pass.fresh);
    this.writer.noteSession(sessionId, result.session);
    this.writer.noteSpill(sessionId, result.spill);
    pass.res.added += n.added;
    pass.res.changed += n.changed;
    pass.res.removed += n.removed;
    if (n.added || n.changed || n.removed) pass.touched.add(sessionId);
  }

  /** Units the source says were deleted on purpose (RefreshPlan.gone), by key; a session left empty goes too. */
  private dropPruned(root: RootRow, gone: string[], res: ScanResult, touched: Set<string>): void {
    const find = this.core.q('SELECT id, session_id FROM sources WHERE root_id = ? AND key = ?');
    const left = this.core.q('SELECT EXISTS(SELECT 1 FROM sources WHERE session_id = ?) AS n');
    const sessions = new Set<string>();
    this.writer.begin();
    for (const rel of gone) {
      const row = find.get(root.id, path.join(root.path, rel)) as { id: number; session_id: string } | undefined;
      if (!row) continue;
      res.removed += this.writer.dropSource(row.id);
      sessions.add(row.session_id);
      touched.add(row.session_id);
    }
    for (const id of sessions) if ((left.get(id) as { n: number }).n === 0) this.writer.dropSession(id);
    this.writer.commit();
  }

  /** Whatever was known in this scope and not seen is gone, and so are sessions no longer found. */
  private dropGone(pass: Pass, known: Map<string, Known>, disc: Discovery, liveSessions: Set<string>): void {
    const seen = new Set(disc.units.map((u) => u.key));
    for (const [key, ex] of known) {
      if (seen.has(key)) continue;
      pass.res.removed += this.writer.dropSource(ex.id);
      pass.touched.add(ex.session_id);
    }
    const sessions = this.core.q('SELECT id, path FROM sessions WHERE root_id = ?').all(pass.root.id) as Array<{ id: string; path: string }>;
    for (const s of sessions) {
      if (liveSessions.has(s.id) || !pass.inScope(s.path)) continue;
      this.writer.dropSession(s.id);
      pass.touched.add(s.id);
    }
  }

  /**
   * Read a unit, counted in the scan's result; one that cannot be read becomes a warning
   * (undefined). A promise only when its reader returned one (a local Spillway stem is read at once).
   */
  private readCounted(unit: Unit, pass: Pass): Awaitable<UnitResult | undefined> {
    let r: Awaitable<UnitResult>;
    try {
      r = this.readUnit(unit, pass.yielder);
    } catch (err) {
      return unreadable(unit, pass, err);
    }
    if (!isPromiseLike(r)) return counted(pass, r);
    return r.then(
      (result) => counted(pass, result),
      (err: unknown) => {
        // A closing index: the scan ends here (what was written is committed), not a warning.
        if (err instanceof IndexStopping) throw err;
        return unreadable(unit, pass, err);
      },
    );
  }

  private readUnit(unit: Unit, yielder: Yielder): Awaitable<UnitResult> {
    if (unit.kind === 'spillway') return readSpillwayUnit(this.core.source, unit, this.buffers);
    const ctx: ImportContext = { source: this.core.source, yielder, resolveSpill: (p) => this.resolveSpill(p) };
    // unit.kind is a ClientId here: the table has a reader for every one (clients.ts), checked by the compiler.
    return CLIENT_READERS[unit.kind].import(ctx, unit);
  }

  /** The Spillway payload a message in a transcript names, if it is one inside a registered root (see import-link.ts). */
  private async resolveSpill(named: string): Promise<PayloadRecord | null> {
    if (!this.roots.rootFor(named)) return null;
    // The local source reads only link-free paths (roots are real): the folder as the root has it.
    let payloadPath = named;
    if (!isS3Path(named)) {
      try {
        payloadPath = path.join(fs.realpathSync.native(path.dirname(path.resolve(named))), path.basename(named));
      } catch {
        return null;
      }
    }
    const dir = path.dirname(payloadPath);
    const c = classifyLongResponseFile(path.basename(payloadPath));
    if (!c) return null;
    const files = [];
    for (const p of [payloadPath, path.join(dir, c.stem + META_SUFFIX), path.join(dir, c.stem + LINKED_SUFFIX)]) {
      if (await this.core.source.stat(p)) files.push({ path: p, name: path.basename(p), size: STAT_PENDING, mtimeMs: STAT_PENDING });
    }
    const session = { path: path.dirname(dir), name: path.basename(path.dirname(dir)), kind: 'spillway' as const, readOnly: true };
    const unit: Unit = { key: path.join(dir, c.stem), kind: 'spillway', session, files, stem: c.stem };
    try {
      return (await readSpillwayUnit(this.core.source, unit)).payloads[0] ?? null;
    } catch {
      return null;
    }
  }
}
