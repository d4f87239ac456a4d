/**
 * The agent clients, one entry each (a registry: a fourth client is one more row, and the compiler
 * lists what it lacks). Today an entry is its own caps on tool results (`<client>/rules.ts`); the
 * rest of a client's adapter (its transcript reader, its context rule) is to move here too.
 *
 * | export | for |
 * | --- | --- |
 * | `CLIENT_RULES`, `rulesOf(client)` | the rules of a client, keyed as the index names clients |
 * | `clientGives(client, shape, model)` | what the client would put in context for a result (tokens, rule, provenance) |
 * | `imageSize`, `imagesInText`, `imageTokens`, `providerOf` | images priced by pixels (media.ts) |
 */
import { CLAUDE_CODE_RULES } from './claude-code/rules.js';
import { CODEX_RULES } from './codex/rules.js';
import { GEMINI_CLI_RULES } from './gemini-cli/rules.js';
import { type AsClient, type ClientRule, type ClientRules, type ResultShape, asClient, whole } from './rules.js';
import { providerOf } from './media.js';

export type AgentClient = 'claude-code' | 'codex' | 'gemini';

export const CLIENT_RULES: Record<AgentClient, ClientRules> = {
  'claude-code': CLAUDE_CODE_RULES,
  codex: CODEX_RULES,
  gemini: GEMINI_CLI_RULES,
};

/** A rule by its id (`claude-code.bash`): a ledger row names the rule, its label and evidence are read here, so they stay current. */
export function ruleById(id: string): ClientRule | undefined {
  for (const r of Object.values(CLIENT_RULES)) {
    const rule = r.rules.find((x) => x.id === id);
    if (rule) return rule;
  }
  return undefined;
}

export function rulesOf(client: string | undefined): ClientRules | undefined {
  return client !== undefined && client in CLIENT_RULES ? CLIENT_RULES[client as AgentClient] : undefined;
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
export { readAccessesOf, shellReads, shellWords, type ReadAccess, type ReadPart, type ReadVia } from './readback.js';
