/**
 * The hook as `spillway setup` installs it — bin/spillway.js on the built dist, with its pass-through
 * fast path — inside the real Claude Code binary (the other hook tests run the TypeScript source,
 * which has no fast path). Small results must pass without the CLI loading; anything the guard may
 * need must reach it. Each hook process records the modules it loads (a module hook given with
 * `--import`), so the test sees which path served which call.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { hookAttachments, runClaudeCode, shapeWarnings, shellQuote, type ClaudeRun } from './claude.js';
import { ROOT, tmpDir } from './harness.js';

const RUN_MS = 180_000;
const BIN = path.join(ROOT, 'bin', 'spillway.js');

function textOf(block: any): string {
  if (!block) return '';
  if (typeof block.content === 'string') return block.content;
  if (Array.isArray(block.content)) return block.content.map((b: any) => (b.type === 'text' ? b.text : `<${b.type}>`)).join('\n');
  return '';
}

function makeText(bytes: number, line: (i: number) => string): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `${line(i)}\n`;
  return s;
}

describe('the installed hook (bin/spillway.js, fast path) inside real Claude Code', () => {
  let d: AnthropicDouble;
  let run: ClaudeRun;
  let cwd: string;
  let log: string;
  const small = 'hello world\n'.repeat(10);
  const csv = Buffer.from(makeText(400_000, (i) => `row ${i},${(i * 0.37).toFixed(2)},item-${i}`));
  const blob = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 2654435761) >>> 24));
  const withBlob = `thumbnail follows\n${blob.toString('base64')}\nend of listing\n`;
  // Raw bytes through the shell (issue 29): Claude Code's Bash decodes them as UTF-8 (NULs and U+FFFD
  // in a 3 KB string), and the fast path used to pass them to the model as they were.
  const exe = fs.existsSync('/usr/bin/ls') ? '/usr/bin/ls' : process.execPath;

  beforeAll(async () => {
    expect(fs.existsSync(path.join(ROOT, 'dist', 'lib', 'cli', 'hook-entry.js')), 'run npm run build:lib').toBe(true);
    cwd = tmpDir('spillway-cc-fast-cwd-');
    fs.writeFileSync(path.join(cwd, 'small.txt'), small);
    fs.writeFileSync(path.join(cwd, 'rows400k.csv'), csv);
    fs.writeFileSync(path.join(cwd, 'blob.txt'), withBlob);
    const rec = tmpDir('spillway-cc-fast-rec-');
    log = path.join(rec, 'modules.log');
    fs.writeFileSync(log, '');
    fs.writeFileSync(
      path.join(rec, 'hooks.mjs'),
      `import fs from 'node:fs';\nexport async function load(url, context, next) {\n  if (url.startsWith('file:')) fs.appendFileSync(${JSON.stringify(log)}, process.pid + ' ' + url + '\\n');\n  return next(url, context);\n}\n`,
    );
    fs.writeFileSync(path.join(rec, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
    const command = [process.execPath, '--import', pathToFileURL(path.join(rec, 'register.mjs')).href, BIN, 'hook', 'claude-code'].map(shellQuote).join(' ');
    d = await startAnthropicDouble({
      steps: [
        { toolUses: [{ id: 'toolu_01readsmall', name: 'Read', input: { file_path: path.join(cwd, 'small.txt') } }] },
        { toolUses: [{ id: 'toolu_01echo', name: 'Bash', input: { command: 'echo fast path', description: 'Say it' } }] },
        { toolUses: [{ id: 'toolu_01bashcat', name: 'Bash', input: { command: `cat ${path.join(cwd, 'rows400k.csv')}`, description: 'rows of items' } }] },
        { toolUses: [{ id: 'toolu_01bashblob', name: 'Bash', input: { command: `cat ${path.join(cwd, 'blob.txt')}`, description: 'show the listing' } }] },
        { toolUses: [{ id: 'toolu_01bashelf', name: 'Bash', input: { command: `head -c 3000 ${exe}`, description: 'the first bytes of the binary' } }] },
        { text: 'done' },
      ],
    });
    run = await runClaudeCode({
      baseUrl: d.origin,
      prompt: 'inspect the files',
      cwd,
      settings: { hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command, timeout: 120 }] }] } },
      timeoutMs: RUN_MS,
    });
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  const received = (id: string) => textOf(d.toolResults().find((t) => t.block.tool_use_id === id)?.block);

  it('the run completed and Claude Code accepted every answer', () => {
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    expect(shapeWarnings(run)).toEqual([]);
    const bad = hookAttachments(run).filter((a) => a.type !== 'hook_success');
    expect(bad.map((a) => `${a.type}: ${a.stderr ?? a.content}`.slice(0, 300))).toEqual([]);
  });

  it("small results pass unchanged, served by the fast path; the others by the hook's entry, not the CLI", () => {
    expect(received('toolu_01readsmall')).toContain('1\thello world\n2\thello world');
    expect(received('toolu_01echo')).toContain('fast path');
    for (const id of ['toolu_01readsmall', 'toolu_01echo']) expect(hookAttachments(run).find((a) => a.toolUseID === id)?.stdout ?? '', id).toBe('');
    const byPid = new Map<string, string[]>();
    for (const line of fs.readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
      const [pid, url] = line.split(' ') as [string, string];
      byPid.set(pid, [...(byPid.get(pid) ?? []), url]);
    }
    const runs = [...byPid.values()];
    expect(runs.length, 'one hook process per tool call').toBe(5);
    const fast = runs.filter((urls) => !urls.some((u) => u.endsWith('/cli/main.js') || u.endsWith('/hooks/run.js')));
    expect(fast.length, 'the two small results').toBe(2);
    for (const urls of fast) expect(urls.filter((u) => u.includes('/node_modules/'))).toEqual([]);
    // the two that need the guard: the hook's entry, without the CLI (commander and the other verbs)
    const entry = runs.filter((urls) => urls.some((u) => u.endsWith('/hooks/run.js')));
    expect(entry.length, 'the three results the guard sees').toBe(3);
    for (const urls of entry) expect(urls.filter((u) => u.endsWith('/cli/main.js') || u.includes('/node_modules/commander/'))).toEqual([]);
  });

  it('what the guard must see still reaches it: a persisted 400 KB Bash output is spilled whole, a small one carrying base64 loses the blob', () => {
    const cat = received('toolu_01bashcat');
    expect(cat).toMatch(/^\[spillway\] The result of `Bash` is too large/);
    const saved = /Absolute path: (\S+)/.exec(cat)?.[1];
    expect(saved, cat.slice(0, 400)).toBeDefined();
    expect(fs.readFileSync(saved!).equals(csv)).toBe(true);
    const withAsset = received('toolu_01bashblob');
    expect(withAsset).toContain('[spillway asset: ');
    expect(withAsset).not.toContain(blob.toString('base64').slice(0, 120));
  });

  it('raw bytes through Bash (head -c 3000 of an executable) reach the model as the guard’s message, never as decoded bytes', () => {
    const elf = received('toolu_01bashelf');
    expect(elf).toMatch(/^\[spillway\] The result of `Bash` is binary data \(application\/x-elf, /);
    expect(elf).toContain('The client had already decoded these bytes as UTF-8, lossily');
    expect(elf, 'no NUL, control byte or U+FFFD of the executable in what the model got').not.toMatch(/[\x00-\x06\x0e-\x1a\x1c-\x1f\x7f\uFFFD]/);
    // What was saved is what Claude Code handed the hook: the executable's head, decoded as UTF-8.
    const saved = /^- (long_responses\/assets\/\S+)/m.exec(elf)?.[1];
    expect(saved, elf.slice(0, 600)).toBeDefined();
    const session = /\(in session (\S+)\)/.exec(elf)![1]!;
    const asset = fs.readFileSync(path.join(session, saved!));
    expect(asset.equals(Buffer.from(fs.readFileSync(exe).subarray(0, 3000).toString('utf8')))).toBe(true);
  });
});
