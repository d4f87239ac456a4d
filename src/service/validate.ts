import { z } from 'zod';
import { ALL_STRATEGIES } from '../pipeline/estimate/options.js';
import { PROFILES } from '../pipeline/types.js';
import { CONTENT_KINDS } from '../pipeline/vocab.js';
// The index pages at most this many rows; a bigger request is refused here rather than cut there.
import { MAX_PAGE_ROWS } from '../index/index.js';
import { MAX_TUNER_SESSIONS_PER_PAGE } from '../timeline/index.js';
import type { GuardAction, StrategyName } from '../pipeline/types.js';
// A rule's change is checked by the rules files' own schema: the inspector cannot write what `config set` would refuse.
import { ruleMatchSchema, ruleSchema } from '../integrations/rules/config.js';
import { RULE_KEYS } from '../integrations/rules/match.js';
import {
  MAX_READ_WINDOW_BYTES,
  MAX_READ_WINDOW_LINES,
  METHOD_NAMES,
  ServiceError,
  type MethodName,
  type MethodRequest,
} from './contract.js';

/**
 * Run-time validation of every method's argument: what crosses IPC or HTTP is untrusted.
 * Objects are strict (an unknown key is a typo or an attack, either way a 400), strings are
 * bounded, numbers are finite non-negative integers where they are offsets or counts.
 */

/** Largest text accepted inline by `estimate` / `analyze` (chars). */
export const MAX_INLINE_TEXT_CHARS = 64 * 1024 * 1024;
/** Largest dropped file `analyze` reads (bytes), whether sent inline or by path. */
export const MAX_ANALYZE_BYTES = 100 * 1024 * 1024;
/** Longest id, name or focus accepted. */
export const MAX_ID_CHARS = 1024;
export const MAX_FOCUS_CHARS = 4_000;
export const MAX_TEMPLATE_BODY_CHARS = 256 * 1024;
/** Largest asset returned inline as base64 by readAsset. */
export const MAX_ASSET_INLINE_BYTES = 32 * 1024 * 1024;
/** Largest histogram the limit tuner will build. */
export const MAX_TUNER_BUCKETS = 200;
/** Largest limit anyone could mean (tokens). */
export const MAX_LIMIT_TOKENS = 100_000_000;

const ACTIONS = ['pass', 'spill', 'inline-assets'] as const satisfies readonly GuardAction[];

const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
const id = z.string().min(1).max(MAX_ID_CHARS).regex(NO_CONTROL, 'must not contain control characters');
const nonNegInt = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const posInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
/** Replays one timeline request may ask for (each is one pass over the session's calls). */
export const MAX_TIMELINE_SCENARIOS = 16;
const strategy = z.enum(ALL_STRATEGIES as unknown as [StrategyName, ...StrategyName[]]);
const profile = z.enum(PROFILES as unknown as ['o200k', 'cl100k', 'claude']);
const limitTokens = z.number().int().positive().max(MAX_LIMIT_TOKENS);
const price = z.number().finite().nonnegative().max(1_000_000);
const pathStr = z.string().min(1).max(4096);
/** Template names become file names: keep them plain. */
export const TEMPLATE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const templateName = z.string().regex(TEMPLATE_NAME_RE, 'letters, digits, "-" and "_" only (at most 64), starting with a letter or digit');
const providerName = z.string().min(1).max(64).regex(/^[A-Za-z0-9._-]+$/);
const modelName = z.string().min(1).max(200).regex(NO_CONTROL);
const sha256 = z
  .string()
  .regex(/^[0-9a-fA-F]{32,64}$/, 'must be a sha256 hex digest (or its 32-char prefix)')
  .transform((s) => s.toLowerCase());
const empty = z.strictObject({});
const configChange = z
  .strictObject({ tool: ruleMatchSchema, set: ruleSchema.optional(), unset: z.array(z.enum(RULE_KEYS)).max(RULE_KEYS.length).optional() })
  .refine((c) => Object.keys(c.set ?? {}).length + (c.unset?.length ?? 0) > 0, { message: 'give a setting to set or to unset' })
  .refine((c) => !(c.unset ?? []).some((k) => c.set?.[k] !== undefined), { message: 'a setting is either set or unset, not both' });
