import { ADAPTERS, CLIENT_IDS } from '../../agents/index.js';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { DEFAULT_PROFILE, MAX_MESSAGE_CHARS, PREVIEW_CHARS, buildPreview, fmtBytes, mayCarryInlineAssets, readMoreAdvice, resolveLimit, spillStream, truncate } from '../../pipeline/index.js';
import type { DrillDownToolNames, Estimate, ReadMoreTools, StreamedSpillResult } from '../../pipeline/index.js';
import type { GuardResult, SummarizeHook, ToolCallRef } from '../../pipeline/index.js';
import type { CallRule } from '../rules/index.js';
import { LineSplitter, LineWriter, MAX_BUFFERED_LINE_BYTES } from './lines.js';
import { ChunkQueue, OversizedLine, previewText } from './oversized.js';
import { ErrorCode, errorResponse, idKey, peekLine, resultResponse, tryParse, type JsonRpcId, type JsonRpcMessage } from './jsonrpc.js';
import { clientToolName, defaultSessionDir, lazyMkdir, serverNameFromCommand } from './session.js';
import { SPILL_META_KEY, guardToolResult, mcpAwareSummarizer, type GuardFn, type McpClientKind, type ToolCallContext } from './tool-result.js';
import type { Validate } from './structured.js';
import { TerminalSafeLines, terminalSafe } from '../../pipeline/terminal.js';
import { errMessage, isObj } from '../../pipeline/values.js';

/** After the client closes our stdin, time the server gets to exit before SIGTERM, then again before SIGKILL (MCP stdio shutdown). */
export const SHUTDOWN_GRACE_MS = 2_000;
/** When the server cannot even start, how long the proxy stays to answer the client's first requests with the reason. */
export const SPAWN_FAILURE_LINGER_MS = 1_500;

/** Tools the proxy answers itself (the drill-down tools). */
export interface LocalTools {
  /**
   * Tool definitions appended to the last page of tools/list, under names none of `taken` (the
   * server's tools) has: a server cannot shadow them, and every later message names them as listed.
   */
  list(taken: ReadonlySet<string>): Array<Record<string, unknown>>;
  /** The canonical name of a tool as registered (the last list), or undefined when it is not ours. */
  resolve(name: string): string | undefined;
  /** `call` takes the canonical name. */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>>;
  /** Told about each spill: the example sentence appended to the message. */
  hint?(g: GuardResult): string;
  /** The tools' names as registered (the last list): every message names these, never the canonical ones a server may hold. */
  names?(): DrillDownToolNames;
}

export interface McpProxyOptions {
  command: string;
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Session folder; default: a new folder under the app-data sessions root, made on the first spill. */
  sessionDir?: string;
  sessionsRoot?: string;
  limitTokens?: number;
  contextWindowTokens?: number;
  summarize?: SummarizeHook;
  /** Per-tool projection, `(toolName) => project function | undefined`. */
  projectionFor?: (toolName: string) => ((value: unknown) => unknown) | undefined;
  /** Adds an optional argument of this name to every tool's inputSchema; stripped before forwarding and used as the intent. */
  focusArg?: string;
  /**
   * The guard rules (docs/config.md): per tool, its limit, summarizer and focus argument, the flags
   * already first. Without it, limitTokens, summarize and focusArg apply to every tool.
   */
  rules?: { forCall(tool: string, server?: string, clientName?: string): CallRule };
  guard: GuardFn;
  /** What the client shows its model of a result: decides when a result is too large (default `generic`). */
  client?: McpClientKind;
  /** The name the client knows this server by (its config key): spills record tools as the client names them (see clientToolName). */
  serverName?: string;
  /** Drill-down tools; built from the session folder once it is known. */
  localTools?: (session: () => Promise<string>, sessionDir: () => string) => LocalTools;
  /** JSON Schema validator factory (the SDK's Ajv provider by default). */
  validatorFor?: (schema: Record<string, unknown>) => Promise<Validate>;
  /** Longest server line read into memory (default MAX_BUFFERED_LINE_BYTES); a longer response is streamed to a spill, never forwarded. For tests. */
  maxLineBytes?: number;
  input?: Readable;
  output?: Writable;
  /** Where the server's stderr and our logs go. */
  errorOutput?: Writable;
  quiet?: boolean;
}

interface Pending {
  id: JsonRpcId;
  method: string;
  toolName?: string;
  toolInput?: unknown;
  intent?: string;
  taskId?: string;
  /** A task-augmented tools/call: its response is a CreateTaskResult to read, however small. */
  task?: boolean;
  cancelled?: boolean;
  local?: AbortController;
  /** The client's id of this call and its session, from the request's `_meta` (see callOfRequest). */
  call?: ToolCallRef;
}

interface ToolInfo {
  outputSchema?: Record<string, unknown>;
  validate?: Promise<Validate | undefined>;
  /** Marked for MCP Apps (`_meta.ui.visibility` includes "app"): results go to a UI, passed through. */
  app: boolean;
  /** The server's own schema already has a property named like the focus argument: leave it alone. */
  nativeFocus: boolean;
}

