import crypto from 'node:crypto';
import type { ContentKind, Estimate, PayloadMeta, ToolCallRef } from '../types.js';
import { inputHash, sanitizeToolName } from '../layout.js';
import { jsonSafe } from '../serialize.js';
import { LocalSpillStore } from './local.js';
import { commitSpill, nameCandidates } from './publish.js';
import type { NameCandidate } from './seam.js';

/**
 * A spill whose payload is never held whole: the bytes arrive as chunks (an MCP message over the
 * proxy's inspection limit, read from the server's pipe) and are written as they come to a temp
 * file of the session, hashed on the way, then published under a fresh name and committed by its
 * sidecar, like every spill (store/local.ts: temp file + link, create-only; publish.ts: the sidecar last).
 * Memory is the chunks the caller has not handed over yet plus one write buffer of the store.
 *
 * | call | for |
 * | --- | --- |
 * | {@link spillStream} | write the chunks of `body` as one spill, with a sidecar and the message the caller builds |
 */

/** Which call a spill answers: known only once the message has ended when its id comes last. */
export interface StreamedSpillAbout {
  toolName: string;
  toolInput?: unknown;
  intent?: string;
  call?: ToolCallRef;
}

export interface StreamedSpill {
  sessionPath: string;
  /** Asked once the body has ended, before the payload is named. */
  about: () => StreamedSpillAbout;
  /** The payload's bytes, in order; a thrown error abandons the spill (the temp file is removed). */
  body: AsyncIterable<Uint8Array>;
  /** The payload file's extension, e.g. `.json`. */
  suffix: string;
  kind: ContentKind;
  limitTokens: number;
  /** The estimate, from the size alone (nobody read the bytes). */
  estimateOf: (bytes: number) => Estimate;
  /** The model's message, for the payload's final place. */
  messageFor: (w: { payloadPath: string; sessionPath: string; bytes: number; estimate: Estimate }) => string;
  /** What the sidecar's `errors` should say, asked once the body has ended. */
  notes?: () => string[];
  now?: () => Date;
}

export interface StreamedSpillResult {
  payloadPath: string;
  metaPath?: string;
  bytes: number;
  sha256: string;
  estimate: Estimate;
  message: string;
  /** Set when the sidecar could not be written (the payload is still at payloadPath). */
  error?: unknown;
}

/** Write `s.body` as one spill in the session folder. Throws when the payload cannot be written. */
export async function spillStream(s: StreamedSpill): Promise<StreamedSpillResult> {
  const store = new LocalSpillStore(s.sessionPath);
  const time = (s.now ?? (() => new Date()))();
  let about: StreamedSpillAbout | undefined;
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  async function* counted(): AsyncGenerator<Uint8Array> {
    for await (const chunk of s.body) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      yield chunk;
    }
  }
  let used = false;
  // Named only when the store asks for names, after the body has been written: the call is known by then.
  let names: Generator<NameCandidate, never> | undefined;
  const fresh: Iterable<NameCandidate> = {
    [Symbol.iterator]: () => {
      about ??= s.about();
      return (names ??= nameCandidates({ time, tool: sanitizeToolName(about.toolName), inputHash: inputHash(about.toolInput) }, s.suffix));
    },
  };
  const published = await store.putPayload(fresh, () => {
    // The body is a stream: it can be read once. The local store asks once; a second ask is a bug, said loudly.
    if (used) throw new Error('a streamed payload cannot be written twice');
    used = true;
    return counted();
  });
  const sha256 = hash.digest('hex');
  const estimate = s.estimateOf(bytes);
  const notes = s.notes?.() ?? [];
  const a = (about ??= s.about());
  const record = (c: NameCandidate) => {
    const payloadPath = store.describe(c.key);
    const message = s.messageFor({ payloadPath, sessionPath: store.location, bytes, estimate });
    const fileName = c.key.slice(c.key.lastIndexOf('/') + 1);
    const meta: PayloadMeta = {
      version: 1,
      id: c.stem,
      createdAt: time.toISOString(),
      tool: a.toolName,
      ...(a.toolInput !== undefined ? { toolInput: jsonSafe(a.toolInput) } : {}),
      ...(a.intent ? { intent: a.intent } : {}),
      action: 'spill',
      payloadFile: fileName,
      payloadIsOriginal: true,
      kind: s.kind,
      bytes,
      // Not counted: that would mean decoding the whole payload. Bytes are an upper bound.
      chars: bytes,
      sha256,
      estimate,
      estimates: { [estimate.strategy]: estimate.tokens },
      limitTokens: s.limitTokens,
      assets: [],
      message,
      summaryRuns: [],
      ...(notes.length ? { errors: notes } : {}),
      origin: 'bytes',
      ...a.call,
    };
    return { message, json: JSON.stringify(meta, null, 2) + '\n' };
  };
  const c = await commitSpill(store, published, fresh, record);
  return {
    payloadPath: store.describe(c.payload.key),
    ...(c.metaKey ? { metaPath: store.describe(c.metaKey) } : {}),
    bytes,
    sha256,
    estimate,
    message: c.message,
    ...(c.error !== undefined ? { error: c.error } : {}),
  };
}