const configTarget = {
  scope: z.enum(['user', 'project']),
  project: pathStr.optional(),
  change: configChange,
};
const needsProject = [(r: { scope: string; project?: string }) => r.scope !== 'project' || r.project !== undefined, { message: 'the project scope needs the project folder' }] as const;
/** What previewConfig hands applyConfig: a file's hash as read (`absent`: no file). */
const rulesHash = z.string().regex(/^(absent|sha256:[0-9a-f]{64})$/, 'a hash from previewConfig');

const schemas = {
  getInfo: empty,
  listRoots: empty,
  addRoot: z.strictObject({ path: pathStr }),
  removeRoot: z.strictObject({ id }),
  reindex: z.strictObject({ rootId: id.optional() }),
  listSessions: z.strictObject({ rootId: id.optional() }),
  listPayloads: z
    .strictObject({
      sessionId: id.optional(),
      rootId: id.optional(),
      query: z.string().max(1_000).optional(),
      tool: z.string().min(1).max(256).optional(),
      action: z.enum(ACTIONS).optional(),
      kind: z.enum(CONTENT_KINDS).optional(),
      minTokens: nonNegInt.optional(),
      maxTokens: nonNegInt.optional(),
      sort: z
        .strictObject({
          field: z.enum(['createdAt', 'tokens', 'entered', 'full', 'bytes', 'tool', 'assetCount']),
          dir: z.enum(['asc', 'desc']),
        })
        .optional(),
      offset: nonNegInt.optional(),
      limit: z.number().int().min(1).max(MAX_PAGE_ROWS).optional(),
    })
    .refine((r) => r.minTokens === undefined || r.maxTokens === undefined || r.minTokens <= r.maxTokens, {
      message: 'minTokens must be <= maxTokens',
    }),
  getPayload: z.strictObject({ id }),
  readPayload: z
    .strictObject({
      id,
      variant: z.enum(['raw', 'linked']).optional(),
      start: nonNegInt.optional(),
      end: nonNegInt.optional(),
      startLine: nonNegInt.optional(),
      lineCount: z.number().int().min(1).max(MAX_READ_WINDOW_LINES).optional(),
    })
    .refine((r) => !((r.start !== undefined || r.end !== undefined) && (r.startLine !== undefined || r.lineCount !== undefined)), {
      message: 'give a byte window (start/end) or a line window (startLine/lineCount), not both',
    })
    .refine((r) => r.start === undefined || r.end === undefined || r.end >= r.start, { message: 'end must be >= start' })
    .refine((r) => r.start === undefined || r.end === undefined || r.end - r.start <= MAX_READ_WINDOW_BYTES, {
      message: `a byte window is at most ${MAX_READ_WINDOW_BYTES} bytes`,
    }),
  readAsset: z.strictObject({ payloadId: id, sha256, maxBytes: z.number().int().nonnegative().max(MAX_ASSET_INLINE_BYTES).optional() }),
  revealPath: z.strictObject({ payloadId: id, sha256: sha256.optional() }),
  estimate: z
    .strictObject({
      payloadId: id.optional(),
      text: z.string().max(MAX_INLINE_TEXT_CHARS).optional(),
      path: pathStr.optional(),
      profile: profile.optional(),
      exact: z.boolean().optional(),
    })
    .refine((r) => [r.payloadId, r.text, r.path].filter((x) => x !== undefined).length === 1, {
      message: 'give exactly one of payloadId, text or path',
    }),
  analyze: z
    .strictObject({
      name: z.string().min(1).max(512).regex(NO_CONTROL),
      path: pathStr.optional(),
      base64: z
        .string()
        .max(Math.ceil(MAX_ANALYZE_BYTES / 3) * 4 + 4)
        .regex(/^[A-Za-z0-9+/=\s_-]*$/, 'not base64')
        .optional(),
      text: z.string().max(MAX_INLINE_TEXT_CHARS).optional(),
      limitTokens: limitTokens.optional(),
      contextWindowTokens: posInt.optional(),
      profile: profile.optional(),
    })
    .refine((r) => [r.path, r.base64, r.text].filter((x) => x !== undefined).length === 1, {
      message: 'give exactly one of path, base64 or text',
    }),
  summarize: z.strictObject({
    payloadId: id,
    focus: z.string().max(MAX_FOCUS_CHARS).optional(),
    provider: providerName.optional(),
    model: modelName.optional(),
    template: templateName.optional(),
  }),
  scoreSummaries: z.strictObject({ payloadId: id, focus: z.string().max(MAX_FOCUS_CHARS).optional() }),
  listProviders: empty,
  listTemplates: empty,
  saveTemplate: z.strictObject({ name: templateName, body: z.string().max(MAX_TEMPLATE_BODY_CHARS) }),
  deleteTemplate: z.strictObject({ name: templateName }),
  limitTuner: z.strictObject({
    sessionId: id.optional(),
    rootId: id.optional(),
    strategy: strategy.optional(),
    profile: profile.optional(),
    limitTokens,
    contextWindowTokens: posInt.optional(),
    buckets: z.number().int().min(1).max(MAX_TUNER_BUCKETS).optional(),
    offset: nonNegInt.optional(),
    maxSessions: z.number().int().min(1).max(MAX_TUNER_SESSIONS_PER_PAGE).optional(),
  }),
  // The limit is optional: a report opened before anything set one replays the guard's default.
  wasteReport: z.strictObject({
    sessionId: id,
    limitTokens: limitTokens.optional(),
    strategy: strategy.optional(),
    profile: profile.optional(),
  }),
  toolEvidence: z.strictObject({ rootId: id.optional() }),
  // By date needs the date: an ISO date or time that parses (a typo is a 400, never "everything after").
  compareSessions: z
    .strictObject({
      rootId: id.optional(),
      tool: z.string().min(1).max(MAX_ID_CHARS).regex(NO_CONTROL, 'a tool name may not hold control characters').optional(),
      by: z.enum(['rule', 'date']),
      since: z
        .string()
        .max(64)
        .regex(/^\d{4}-\d{2}-\d{2}([T ][0-9:.]+(Z|[+-]\d{2}:?\d{2})?)?$/, 'an ISO date (2026-12-01) or time (2026-12-01T10:00:00Z)')
        .refine((d) => !Number.isNaN(Date.parse(d)), 'not a date')
        .optional(),
    })
    .refine((r) => r.by !== 'date' || r.since !== undefined, { message: 'by "date" needs since', path: ['since'] }),
  getTimeline: z.strictObject({
    sessionId: id,
    limits: z.array(posInt).max(MAX_TIMELINE_SCENARIOS).optional(),
    keepLast: z.array(z.number().int().nonnegative().max(1_000_000)).max(MAX_TIMELINE_SCENARIOS).optional(),
    prices: z.strictObject({ input: price.optional(), cacheWrite: price.optional(), cacheRead: price.optional(), output: price.optional() }).optional(),
    autoCompactPct: z.number().finite().gt(0).lt(100).optional(),
    autoCompactDisabled: z.boolean().optional(),
    autoCompactLimit: posInt.optional(),
    strategy: strategy.optional(),
    profile: profile.optional(),
    replayOnly: z.boolean().optional(),
  }),
  previewConfig: z.strictObject(configTarget).refine(...needsProject),
  applyConfig: z.strictObject({ ...configTarget, baseHash: rulesHash, proposedHash: rulesHash }).refine(...needsProject),
} satisfies { [M in MethodName]: z.ZodType<unknown> };