/** Methods whose responses the proxy reads; everything else is forwarded as bytes. */
const INSPECTED = new Set(['initialize', 'tools/list', 'tools/call', 'tasks/result']);

const FOCUS_DESCRIPTION =
  'Optional: what you need from this result (a question or the fields you care about). ' +
  'If the result is too large for the context, it is saved to disk and summarized with this focus.';

type Obj = Record<string, unknown>;

async function defaultValidatorFor(schema: Obj): Promise<Validate> {
  const { AjvJsonSchemaValidator } = await import('@modelcontextprotocol/sdk/validation/ajv');
  const v = new AjvJsonSchemaValidator().getValidator(schema as never);
  return (value) => {
    const r = v(value);
    return r.valid ? { valid: true } : { valid: false, error: r.errorMessage };
  };
}

/**
 * The stdio proxy: `client ⇄ proxy ⇄ server`. Lines are forwarded as bytes; only responses to
 * initialize, tools/list, tools/call and tasks/result are parsed, and only tools/list and oversized
 * tool results are rewritten. Resolves with the exit code once both sides are done.
 */
export class McpProxy {
  private child?: ChildProcess;
  private readonly pending = new Map<string, Pending>();
  private readonly tools = new Map<string, ToolInfo>();
  private readonly tasks = new Map<string, { toolName: string; toolInput?: unknown; intent?: string; call?: ToolCallRef }>();
  /** `clientInfo.name` from the client's initialize request. */
  private clientName?: string;
  private readonly inflight = new Set<Promise<void>>();
  private toClient!: LineWriter;
  private toServer?: LineWriter;
  private serverName: string;
  private readonly startedAt = new Date();
  private childGone = false;
  private goneReason = '';
  private lingerUntil = 0;
  private clientGone = false;
  private finished = false;
  private resolveDone!: (code: number) => void;
  private childExitCode: number | null = null;
  private killTimers: NodeJS.Timeout[] = [];
  private local?: LocalTools;
  private readonly session: () => Promise<string>;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly errOut: Writable;
  private readonly validatorFor: (schema: Obj) => Promise<Validate>;
  private readonly fastPassBytes: number;
  private readonly maxLineBytes: number;
  /** Why the server's output is paused: the client is not reading, a streamed spill is behind. */
  private readonly serverPaused = new Set<'client' | 'spill'>();
  /** The server line over the inspection limit being streamed to a spill, if any. */
  private big?: { line: OversizedLine; queue: ChunkQueue; spill?: Promise<StreamedSpillResult>; about?: { toolName: string; toolInput?: unknown; intent?: string; call?: ToolCallRef } };
  private readonly summarize?: SummarizeHook;
  /** Each tool's rule, resolved on first use (the server's name is known by then: a tools/list follows initialize). */
  private readonly rules = new Map<string, { rule: CallRule; summarize?: SummarizeHook; limit: number }>();

  constructor(private readonly opts: McpProxyOptions) {
    this.input = opts.input ?? process.stdin;
    this.output = opts.output ?? process.stdout;
    this.errOut = opts.errorOutput ?? process.stderr;
    this.serverName = serverNameFromCommand(opts.command, opts.args ?? []);
    this.validatorFor = opts.validatorFor ?? defaultValidatorFor;
    this.maxLineBytes = opts.maxLineBytes ?? MAX_BUFFERED_LINE_BYTES;
    // The limit the guard will use: an explicit limit is still narrowed by a context window.
    this.fastPassBytes = resolveLimit({ limitTokens: opts.limitTokens, contextWindowTokens: opts.contextWindowTokens });
    this.summarize = mcpAwareSummarizer(opts.summarize);
    const dir = () => opts.sessionDir ?? defaultSessionDir(this.serverName, this.startedAt, opts.sessionsRoot);
    let fixed: string | undefined;
    // The folder name is fixed on first use, so a late `initialize` cannot move it.
    const sessionDir = () => (fixed ??= dir());
    this.session = lazyMkdir(sessionDir);
    this.local = opts.localTools?.(this.session, sessionDir);
  }

  /** The session folder (decided on the first spill or drill-down call). */
  get sessionPath(): Promise<string> {
    return this.session();
  }

  log(msg: string): void {
    if (this.opts.quiet) return;
    try {
      // Tool names and paths in log lines come from the server: no raw control reaches a terminal.
      this.errOut.write(`spillway mcp: ${terminalSafe(msg)}\n`);
    } catch {
      /* stderr gone: nothing left to tell */
    }
  }

