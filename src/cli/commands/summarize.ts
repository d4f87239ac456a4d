import fs from 'node:fs/promises';
import type { Command } from 'commander';
import { appPaths } from '../../pipeline/config.js';
import { MAX_SUMMARY_OUTPUT_TOKENS } from '../../pipeline/index.js';
import { listSummaryProviders, listSummaryTemplates, PROVIDER_NAMES, summarizeText } from '../../service/offline.js';
import { defaultProvider, positiveInt } from '../../integrations/options.js';
import { jsonLine, terminalSafe } from '../../pipeline/terminal.js';

interface SummarizeCliOptions {
  focus?: string;
  provider?: string;
  model?: string;
  template?: string;
  maxTokens?: number;
  timeout?: number;
  templatesDir?: string;
  json?: boolean;
  listProviders?: boolean;
  listTemplates?: boolean;
}

async function readText(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
}

export async function runSummarize(file: string | undefined, o: SummarizeCliOptions): Promise<void> {
  if (o.listProviders) {
    const rows = await listSummaryProviders(process.env);
    if (o.json) process.stdout.write(jsonLine(rows) + '\n');
    else for (const p of rows) process.stdout.write(terminalSafe(`${p.name.padEnd(11)} ${p.available ? 'available ' : 'missing   '} default model ${p.defaultModel}${p.reason ? `  (${p.reason})` : ''}`) + '\n');
    return;
  }
  if (o.listTemplates) {
    const rows = listSummaryTemplates(o.templatesDir ?? appPaths(process.env).templates);
    if (o.json) process.stdout.write(jsonLine(rows) + '\n');
    else for (const t of rows) process.stdout.write(terminalSafe(`${t.name.padEnd(16)} ${t.builtIn ? 'built-in' : t.path}`) + '\n');
    return;
  }
  if (!file) throw new Error('summarize needs a FILE (or - for stdin)');
  const provider = o.provider ?? defaultProvider();
  if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) throw new Error(`unknown provider ${JSON.stringify(provider)}: use ${PROVIDER_NAMES.join(', ')}`);
  const text = await readText(file);
  const ac = new AbortController();
  const onSigint = () => ac.abort(new Error('interrupted'));
  process.once('SIGINT', onSigint);
  try {
    const out = await summarizeText({
      text,
      provider,
      focus: o.focus,
      model: o.model,
      template: o.template,
      templatesDir: o.templatesDir,
      timeoutMs: o.timeout,
      maxOutputTokens: o.maxTokens,
      signal: ac.signal,
      env: process.env,
    });
    if (o.json) {
      const { summary, model, inputTokens, outputTokens, ms } = out;
      process.stdout.write(jsonLine({ summary, provider: out.provider, model, inputTokens, outputTokens, ms }) + '\n');
    } else {
      // A summary quotes the payload: no raw terminal controls.
      const summary = terminalSafe(out.summary);
      process.stdout.write(summary.endsWith('\n') ? summary : `${summary}\n`);
      const cost = out.costUsd !== undefined ? `, $${out.costUsd.toFixed(6)}` : '';
      const chunks = out.chunks ? `, ${out.chunks.summarized}/${out.chunks.total} chunks` : '';
      process.stderr.write(`[${out.provider}/${out.model}${out.template ? `, template ${out.template}` : ''}: ${out.inputTokens} → ${out.outputTokens} tokens, ${out.ms} ms${cost}${chunks}]\n`);
    }
  } finally {
    process.off('SIGINT', onSigint);
  }
}

export function register(program: Command): void {
  program
    .command('summarize')
    .description('summarize a payload with a focus: offline structural summary (default), Anthropic or any OpenAI-compatible endpoint')
    .argument('[file]', 'the payload (a file, or - for stdin)')
    .option('--focus <text>', 'what you want from it (keywords or a question); ranks what is kept')
    .option('--provider <name>', `${PROVIDER_NAMES.join(', ')} (default: $SPILLWAY_SUMMARIZER or structural)`)
    .option('--model <model>', 'model id (default per provider: claude-haiku-5-5, gpt-5-mini)')
    .option('--template <name>', 'prompt template (built-in: default, terse, errors; or your <name>.md in the templates folder)')
    .option('--max-tokens <n>', `summary cap in tokens (default ${MAX_SUMMARY_OUTPUT_TOKENS})`, positiveInt('--max-tokens'))
    .option('--timeout <ms>', 'whole run deadline, retries included (default 60000)', positiveInt('--timeout'))
    .option('--templates-dir <dir>', 'templates folder (default: the app-data templates/ folder)')
    .option('--list-providers', 'list providers, their default models, and whether a key is set')
    .option('--list-templates', 'list prompt templates')
    .option('--json', 'print {"summary","provider","model","inputTokens","outputTokens","ms"}')
    .action(async (file: string | undefined, o: SummarizeCliOptions) => {
      await runSummarize(file, o);
    });
}