// Compile-time check: each schema's output is assignable to the contract's request type.
type Out<M extends MethodName> = z.output<(typeof schemas)[M]>;
type Check = { [M in MethodName]: Out<M> extends MethodRequest<M> ? true : M };
const _check: { [M in MethodName]: true } = null as unknown as Check;
void _check;

export const METHOD_SCHEMAS: Readonly<Record<MethodName, z.ZodType<unknown>>> = schemas;

const METHOD_SET: ReadonlySet<string> = new Set(METHOD_NAMES);
export function isMethodName(name: unknown): name is MethodName {
  return typeof name === 'string' && METHOD_SET.has(name);
}

/** Validate `input` for `method`; `undefined`/`null` count as `{}`. Throws ServiceError('BAD_REQUEST'). */
export function validateRequest<M extends MethodName>(method: M, input: unknown): MethodRequest<M> {
  const schema = METHOD_SCHEMAS[method];
  if (!schema) throw new ServiceError('NOT_FOUND', `unknown method ${JSON.stringify(method)}`);
  const res = schema.safeParse(input ?? {});
  if (!res.success) {
    const detail = res.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.length ? i.path.join('.') : '(request)'}: ${i.message}`)
      .join('; ');
    throw new ServiceError('BAD_REQUEST', `${method}: ${detail}`);
  }
  return res.data as MethodRequest<M>;
}