  run(): Promise<number> {
    const done = new Promise<number>((resolve) => (this.resolveDone = resolve));
    this.toClient = new LineWriter(this.output, (full) => this.pauseServer('client', full));
    this.output.on('error', (err: NodeJS.ErrnoException) => {
      // EPIPE: the client went away. Nobody is left to answer; stop the server.
      this.log(`client output closed (${err.code ?? err.message}); stopping the server`);
      this.toClient.close();
      this.clientGone = true;
      this.stopChild();
    });

    let child: ChildProcess;
    try {
      child = spawn(this.opts.command, this.opts.args ?? [], {
        cwd: this.opts.cwd,
        env: this.opts.env ?? process.env,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      this.onChildGone(`could not start ${this.opts.command}: ${errMessage(err)}`, true);
      this.readClient();
      return done;
    }
    this.child = child;
    this.toServer = new LineWriter(child.stdin!, (full) => {
      if (full) this.input.pause();
      else this.input.resume();
    });
    child.stdin!.on('error', () => {
      /* EPIPE when the server died: its 'close' event reports that */
    });
    // The server's stderr reaches the user's terminal: line by line, every control made visible (terminal.ts).
    const serverErr = new TerminalSafeLines((b) => {
      try {
        this.errOut.write(b);
      } catch {
        /* ignore */
      }
    });
    child.stderr!.on('data', (chunk: Buffer) => serverErr.push(chunk));
    child.stderr!.on('end', () => serverErr.end());
    const fromServer = new LineSplitter({
      onLine: (line) => this.onServerLine(line),
      onOversizedStart: (head) => this.onOversizedStart(head),
      onOversizedChunk: (c) => this.big?.line.push(c),
      onOversizedEnd: () => this.onOversizedEnd(),
    }, this.maxLineBytes);
    child.stdout!.on('data', (chunk: Buffer) => fromServer.push(chunk));
    child.stdout!.on('end', () => fromServer.end());
    child.on('error', (err) => this.onChildGone(`could not start ${this.opts.command}: ${err.message}`, child.pid === undefined));
    child.on('close', (code, signal) => {
      // After a spawn error Node reports a negative errno here; the proxy says 1.
      if (!this.childGone) this.childExitCode = code === null || code < 0 ? 1 : code;
      this.onChildGone(`server exited (${signal ? `signal ${signal}` : `code ${code}`})`);
    });
    this.readClient();
    return done;
  }

  private pauseServer(reason: 'client' | 'spill', on: boolean): void {
    if (on) this.serverPaused.add(reason);
    else this.serverPaused.delete(reason);
    const out = this.child?.stdout;
    if (!out) return;
    if (this.serverPaused.size) out.pause();
    else out.resume();
  }

  private readClient(): void {
    const fromClient = new LineSplitter({
      onLine: (line) => this.onClientLine(line),
      onOversizedStart: (head) => this.toServer?.beginStreamedLine(head),
      onOversizedChunk: (c) => this.toServer?.streamChunk(c),
      onOversizedEnd: () => this.toServer?.endStreamedLine(),
    });
    this.input.on('data', (chunk: Buffer | string) => fromClient.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
    this.input.on('end', () => {
      fromClient.end();
      this.clientGone = true;
      this.stopChild();
      void this.maybeFinish();
    });
    this.input.on('error', () => {
      this.clientGone = true;
      this.stopChild();
    });
  }

  /** Close the server's stdin, then SIGTERM, then SIGKILL, as the MCP stdio spec describes. */
  private stopChild(): void {
    const child = this.child;
    if (!child || this.childGone) {
      void this.maybeFinish();
      return;
    }
    try {
      child.stdin?.end();
    } catch {
      /* already closed */
    }
    if (this.killTimers.length) return;
    this.killTimers.push(
      setTimeout(() => {
        if (!this.childGone) child.kill('SIGTERM');
      }, SHUTDOWN_GRACE_MS).unref(),
      setTimeout(() => {
        if (!this.childGone) child.kill('SIGKILL');
      }, 2 * SHUTDOWN_GRACE_MS).unref(),
    );
  }

  /** Forward a signal to the server (the CLI wires SIGINT/SIGTERM here). */
  signal(sig: NodeJS.Signals): void {
    if (this.child && !this.childGone) this.child.kill(sig);
    else void this.maybeFinish();
  }

  private onChildGone(reason: string, neverStarted = false): void {
    if (this.childGone) return;
    this.childGone = true;
    this.goneReason = reason;
    for (const t of this.killTimers) clearTimeout(t);
    if (!this.clientGone) this.log(reason);
    // Every request the server never answered gets an error now, rather than hanging the client.
    for (const [key, p] of this.pending) {
      if (p.local) continue;
      this.pending.delete(key);
      if (!p.cancelled) this.toClient.writeLine(errorResponse(p.id, ErrorCode.ConnectionClosed, `MCP server is gone: ${reason}; ${p.method} was not answered`));
    }
    if (this.childExitCode === null) this.childExitCode = 1;
    if (neverStarted) {
      // The client's initialize is probably on its way: stay a moment to answer it with the reason.
      this.lingerUntil = Date.now() + SPAWN_FAILURE_LINGER_MS;
    } else {
      this.clientGone = true; // nothing more can be served: stop reading the client
      this.input.pause();
    }
    void this.maybeFinish();
  }

  private async maybeFinish(): Promise<void> {
    if (this.finished || !this.childGone) return;
    this.finished = true;
    const linger = this.lingerUntil - Date.now();
    if (linger > 0 && !this.clientGone) await new Promise((r) => setTimeout(r, linger));
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
    // Let the last lines reach the client before the process may exit.
    await new Promise<void>((resolve) => {
      try {
        this.output.write('', () => resolve());
      } catch {
        resolve();
      }
    });
    this.toClient.close();
    this.input.removeAllListeners('data');
    this.resolveDone(this.childExitCode ?? 0);
  }

  private track(p: Promise<void>): void {
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  // ---- client → server --------------------------------------------------------------------

  private onClientLine(line: Buffer): void {
    const peek = peekLine(line);
    if (peek.kind === 'response') return this.toServerLine(line); // answers to the server's own requests
    const msg = tryParse(line);
    if (!msg || typeof msg.method !== 'string') return this.toServerLine(line);
    const isRequest = msg.id !== undefined && msg.id !== null;
    if (!isRequest) {
      if (msg.method === 'notifications/cancelled') {
        const key = idKey(msg.params?.requestId);
        const p = key ? this.pending.get(key) : undefined;
        if (p?.local) {
          p.local.abort();
          this.pending.delete(key!);
          return; // the server never saw this request
        }
        if (p) p.cancelled = true;
      }
      return this.toServerLine(line);
    }
    const id = msg.id as JsonRpcId;
    const key = idKey(id)!;
    if (this.childGone) {
      this.toClient.writeLine(errorResponse(id, ErrorCode.ConnectionClosed, `MCP server is gone (${this.goneReason}); ${msg.method} cannot be answered`));
      return;
    }
    const pending: Pending = { id, method: msg.method };
    let out: Buffer | string = line;
    if (msg.method === 'initialize' && isObj(msg.params) && isObj(msg.params.clientInfo) && typeof msg.params.clientInfo.name === 'string') {
      this.clientName = msg.params.clientInfo.name;
    }
    if (msg.method === 'tools/call') {
      const params = isObj(msg.params) ? msg.params : {};
      // The proxy runs where the client started it: the client's project folder.
      pending.call = callOfRequest(params, this.clientName ?? (this.opts.client !== 'generic' ? this.opts.client : undefined), process.cwd());
      const name = typeof params.name === 'string' ? params.name : '';
      const args = isObj(params.arguments) ? params.arguments : undefined;
      // Only a name registered as ours, and not one the server lists (a server may list ours after a change).
      const local = this.tools.has(name) ? undefined : this.local?.resolve(name);
      if (local) return this.callLocal(id, key, local, args ?? {});
      pending.toolName = name;
      const focusArg = this.focusArgOf(name);
      if (focusArg && args && Object.hasOwn(args, focusArg) && !this.tools.get(name)?.nativeFocus) {
        const focus = args[focusArg];
        if (typeof focus === 'string' && focus.trim()) pending.intent = focus.trim();
        const { [focusArg]: _dropped, ...rest } = args;
        void _dropped;
        params.arguments = rest;
        out = JSON.stringify(msg);
      }
      pending.toolInput = params.arguments;
      pending.task = params.task !== undefined;
    } else if (msg.method === 'tasks/result') {
      const taskId = msg.params?.taskId;
      if (typeof taskId === 'string') {
        pending.taskId = taskId;
        pending.toolName = this.tasks.get(taskId)?.toolName;
      }
    }
    this.pending.set(key, pending);
    this.toServerLine(out);
  }

  private toServerLine(line: Buffer | string): void {
    this.toServer?.writeLine(line);
  }

  private callLocal(id: JsonRpcId, key: string, name: string, args: Obj): void {
    const ac = new AbortController();
    this.pending.set(key, { id, method: 'tools/call', toolName: name, local: ac });
    const work = (async () => {
      let result: Obj;
      try {
        result = await this.local!.call(name, args, ac.signal);
      } catch (err) {
        result = { content: [{ type: 'text', text: `${name} failed: ${errMessage(err)}` }], isError: true };
      }
      if (ac.signal.aborted) return; // cancelled: no response, as the spec asks
      this.pending.delete(key);
      this.toClient.writeLine(resultResponse(id, result));
    })();
    this.track(work);
  }

  // ---- server → client --------------------------------------------------------------------

  private onServerLine(line: Buffer): void {
    const peek = peekLine(line);
    if (peek.kind === 'message') return this.toClient.writeLine(line);
    let pending: Pending | undefined;
    let key: string | undefined;
    if (peek.kind === 'response' && peek.id !== undefined) {
      key = idKey(peek.id)!;
      pending = this.pending.get(key);
      if (!pending) return this.toClient.writeLine(line);
      if (!INSPECTED.has(pending.method)) {
        this.pending.delete(key);
        return this.toClient.writeLine(line);
      }
      if ((pending.method === 'tools/call' && !pending.task) || pending.method === 'tasks/result') {
        // Decided without parsing: most results are small, and a 32 MB one under a high limit is just bytes.
        if (pending.cancelled) {
          this.pending.delete(key);
          return; // the client gave up on it: no response, as the spec asks
        }
        if (this.fitsAsIs(line, pending.toolName) || (pending.toolName !== undefined && this.tools.get(pending.toolName)?.app)) {
          this.pending.delete(key);
          return this.toClient.writeLine(line);
        }
      }
    } else if (this.pending.size === 0) {
      return this.toClient.writeLine(line);
    }
    const msg = tryParse(line);
    if (!msg || typeof msg.method === 'string' || msg.id === undefined || msg.id === null) return this.toClient.writeLine(line);
    if (!pending) {
      key = idKey(msg.id);
      pending = key ? this.pending.get(key) : undefined;
      if (!pending) return this.toClient.writeLine(line);
    }
    this.pending.delete(key!);
    if (!INSPECTED.has(pending.method) || msg.error !== undefined || !isObj(msg.result)) return this.toClient.writeLine(line);
    switch (pending.method) {
      case 'initialize': {
        const info = msg.result.serverInfo;
        if (isObj(info) && typeof info.name === 'string' && info.name) this.serverName = info.name;
        return this.toClient.writeLine(line);
      }
      case 'tools/list':
        return this.onToolsList(msg, line);
      case 'tools/call': {
        const task = msg.result.task;
        if (isObj(task) && typeof task.taskId === 'string') {
          // Task-augmented call: the result comes later through tasks/result.
          this.tasks.set(task.taskId, { toolName: pending.toolName ?? 'tool', toolInput: pending.toolInput, intent: pending.intent, call: pending.call });
          return this.toClient.writeLine(line);
        }
        return this.onToolResult(pending, msg.result, line);
      }
      case 'tasks/result': {
        const t = pending.taskId ? this.tasks.get(pending.taskId) : undefined;
        return this.onToolResult({ ...pending, toolName: t?.toolName ?? 'task', toolInput: t?.toolInput, intent: t?.intent, call: t?.call }, msg.result, line);
      }
    }
  }

  // ---- server messages over the inspection limit ----------------------------------------------

  /**
   * A server line grew past MAX_BUFFERED_LINE_BYTES: too big to parse, and never forwarded (a client
   * holding it would need as much memory, and the model must not get it). A response is streamed to
   * a spill as it arrives (its `result` value's bytes, exactly); a request or notification from the
   * server is read and dropped. What the client gets is decided when the line ends, when its id is known.
   */
  private onOversizedStart(head: Buffer[]): void {
    const queue = new ChunkQueue((high) => this.pauseServer('spill', high));
    const line = new OversizedLine(head, (c) => queue.push(c));
    const big: NonNullable<McpProxy['big']> = { line, queue };
    this.big = big;
    if (line.envelope.kind === 'message') {
      queue.fail();
      return;
    }
    this.log(`a message over the ${fmtBytes(this.maxLineBytes)} inspection limit: streaming it to the session folder`);
    const spill = this.session().then((sessionPath) =>
      spillStream({
        sessionPath,
        body: queue,
        about: () => big.about ?? { toolName: 'unknown' },
        suffix: '.json',
        kind: 'json',
        limitTokens: this.fastPassBytes,
        estimateOf: (bytes): Estimate => ({ tokens: Math.ceil(bytes / 4), strategy: 'chars4', profile: DEFAULT_PROFILE, exact: false }),
        notes: () => (line.finished && !line.finished.exact ? [savedNote(line.finished.saved)] : []),
        messageFor: (w) => this.streamedMessage(big, w),
      }),
    );
    // A write that fails stops taking chunks: the rest of the line is read and dropped, never forwarded.
    spill.catch(() => queue.fail());
    big.spill = spill;
    // The proxy does not finish while the file is being written.
    this.track(spill.then(() => undefined, () => undefined));
  }

  private onOversizedEnd(): void {
    const big = this.big;
    if (!big) return;
    this.big = undefined;
    const { id } = big.line.finish();
    const key = id === undefined ? undefined : idKey(id);
    if (big.line.envelope.kind === 'message') {
      // A request the server made of the client: answer it, so the server does not wait for ever.
      if (big.line.envelope.id !== undefined) {
        this.toServerLine(errorResponse(big.line.envelope.id, ErrorCode.InternalError, `Spillway: this request is over the ${fmtBytes(this.maxLineBytes)} the MCP proxy can read; it was not forwarded to the client`));
      }
      this.log(`dropped a server request or notification over the ${fmtBytes(this.maxLineBytes)} inspection limit`);
      return;
    }
    const pending = key ? this.pending.get(key) : undefined;
    if (pending) this.pending.delete(key!);
    // A JSON-RPC error from the server stays an error for the client, whatever the method.
    const isTool = !!pending && big.line.envelope.member !== 'error' && ((pending.method === 'tools/call' && !pending.task) || pending.method === 'tasks/result');
    const task = pending?.taskId ? this.tasks.get(pending.taskId) : undefined;
    const toolName = pending?.method === 'tasks/result' ? (task?.toolName ?? 'task') : (pending?.toolName ?? pending?.method ?? 'unknown');
    big.about = {
      toolName: isTool ? this.recordedName(toolName) : `${pending?.method ?? 'unanswered'} response`,
      toolInput: task?.toolInput ?? pending?.toolInput,
      ...((task?.intent ?? pending?.intent) ? { intent: task?.intent ?? pending?.intent } : {}),
      ...((task?.call ?? pending?.call) ? { call: task?.call ?? pending?.call } : {}),
    };
    if (pending?.cancelled) {
      // The client gave up on it: no response, as the spec asks, and nothing kept.
      big.queue.end(new Error('the request was cancelled'));
      big.spill?.catch(() => undefined);
      return;
    }
    big.queue.end();
    const work = big.spill!.then(
      (r) => {
        if (r.error !== undefined) this.log(`the sidecar of ${r.payloadPath} could not be written: ${errMessage(r.error)}`);
        this.log(`spilled ${toolName} (${fmtBytes(r.bytes)}, streamed to disk unread, not forwarded) to ${r.payloadPath}`);
        if (!pending) return;
        if (isTool) return this.toClient.writeLine(resultResponse(pending.id, this.streamedResult(toolName, r)));
        this.toClient.writeLine(
          errorResponse(
            pending.id,
            ErrorCode.InternalError,
            `Spillway: the response to ${pending.method} is ${fmtBytes(r.bytes)}, over the ${fmtBytes(this.maxLineBytes)} the MCP proxy can read; it was not forwarded. Saved: ${r.payloadPath}`,
            { payloadPath: r.payloadPath, bytes: r.bytes, sha256: r.sha256 },
          ),
        );
      },
      (err: unknown) => {
        const why = truncate(errMessage(err), 300);
        this.log(`a message over the inspection limit could not be saved (${why}); it was dropped`);
        if (!pending) return;
        const text = `Spillway: the result of ${toolName} was over the ${fmtBytes(this.maxLineBytes)} the MCP proxy can read, and could NOT be saved (${why}). It was withheld. Re-run the tool with a narrower request (filters, pagination, a smaller range).`;
        if (isTool) return this.toClient.writeLine(resultResponse(pending.id, { content: [{ type: 'text', text }], isError: true }));
        this.toClient.writeLine(errorResponse(pending.id, ErrorCode.InternalError, text));
      },
    );
    this.track(work);
  }

  /** The message of a streamed spill: what happened, where it is, how to read it, and the start of it. */
  private streamedMessage(big: NonNullable<McpProxy['big']>, w: { payloadPath: string; sessionPath: string; bytes: number; estimate: Estimate }): string {
    const tool = `\`${big.about?.toolName ?? 'the tool'}\``;
    const rel = path.relative(w.sessionPath, w.payloadPath).split(path.sep).join('/');
    const finished = big.line.finished;
    const exact = !finished || finished.exact;
    const advice = readMoreAdvice(this.readMore, this.local?.names?.());
    const { text, json } = previewText(big.line.previewHead);
    const out = [
      `[spillway] The result of ${tool} is ${fmtBytes(w.bytes)} (~${w.estimate.tokens.toLocaleString('en-US')} tokens, chars4 estimate from its size), ` +
        `over the limit of ${this.fastPassBytes.toLocaleString('en-US')} tokens and over the ${fmtBytes(this.maxLineBytes)} the MCP proxy reads into memory. ` +
        `It was streamed to disk unread: saved in full${exact ? '' : ` (${savedNote(finished.saved)})`}, not summarized, no assets cut out.`,
      `Saved: ${rel} (in session ${w.sessionPath})`,
      `Absolute path: ${w.payloadPath}`,
      advice,
      `\`spillway restore ${w.payloadPath} -o <file>\` rebuilds the exact bytes the server sent${exact ? ' as its result' : ''}.`,
    ];
    const hint = this.local?.hint?.({ action: 'spill', message: '', estimate: w.estimate, limitTokens: this.fastPassBytes, payloadPath: w.payloadPath, assets: [], errors: [] });
    if (hint) out.push(hint);
    return truncate(`${out.join('\n')}\n\nPreview (its first ${fmtBytes(big.line.previewHead.length)}):\n${buildPreview(text, json ? 'json' : undefined, PREVIEW_CHARS)}`, MAX_MESSAGE_CHARS);
  }

  /** The tools/call result standing for a streamed spill. */
  private streamedResult(toolName: string, r: StreamedSpillResult): Obj {
    const out: Obj = {
      content: [{ type: 'text', text: r.message }],
      _meta: { [SPILL_META_KEY]: { action: 'spill', streamed: true, tokens: r.estimate.tokens, limitTokens: this.fastPassBytes, bytes: r.bytes, payloadPath: r.payloadPath, ...(r.metaPath ? { metaPath: r.metaPath } : {}) } },
    };
    if (this.tools.get(toolName)?.outputSchema) {
      // Nothing of the value was read, so no structuredContent can be offered; an error result is the one shape a client accepts without it.
      out.isError = true;
      (out.content as Obj[]).push({ type: 'text', text: "Spillway: marked as an error only because this tool's output schema needs structured content, which a result this large cannot be given; the call itself succeeded." });
    }
    return out;
  }

  private onToolsList(msg: JsonRpcMessage, line: Buffer): void {
    const result = msg.result as Obj;
    const tools = Array.isArray(result.tools) ? result.tools : null;
    if (!tools) return this.toClient.writeLine(line);
    for (const tool of tools) {
      if (!isObj(tool) || typeof tool.name !== 'string') continue;
      const focusArg = this.focusArgOf(tool.name);
      const ui = isObj(tool._meta) && isObj(tool._meta.ui) ? tool._meta.ui : undefined;
      const app = Array.isArray(ui?.visibility) && ui.visibility.includes('app');
      const input = isObj(tool.inputSchema) ? tool.inputSchema : undefined;
      const props = input && isObj(input.properties) ? input.properties : undefined;
      const nativeFocus = !!focusArg && !!props && Object.hasOwn(props, focusArg);
      const outputSchema = isObj(tool.outputSchema) ? tool.outputSchema : undefined;
      this.tools.set(tool.name, { outputSchema, app, nativeFocus });
      if (focusArg && input && !nativeFocus && !app && (input.type === 'object' || input.type === undefined)) {
        tool.inputSchema = { ...input, properties: { ...(props ?? {}), [focusArg]: { type: 'string', description: FOCUS_DESCRIPTION } } };
      }
    }
    const lastPage = result.nextCursor === undefined || result.nextCursor === null;
    if (lastPage && this.local) {
      // Every page's names, so no page's tool is shadowed by ours.
      const taken = new Set<string>(this.tools.keys());
      for (const t of this.local.list(taken)) {
        const canonical = this.local.resolve(String(t.name));
        if (canonical !== t.name) this.log(`the server has its own ${String(canonical)}; Spillway's is listed as ${String(t.name)}`);
        tools.push(t);
      }
    }
    this.toClient.writeLine(JSON.stringify(msg));
  }

  /**
   * Cheap bound: a tokenizer never makes more tokens than the bytes it reads, so a line no longer
   * than the limit in bytes cannot be over it, and most results stop here without being parsed. One
   * linear scan sends a small line that may carry base64 to the guard anyway: the model can only read
   * it as text (MCP image and audio blocks that fit still pass: the guard leaves media alone).
   */
  /** A tool's name as the client names it, for the spill's sidecar and message (the server's own name stays for lookups). */
  private recordedName(tool: string): string {
    // Without --server-name the client's config key is unknown (the server's own name from
    // `initialize` is often not it: "secure-filesystem-server" behind a key "fs"), so the bare name
    // is recorded rather than a guess; the index still joins the row to the client's call by its id.
    if (!this.opts.serverName) return tool;
    return clientToolName(this.opts.client ?? 'generic', this.opts.serverName, tool);
  }

  /**
   * The tools a spill message sends the model to. Behind the proxy the way in is the drill-down
   * tools; without them (`--no-drill-down`) the client's own, and never a `spillway_*` name, since a
   * tool of that name here would be the server's.
   */
  private get readMore(): ReadMoreTools {
    if (this.local) return 'drill-down';
    return this.opts.client === 'claude-code' ? 'claude-code' : 'files';
  }

  /** The rule of a server tool: matched on the client's name for it, `server/tool`, `server/*` and `*`. */
  private ruleOf(tool: string | undefined): { rule: CallRule; summarize?: SummarizeHook; limit: number } | undefined {
    if (!this.opts.rules || tool === undefined) return undefined;
    let r = this.rules.get(tool);
    if (!r) {
      const rule = this.opts.rules.forCall(tool, this.opts.serverName ?? this.serverName, this.recordedName(tool));
      if (rule.error) this.log(rule.error);
      r = { rule, summarize: mcpAwareSummarizer(rule.summarize), limit: resolveLimit({ limitTokens: rule.limitTokens, contextWindowTokens: this.opts.contextWindowTokens }) };
      this.rules.set(tool, r);
    }
    return r;
  }

  /** The tool argument that carries the caller's focus for this tool: its rule's, else `--focus-arg`. */
  private focusArgOf(tool: string): string | undefined {
    return this.opts.rules ? this.ruleOf(tool)?.rule.focusArg : this.opts.focusArg;
  }

  private fitsAsIs(line: Buffer, tool?: string): boolean {
    return line.length <= (this.ruleOf(tool)?.limit ?? this.fastPassBytes) && !mayCarryInlineAssets(line);
  }

  private onToolResult(pending: Pending, result: Obj, line: Buffer): void {
    const toolName = pending.toolName ?? 'tool';
    const info = this.tools.get(toolName);
    if (pending.cancelled) return; // the client gave up on it: no response, as the spec asks
    if (info?.app) return this.toClient.writeLine(line);
    if (this.fitsAsIs(line, toolName)) return this.toClient.writeLine(line);
    const rule = this.ruleOf(toolName);
    const work = (async () => {
      const ctx: ToolCallContext = { toolName: this.recordedName(toolName), toolInput: pending.toolInput, intent: pending.intent, call: pending.call };
      if (info?.outputSchema && result.structuredContent !== undefined) {
        info.validate ??= this.validatorFor(info.outputSchema).catch((err: unknown) => {
          this.log(`cannot compile the output schema of ${toolName}: ${errMessage(err)}`);
          return undefined;
        });
        const validate = await info.validate;
        if (validate) ctx.outputSchema = { validate };
      }
      ctx.project = this.opts.projectionFor?.(toolName);
      const replaced = await guardToolResult(result, ctx, {
        guard: this.opts.guard,
        session: this.session,
        limitTokens: rule ? rule.rule.limitTokens : this.opts.limitTokens,
        contextWindowTokens: this.opts.contextWindowTokens,
        summarize: rule ? rule.summarize : this.summarize,
        ...(rule ? { rule: rule.rule.rule } : {}),
        client: this.opts.client,
        readMore: this.readMore,
        drillDownHint: this.local?.hint ? (g) => this.local!.hint!(g) : undefined,
        drillDownNames: this.local?.names ? () => this.local!.names!() : undefined,
        log: (m) => this.log(m),
      });
      if (!replaced) return this.toClient.writeLine(line);
      const spill = isObj(replaced._meta) ? replaced._meta['spillway/spill'] : undefined;
      if (isObj(spill)) this.log(`spilled ${toolName} (~${String(spill.tokens)} tokens > ${String(spill.limitTokens)}) to ${String(spill.payloadPath ?? '(not saved)')}`);
      this.toClient.writeLine(resultResponse(pending.id, replaced));
    })().catch((err: unknown) => {
      // guardToolResult does not throw; this is the last net, and it still never forwards the oversized line.
      this.log(`internal error on ${toolName}: ${errMessage(err)}`);
      this.toClient.writeLine(
        resultResponse(pending.id, {
          content: [{ type: 'text', text: `Spillway: the result of ${toolName} was too large and an internal error kept it from being saved.` }],
          isError: true,
        }),
      );
    });
    this.track(work);
  }
}

/** What an MCP client's `clientInfo.name` says it is, as the sidecar's `client`. */
export function clientOfName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const id = CLIENT_IDS.find((c) => ADAPTERS[c].mcp.names.includes(name));
  return id ?? name.slice(0, 100);
}

/**
 * The client's id of a tools/call, from its `_meta`, as seen in runs of the real clients:
 * Claude Code 2.1.328 sends `{"claudecode/toolUseId": "toolu_…", progressToken}`, the transcript's
 * tool_use id; Codex 0.171.0 sends `{callId: "call_…", sessionId, threadId, itemId, …}`, the
 * rollout's call_id and thread. A client that sends neither leaves the join to be inferred.
 */
export function callOfRequest(params: Obj, clientName: string | undefined, cwd: string): ToolCallRef {
  const meta = isObj(params._meta) ? params._meta : {};
  const s = (v: unknown) => (typeof v === 'string' && v && v.length <= 512 ? v : undefined);
  // Each client's own key (its adapter's `mcp.callIdKey`), then the generic one.
  let toolCallId: string | undefined;
  for (const id of CLIENT_IDS) toolCallId ??= ADAPTERS[id].mcp.callIdKey ? s(meta[ADAPTERS[id].mcp.callIdKey!]) : undefined;
  toolCallId ??= s(meta.toolCallId);
  return { client: clientOfName(clientName), ...(toolCallId ? { toolCallId } : {}), ...(s(meta.sessionId) ? { clientSessionId: s(meta.sessionId) } : {}), cwd };
}

/** What a streamed spill holds when it is not exactly the `result` value. */
function savedNote(saved: 'value' | 'whole line' | 'value, unterminated'): string {
  if (saved === 'whole line') return 'the whole JSON-RPC message as received: its envelope could not be cut off';
  if (saved === 'value, unterminated') return 'from its value to the end of the line, as received: the message did not end as a JSON-RPC response should';
  return 'the result value, exactly';
}

export function runMcpProxy(opts: McpProxyOptions): { proxy: McpProxy; done: Promise<number> } {
  const proxy = new McpProxy(opts);
  return { proxy, done: proxy.run() };
}
