import fs from 'node:fs/promises';
import type { Command } from 'commander';
import {
  DEFAULT_PROFILE,
  estimateForDecision,
  guardLargeResult,
  normalizeGuardOptions,
  type GuardResult,
  type Profile,
  type StrategyName,
} from '../../pipeline/index.js';
import { addLimitOptions, guardSettingsOf } from '../../integrations/options.js';
import { GuardRules, loadRules, ruleFlagsOf } from '../../integrations/rules/index.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

export interface GuardCommandOptions {
  session: string;
  tool?: string;
  input?: string;
  intent?: string;
  limit?: number;
  contextWindow?: number;
  profile?: Profile;
  strategy?: StrategyName;
  json?: boolean;
  summarizer?: string;
  provider?: string;
  model?: string;
  template?: string;
  store?: string;
  cutMedia?: boolean;
}

/** A usage error: the CLI prints it and exits 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * The summarize hook for `spillway guard`. Extension point: the summaries work registers
 * `--summarizer/--provider/--model` on the command (see {@link register}) and builds the hook here.
 */

async function readInput(file: string | undefined): Promise<Buffer> {
  if (file === undefined || file === '-') {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
}

function parseToolInput(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch (err) {
    throw new UsageError(`--input must be JSON (${(err as Error).message}); quote a plain string as '"text"'`);
  }
}

/** The `--json` line: one object, whatever the action. */
export function guardJson(result: GuardResult | null, pass: { strategy: StrategyName; tokens: number }) {
  if (!result) return { action: 'pass', message: null, estimate: pass, payloadPath: null, linkedPath: null, assets: [] };
  return {
    action: result.action,
    message: result.message,
    estimate: { strategy: result.estimate.strategy, tokens: result.estimate.tokens },
    payloadPath: result.payloadPath ?? null,
    linkedPath: result.linkedPath ?? null,
    metaPath: result.metaPath ?? null,
    assets: result.assets.map((a) => ({ path: a.path, mimeType: a.mimeType, bytes: a.bytes, sha256: a.sha256 })),
    errors: result.errors,
  };
}

export async function runGuard(file: string | undefined, opts: GuardCommandOptions): Promise<void> {
  const toolInput = parseToolInput(opts.input);
  const data = await readInput(file);
  // The tool's rule from the rules files of the folder this runs in, after the flags (docs/config.md).
  const rules = new GuardRules(await loadRules(process.cwd(), process.env), ruleFlagsOf(opts));
  const rule = rules.forCall(opts.tool ?? 'tool');
  for (const e of [...rules.errors, ...(rule.error ? [rule.error] : [])]) process.stderr.write(`spillway guard: ${terminalSafe(e)}\n`);
  const focus = rule.focusArg && toolInput && typeof toolInput === 'object' ? (toolInput as Record<string, unknown>)[rule.focusArg] : undefined;
  const intent = opts.intent ?? (typeof focus === 'string' && focus.trim() ? focus.trim() : undefined);
  const options = normalizeGuardOptions({
    ...guardSettingsOf(opts, DEFAULT_PROFILE),
    limitTokens: rule.limitTokens,
    summarize: rule.summarize,
    rule: rule.rule,
    sessionPath: opts.session,
    toolName: opts.tool,
    toolInput,
    intent,
  });
  const result = await guardLargeResult(data, options);
  if (opts.json) {
    let pass = { strategy: options.strategy, tokens: 0 };
    if (!result) {
      const e = await estimateForDecision(data.toString('utf8'), options.limit, { profile: options.profile, strategy: options.strategy, claudeCorrection: options.claudeCorrection });
      pass = { strategy: e.strategy, tokens: e.tokens };
    }
    process.stdout.write(jsonLine(guardJson(result, pass)) + '\n');
  } else if (result) {
    // The message quotes the tool name and the payload's structure: never raw controls to a terminal.
    process.stdout.write(terminalSafe(result.message) + '\n');
  }
  if (result && !result.payloadPath) process.exitCode = 1; // could not save: the message says why
}

export function register(program: Command): void {
  const cmd = program
    .command('guard')
    .description('guard one tool result: print nothing when it fits, else spill it to the session and print the message for the model')
    .argument('[file]', 'the tool result (a file, or - / nothing for stdin)')
    .requiredOption('--session <dir>', 'session folder; payloads go under <dir>/long_responses/')
    .option('--tool <name>', 'tool name (goes into the file name, sanitized)')
    .option('--input <json>', 'the tool input, as JSON')
    .option('--intent <text>', 'what the caller wants from the result (summary focus)');
  addLimitOptions(cmd)
    .option('--json', 'print one JSON object: action, message, estimate, payloadPath, linkedPath, assets')
    .addHelpText(
      'after',
      '\nExamples:\n  curl -s https://example.com/big.json | spillway guard --session ./session --tool fetch\n' +
        '  spillway guard result.json --session ./session --limit 8000 --json\n\nExit status: 0 pass or spilled, 1 could not save, 2 bad usage.',
    )
    .action(async (file: string | undefined, opts: GuardCommandOptions) => {
      try {
        await runGuard(file, opts);
      } catch (err) {
        if (err instanceof UsageError) {
          process.stderr.write(`spillway guard: ${terminalSafe(err.message)}\n`);
          process.exitCode = 2;
          return;
        }
        throw err;
      }
    });
}
