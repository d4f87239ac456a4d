import fs from 'node:fs';
import { confine, isInside, tempNameFor } from '../pipeline/layout.js';
import { MAX_TEMPLATE_CHARS } from './limits.js';
import type { TemplateInfo } from './types.js';

/**
 * Prompt templates: built-in ones, plus `<name>.md` files in the app-data `templates/` folder
 * (a file with a built-in's name overrides it). Placeholders: `{{focus}}`, `{{tool}}`, `{{kind}}`,
 * `{{maxTokens}}`, `{{part}}` and `{{payload}}` (the fenced payload; appended when absent).
 * Whatever a template says, the payload is always fenced as data (see prompt.ts).
 */

export const DEFAULT_TEMPLATE = 'default';

export const BUILT_IN_TEMPLATES: Readonly<Record<string, string>> = {
  default: `Summarize the tool result below for an AI agent that cannot see it.
Tool: {{tool}}. Content: {{kind}}. {{part}}
Focus: {{focus}}

Rules:
- Facts only: no advice, no opinions, no filler, nothing that is not in the payload.
- Keep every important number, id, name, date, path and URL verbatim, exactly as written.
- Lead with what answers the focus; if nothing in the payload answers it, say so in one line.
- Say what the payload is (shape, size, counts) in one line, then the facts, as short bullet points.
- Quote error messages verbatim.
- At most {{maxTokens}} tokens.

{{payload}}`,
  terse: `In at most 5 bullet points ({{maxTokens}} tokens max), state the facts in this {{kind}} tool result ({{tool}}) that matter for: {{focus}}.
Copy numbers, ids and URLs verbatim. No commentary. {{part}}

{{payload}}`,
  errors: `List every error, failure, warning and exception in this {{kind}} tool result ({{tool}}), grouped by kind, with counts, first and last occurrence, and one verbatim example line each.
Focus: {{focus}}. Keep ids, codes and numbers verbatim. If there are none, say "no errors found". At most {{maxTokens}} tokens. {{part}}

{{payload}}`,
  reduce: `Below are summaries of consecutive parts of one large tool result ({{tool}}, {{kind}}). Merge them into one summary.
Focus: {{focus}}
Rules: facts only; keep every number, id, name and URL verbatim; drop repetition; say which parts were not summarized if the notes say so. At most {{maxTokens}} tokens.

{{payload}}`,
};

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export class TemplateError extends Error {
  constructor(
    message: string,
    readonly code: 'BAD_NAME' | 'NOT_FOUND' | 'TOO_LARGE' | 'BUILT_IN',
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

export function validateTemplateName(name: unknown): string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new TemplateError(
      `bad template name ${JSON.stringify(name)}: use 1-64 letters, digits, '-' or '_' (no dots, slashes or spaces)`,
      'BAD_NAME',
    );
  }
  return name;
}

/** Path of a user template, confined to the folder (and not a symlink out of it). */
function fileFor(dir: string, name: string): string {
  const p = confine(dir, `${validateTemplateName(name)}.md`);
  try {
    const real = fs.realpathSync(p);
    if (!isInside(fs.realpathSync(dir), real)) throw new TemplateError(`template ${name} links outside ${dir}`, 'BAD_NAME');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return p;
}

export function listTemplates(dir: string): TemplateInfo[] {
  const out = new Map<string, TemplateInfo>();
  for (const [name, body] of Object.entries(BUILT_IN_TEMPLATES)) out.set(name, { name, body, builtIn: true });
  let files: string[] = [];
  try {
    files = fs.readdirSync(dir);
  } catch {
    // no user templates yet
  }
  for (const f of files.sort()) {
    if (!f.endsWith('.md')) continue;
    const name = f.slice(0, -3);
    if (!NAME_RE.test(name)) continue;
    try {
      const p = fileFor(dir, name);
      const body = fs.readFileSync(p, 'utf8');
      if (body.length > MAX_TEMPLATE_CHARS) continue;
      out.set(name, { name, body, builtIn: false, path: p });
    } catch {
      // unreadable or escaping: not listed
    }
  }
  return [...out.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export function loadTemplate(name: string, dir: string): TemplateInfo {
  validateTemplateName(name);
  const p = fileFor(dir, name);
  try {
    const body = fs.readFileSync(p, 'utf8');
    if (body.length > MAX_TEMPLATE_CHARS) throw new TemplateError(`template ${name} is larger than ${MAX_TEMPLATE_CHARS} chars`, 'TOO_LARGE');
    return { name, body, builtIn: false, path: p };
  } catch (err) {
    if (err instanceof TemplateError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  const body = BUILT_IN_TEMPLATES[name];
  if (body === undefined) {
    const known = listTemplates(dir).map((t) => t.name).join(', ');
    throw new TemplateError(`no template named ${name} (known: ${known})`, 'NOT_FOUND');
  }
  return { name, body, builtIn: true };
}

export function saveTemplate(dir: string, name: string, body: string): TemplateInfo {
  validateTemplateName(name);
  if (typeof body !== 'string' || !body.trim()) throw new TemplateError('template body is empty', 'TOO_LARGE');
  if (body.length > MAX_TEMPLATE_CHARS) throw new TemplateError(`template body is larger than ${MAX_TEMPLATE_CHARS} chars`, 'TOO_LARGE');
  fs.mkdirSync(dir, { recursive: true });
  const p = fileFor(dir, name);
  const tmp = tempNameFor(p);
  fs.writeFileSync(tmp, body, { encoding: 'utf8', flag: 'wx' });
  try {
    fs.renameSync(tmp, p);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { name, body, builtIn: false, path: p };
}

/** Delete a user template (or a user override of a built-in). Built-ins themselves cannot be deleted. */
export function deleteTemplate(dir: string, name: string): void {
  validateTemplateName(name);
  const p = fileFor(dir, name);
  try {
    fs.unlinkSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    if (name in BUILT_IN_TEMPLATES) throw new TemplateError(`${name} is a built-in template and cannot be deleted`, 'BUILT_IN');
    throw new TemplateError(`no template named ${name}`, 'NOT_FOUND');
  }
}

