/**
 * A client's own treatment of a tool result, as data: what the agent client would have put in the
 * model's context for a result had Spillway not been there (Claude Code persists a big Bash output
 * and shows a preview, Codex cuts shell output to its head and tail...). Each client has one module
 * of rules (`<client>/rules.ts`), each rule labelled with how we know it:
 *
 * | provenance | meaning |
 * | --- | --- |
 * | `observed` | seen in a run of the real client binary (the evidence names the run) |
 * | `reported` | a threshold the client's documentation or its users report, not yet checked here |
 * | `inferred` | read in the client's code, or our best reading of its behaviour |
 *
 * `asClient(rules, result, provider)` is the one verb: a pure function from a result's shape to the
 * tokens the client would put in context, with the rule that decided and its provenance.
 */
import { type ImageInfo, type Provider, imageTokens } from './media.js';

export type RuleProvenance = 'observed' | 'reported' | 'inferred';

/** What a rule needs to know of a tool result: its size as text and the images it carries. */
export interface ResultShape {
  /** The client's tool name (`Bash`, `mcp__fs__read_text_file`, `shell`, `run_shell_command`). */
  tool: string;
  /** Characters of the result's text, images left out. */
  chars: number;
  /** Spillway's estimate of that text, in tokens. */
  tokens: number;
  /** Lines of the text. */
  lines: number;
  images: ImageInfo[];
}

/** How the client hands a result over. */
export type Treatment = 'whole' | 'persisted' | 'truncated' | 'error';

export interface ClientRule {
  /** Stable id, `<client>.<rule>`: what a ledger row names. */
  id: string;
  /** The tools it covers, in words. */
  covers: string;
  provenance: RuleProvenance;
  /** How we know: the run that showed it, the code that says it, or who reports it. */
  evidence: string;
  applies(tool: string): boolean;
  /** Tokens the client puts in context for this result (text and images), and how it treated it. */
  give(r: ResultShape, provider: Provider): { tokens: number; treatment: Treatment };
}

export interface ClientRules {
  client: string;
  /**
   * Whether Spillway's guard can reach this tool's results in the client at all: through a hook
   * (every tool), or else only through the MCP proxy (MCP tools). A guard replay leaves the rest as
   * the client gave them, so replaying a session at its own limit reproduces what was measured.
   */
  guardReaches: (tool: string) => boolean;
  /** First rule that applies wins; the last one applies to every tool. */
  rules: readonly ClientRule[];
}

export interface AsClient {
  tokens: number;
  treatment: Treatment;
  ruleId: string;
  provenance: RuleProvenance;
  evidence: string;
}

/** All images of a result, priced by pixels. */
export function imagesTokens(images: readonly ImageInfo[], provider: Provider): number {
  let n = 0;
  for (const i of images) n += imageTokens(provider, i.size);
  return n;
}

/** The text's tokens when only `keptChars` of it are shown: its own density, not a flat chars/4. */
export function keptTokens(r: ResultShape, keptChars: number): number {
  if (r.chars <= 0) return 0;
  return Math.ceil(r.tokens * Math.min(1, keptChars / r.chars));
}

/** A client-written note around a cut (the path, the sizes): about this many tokens. */
export const NOTE_TOKENS = 60;

/** Text whole, images by pixels: what a client that cuts nothing gives. */
export function whole(r: ResultShape, provider: Provider): { tokens: number; treatment: Treatment } {
  return { tokens: r.tokens + imagesTokens(r.images, provider), treatment: 'whole' };
}

export function asClient(rules: ClientRules, r: ResultShape, provider: Provider): AsClient {
  const rule = rules.rules.find((x) => x.applies(r.tool)) ?? rules.rules[rules.rules.length - 1]!;
  const g = rule.give(r, provider);
  return { tokens: g.tokens, treatment: g.treatment, ruleId: rule.id, provenance: rule.provenance, evidence: rule.evidence };
}
