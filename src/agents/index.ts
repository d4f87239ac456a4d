/**
 * The agent clients, one adapter each (./adapter.ts), in one registry: a new client is a folder
 * `<client>/` and one line in `ADAPTERS` (and its label in ./clients.ts); the compiler lists what
 * the adapter lacks, and code outside src/agents asks here rather than naming a client.
 *
 * | export | for |
 * | --- | --- |
 * | `ADAPTERS`, `adapterOf(id)` | a client's adapter (undefined for an id we do not know: never another client's) |
 * | `recogniseTranscript(name, head)` | which client wrote a transcript, from its name and first bytes |
 * | `agentHomeFolders(home, env)` | every client's default session folders under a home |
 * | `GUARDED_HOMES`, `DATABASE_NAMES` | client homes the walker must not wander in; the database files it sniffs (`opencode.db`) |
 * | `CLIENT_RULES`, `rulesOf(client)` | the rules of a client, keyed as the index names clients |
 * | `clientGives(client, shape, model)` | what the client would put in context for a result (tokens, rule, provenance) |
 * | `imageSize`, `imagesInText`, `imageTokens`, `providerOf` | images priced by pixels (media.ts) |
 */
import type { AgentEnv, ClientAdapter, Prices } from './adapter.js';
import { CLAUDE_CODE } from './claude-code/index.js';
import { type ClientId, isClientId } from './clients.js';
import { CODEX } from './codex/index.js';
import { GEMINI_CLI } from './gemini-cli/index.js';
import { OPENCODE } from './opencode/index.js';
import { type AsClient, type ClientRule, type ClientRules, type ResultShape, asClient, whole } from './rules.js';
import { providerOf } from './media.js';

/** The registry: one line per client. `satisfies` makes a client of ./clients.ts without an adapter, or an adapter without a member, a compile error. */
export const ADAPTERS = {
  'claude-code': CLAUDE_CODE,
  codex: CODEX,
  gemini: GEMINI_CLI,
  opencode: OPENCODE,
} as const satisfies Record<ClientId, ClientAdapter>;

/** Prices for a session of no client we know: Anthropic's list prices, the dearest of the three, so a cost is not understated. */
export const UNKNOWN_CLIENT_PRICES: Prices = { input: 5, cacheWrite: 6.25, cacheRead: 0.5, output: 25 };

/** @deprecated the registry's id type; kept as the name the index used. */
export type AgentClient = ClientId;

export function adapterOf(id: string | null | undefined): ClientAdapter | undefined {
  return isClientId(id) ? ADAPTERS[id] : undefined;
}

/** The adapters in the order their `recognise` tests must run (a stricter test before a looser one). */
const BY_PRIORITY: ReadonlyArray<readonly [ClientId, ClientAdapter]> = (Object.entries(ADAPTERS) as Array<[ClientId, ClientAdapter]>).sort(
  (a, b) => a[1].files.recognisePriority - b[1].files.recognisePriority,
);

/** Which client wrote a transcript named `name` opening with `head`; null when none we know. */
export function recogniseTranscript(name: string, head: string): ClientId | null {
  for (const [id, a] of BY_PRIORITY) if (a.files.recognise(name, head)) return id;
  return null;
}

/** Every client's default session folders under `home`, in registry order (not checked to exist). */
export function agentHomeFolders(home: string, env: AgentEnv): string[] {
  return Object.values(ADAPTERS).flatMap((a: ClientAdapter) => a.files.homeRoots(home, env));
}

/** Client homes whose other folders hold settings and credentials, never walked into (`.gemini` outside `tmp`). */
export const GUARDED_HOMES: ReadonlyArray<{ dir: string; chatDirs: readonly string[]; chatFiles?: readonly string[] }> = Object.values(ADAPTERS).flatMap((a: ClientAdapter) =>
  a.files.guardedHome ? [a.files.guardedHome] : [],
);

/** File names of the clients that keep every session in one database (`opencode.db`): the walker sniffs these too. */
export const DATABASE_NAMES: ReadonlySet<string> = new Set(Object.values(ADAPTERS).flatMap((a: ClientAdapter) => (a.files.database ? [a.files.database.name] : [])));

export const CLIENT_RULES = Object.fromEntries(Object.entries(ADAPTERS).map(([id, a]) => [id, a.rules])) as Record<ClientId, ClientRules>;

/** A rule by its id (`claude-code.bash`): a ledger row names the rule, its label and evidence are read here, so they stay current. */
export function ruleById(id: string): ClientRule | undefined {
  for (const r of Object.values(CLIENT_RULES)) {
    const rule = r.rules.find((x) => x.id === id);
    if (rule) return rule;
  }
  return undefined;
}

export function rulesOf(client: string | undefined): ClientRules | undefined {
  return adapterOf(client)?.rules;
}

/** What `client` would put in context for a result; a client with no rules passes it whole (said so). */
export function clientGives(client: string | undefined, r: ResultShape, model?: string): AsClient {
  const provider = providerOf(client, model);
  const rules = rulesOf(client);
  if (rules) return asClient(rules, r, provider);
  const w = whole(r, provider);
  return { ...w, ruleId: 'unknown.whole', provenance: 'inferred', evidence: 'no rules known for this client: the result whole' };
}

export { asClient, imagesTokens, type AsClient, type ClientRule, type ClientRules, type ResultShape, type RuleProvenance, type Treatment } from './rules.js';
export { imageSize, imageSizeOfBase64, imageTokens, imagesInText, providerOf, type ImageInfo, type ImageSize, type Provider } from './media.js';
export { CLAUDE_CODE_RULES } from './claude-code/rules.js';
export { CODEX_RULES } from './codex/rules.js';
export { GEMINI_CLI_RULES } from './gemini-cli/rules.js';
export { OPENCODE_RULES } from './opencode/rules.js';
export { readAccessesOf, shellReads, shellWords, type ReadAccess, type ReadPart, type ReadVia } from './readback.js';
export { CLIENTS, CLIENT_IDS, clientName, isClientId, type ClientId, type ClientMeta } from './clients.js';
export type { AgentEnv, ClientAdapter, ClientContextRule, ClientFiles, ClientMcp, ContextInputs, ContextSettings, McpShape, Prices } from './adapter.js';
export { unknownContext } from './context.js';
