/**
 * Each client's own rules for large tool results, re-observed from the real binaries with no guard
 * (no hook, no proxy): what the model is sent on either side of each threshold. docs/client-rules.md
 * is the table these runs keep honest; a client upgrade that moves a threshold fails here first.
 *
 * One run per client: every probe is one tool call in the same session. Sizes sit one character (or a
 * few hundred tokens) on either side of each threshold, so a threshold that moves by more fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { countTokens } from '@anthropic-ai/tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countedTokens, startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { startResponsesDouble, type ResponsesDouble } from './doubles/openai-responses.js';
import { imageDims } from './doubles/images.js';
import { runClaudeCode, type ClaudeRun } from './claude.js';
import { runCodex, tomlString, type CodexRun } from './codex.js';
import { ROOT, tmpDir } from './harness.js';
import { exactText, grepTreeOfChars, makePngOf, mcpTextOfJsonChars, mcpTextOfTokens, textOfTokens } from './realistic-inputs.js';

const FILESYSTEM = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const RUN_MS = 240_000;

/** Claude Code 2.1.328, observed here. */
const CC_BASH_INLINE_MAX_CHARS = 30_000;
const CC_GREP_INLINE_MAX_CHARS = 20_000;
const CC_MCP_INLINE_MAX_CHARS = 50_000;
const CC_MCP_MAX_TOKENS = 25_000;
const CC_READ_MAX_TOKENS = 25_000;
const CC_READ_MAX_BYTES = 256 * 1024;
const CC_PREVIEW_MAX_CHARS = 2_000;
const CC_IMAGE_MAX_SIDE_PX = 2_000;
/** Codex 0.171.0, observed here: tokens are counted as ceil(bytes / 4). */
const CODEX_EXEC_MAX_TOKENS = 10_000;
const CODEX_MCP_MAX_TOKENS = 12_000;

function blocksOf(block: any): any[] {
  if (!block) return [];
  return typeof block.content === 'string' ? [{ type: 'text', text: block.content }] : (block.content ?? []);
}
const textOf = (block: any) => blocksOf(block).map((b: any) => (b.type === 'text' ? b.text : '')).join('\n');

/** `<persisted-output>` as Claude Code 2.1.328 writes it: the size, the saved path, a preview cut at a line end. */
const PERSISTED = /^<persisted-output>\nOutput too large \(([\d.]+)KB\)\. Full output saved to: (\S+)\n\nPreview \(first 2KB\):\n([\s\S]*)\n\.\.\.\n<\/persisted-output>$/;

describe('Claude Code 2.1.328, no guard: its own rules for large results', () => {
  let d: AnthropicDouble;
  let run: ClaudeRun;
  let cwd: string;
  const bash = (n: number) => exactText(n, 'B');
  const read = { under: '', over: '', sizeOk: '', sizeOver: '' };
  const mcp = { tokUnder: '', tokOver: '' };

  beforeAll(async () => {
    cwd = tmpDir('spillway-rules-cc-');
    const data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    for (const n of [CC_BASH_INLINE_MAX_CHARS, CC_BASH_INLINE_MAX_CHARS + 1]) fs.writeFileSync(path.join(cwd, `bash${n}.txt`), bash(n));
    for (const n of [CC_GREP_INLINE_MAX_CHARS, CC_GREP_INLINE_MAX_CHARS + 1]) grepTreeOfChars(cwd, `g${n}`, n);
    for (const n of [CC_MCP_INLINE_MAX_CHARS, CC_MCP_INLINE_MAX_CHARS + 1]) fs.writeFileSync(path.join(data, `chars${n}.txt`), mcpTextOfJsonChars(n));
    // Claude Code counts a Read with count_tokens (the double: Anthropic's tokenizer over the text).
    read.under = textOfTokens(CC_READ_MAX_TOKENS - 500);
    read.over = textOfTokens(CC_READ_MAX_TOKENS + 500);
    fs.writeFileSync(path.join(cwd, 'read-under.txt'), read.under);
    fs.writeFileSync(path.join(cwd, 'read-over.txt'), read.over);
    read.sizeOk = exactText(CC_READ_MAX_BYTES, 'S');
    read.sizeOver = exactText(CC_READ_MAX_BYTES + 1, 'S');
    fs.writeFileSync(path.join(cwd, 'read-256k.txt'), read.sizeOk);
    fs.writeFileSync(path.join(cwd, 'read-256k1.txt'), read.sizeOver);
    mcp.tokUnder = mcpTextOfTokens(CC_MCP_MAX_TOKENS - 500);
    mcp.tokOver = mcpTextOfTokens(CC_MCP_MAX_TOKENS + 500);
    fs.writeFileSync(path.join(data, 'tok-under.txt'), mcp.tokUnder);
    fs.writeFileSync(path.join(data, 'tok-over.txt'), mcp.tokOver);
    fs.writeFileSync(path.join(cwd, 'wide.png'), makePngOf(3013, 1561));
    fs.writeFileSync(path.join(cwd, 'tall.png'), makePngOf(1200, 2400));
    fs.writeFileSync(path.join(cwd, 'fits.png'), makePngOf(1000, 600));
    const call = (id: string, name: string, input: Record<string, unknown>) => ({ toolUses: [{ id, name, input }] });
    d = await startAnthropicDouble({
      steps: [
        call('toolu_bash_at', 'Bash', { command: `cat bash${CC_BASH_INLINE_MAX_CHARS}.txt`, description: 'at the limit' }),
        call('toolu_bash_over', 'Bash', { command: `cat bash${CC_BASH_INLINE_MAX_CHARS + 1}.txt`, description: 'one over' }),
        call('toolu_grep_at', 'Grep', { pattern: 'MATCH', path: path.join(cwd, `g${CC_GREP_INLINE_MAX_CHARS}`), output_mode: 'content', '-n': false, head_limit: 0 }),
        call('toolu_grep_over', 'Grep', { pattern: 'MATCH', path: path.join(cwd, `g${CC_GREP_INLINE_MAX_CHARS + 1}`), output_mode: 'content', '-n': false, head_limit: 0 }),
        call('toolu_mcp_at', 'mcp__fs__read_text_file', { path: path.join(data, `chars${CC_MCP_INLINE_MAX_CHARS}.txt`) }),
        call('toolu_mcp_over', 'mcp__fs__read_text_file', { path: path.join(data, `chars${CC_MCP_INLINE_MAX_CHARS + 1}.txt`) }),
        call('toolu_mcp_tok_under', 'mcp__fs__read_text_file', { path: path.join(data, 'tok-under.txt') }),
        call('toolu_mcp_tok_over', 'mcp__fs__read_text_file', { path: path.join(data, 'tok-over.txt') }),
        call('toolu_read_under', 'Read', { file_path: path.join(cwd, 'read-under.txt') }),
        call('toolu_read_over', 'Read', { file_path: path.join(cwd, 'read-over.txt') }),
        call('toolu_read_256k', 'Read', { file_path: path.join(cwd, 'read-256k.txt') }),
        call('toolu_read_256k1', 'Read', { file_path: path.join(cwd, 'read-256k1.txt') }),
        call('toolu_img_wide', 'Read', { file_path: path.join(cwd, 'wide.png') }),
        call('toolu_img_tall', 'Read', { file_path: path.join(cwd, 'tall.png') }),
        call('toolu_img_fits', 'Read', { file_path: path.join(cwd, 'fits.png') }),
        { text: 'done' },
      ],
    });
    run = await runClaudeCode({
      baseUrl: d.origin,
      prompt: 'probe the limits',
      cwd,
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, data] } },
      addDirs: [data],
      // 2.1.328 leaves Grep out unless it is named.
      args: ['--allowedTools', 'Grep'],
      timeoutMs: RUN_MS,
    });
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  const got = (id: string) => {
    const r = d.toolResults().find((t) => t.block.tool_use_id === id);
    expect(r, `no tool_result for ${id}`).toBeDefined();
    return r!.block;
  };
  /**
   * What the model got with a tool_result besides it: the blocks of the messages from the one that
   * carries it up to the next assistant turn (2.1.328 sends Read's truncation notice as a message of
   * role "system" right after it), the tool_result left out.
   */
  const messageWith = (id: string): any[] => {
    const msgs: any[] = d.mainTurns().at(-1)?.body.messages ?? [];
    const at = msgs.findIndex((m) => m.role === 'user' && Array.isArray(m.content) && m.content.some((b: any) => b?.tool_use_id === id));
    const out: any[] = [];
    for (let i = at; at >= 0 && i < msgs.length && msgs[i].role !== 'assistant'; i++) {
      out.push(...(Array.isArray(msgs[i].content) ? msgs[i].content : [{ type: 'text', text: msgs[i].content }]).filter((b: any) => b?.type !== 'tool_result'));
    }
    return out;
  };
  const besides = (id: string) => messageWith(id).map((b: any) => (b.type === 'text' ? b.text : '')).join('\n');
  const persisted = (id: string, full: string) => {
    const m = PERSISTED.exec(textOf(got(id)));
    expect(m, textOf(got(id)).slice(0, 300)).not.toBeNull();
    const [, kb, saved, preview] = m!;
    // The size in KB of 1,024 bytes, one decimal; the preview is the output's first 2,000 characters,
    // cut back to the last line end when there is one in them.
    expect(Number(kb)).toBeCloseTo(Buffer.byteLength(full) / 1024, 1);
    expect(full.startsWith(preview!)).toBe(true);
    const head = full.slice(0, CC_PREVIEW_MAX_CHARS);
    expect(preview!.length).toBe(head.includes('\n') ? head.lastIndexOf('\n') : CC_PREVIEW_MAX_CHARS);
    expect(saved).toMatch(/\/\.claude\/projects\/[^/]+\/[0-9a-f-]+\/tool-results\/[^/]+\.txt$/);
    return saved!;
  };

  it('the run completed', () => {
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
  });

  it(`Bash: up to ${CC_BASH_INLINE_MAX_CHARS} characters inline; one more is persisted, the model gets a 2 KB preview and the path`, () => {
    expect(textOf(got('toolu_bash_at'))).toBe(bash(CC_BASH_INLINE_MAX_CHARS));
    const saved = persisted('toolu_bash_over', bash(CC_BASH_INLINE_MAX_CHARS + 1));
    expect(fs.readFileSync(saved, 'utf8')).toBe(bash(CC_BASH_INLINE_MAX_CHARS + 1));
  });

  it(`Grep: up to ${CC_GREP_INLINE_MAX_CHARS} characters inline; one more is persisted the same way`, () => {
    expect(textOf(got('toolu_grep_at')).length).toBe(CC_GREP_INLINE_MAX_CHARS);
    const full = fs.readFileSync(path.join(cwd, `g${CC_GREP_INLINE_MAX_CHARS + 1}`, 'f.txt'), 'utf8').trimEnd().split('\n').map((l) => `g${CC_GREP_INLINE_MAX_CHARS + 1}/f.txt:${l}`).join('\n');
    expect(full.length).toBe(CC_GREP_INLINE_MAX_CHARS + 1);
    persisted('toolu_grep_over', full);
  });

  it(`MCP: a result of up to ${CC_MCP_INLINE_MAX_CHARS} characters (its JSON text) inline; one more is persisted with a preview`, () => {
    const at = textOf(got('toolu_mcp_at'));
    expect(at.length).toBe(CC_MCP_INLINE_MAX_CHARS);
    expect(JSON.parse(at)).toEqual({ content: mcpTextOfJsonChars(CC_MCP_INLINE_MAX_CHARS) });
    persisted('toolu_mcp_over', JSON.stringify({ content: mcpTextOfJsonChars(CC_MCP_INLINE_MAX_CHARS + 1) }));
  });

  it(`MCP: over ${CC_MCP_MAX_TOKENS} tokens (MAX_MCP_OUTPUT_TOKENS, by count_tokens) the model gets an error text and the saved path, no preview`, () => {
    // Under the token cap but over 50,000 characters: the character rule applies.
    expect(JSON.stringify({ content: mcp.tokUnder }).length).toBeGreaterThan(CC_MCP_INLINE_MAX_CHARS);
    persisted('toolu_mcp_tok_under', JSON.stringify({ content: mcp.tokUnder }));
    const over = textOf(got('toolu_mcp_tok_over'));
    const chars = JSON.stringify({ content: mcp.tokOver }).length;
    expect(over).toMatch(new RegExp(`^Error: result \\(${chars.toLocaleString('en-US')} characters\\) exceeds maximum allowed tokens\\. Output has been saved to (\\S+)\\.\\nFormat: JSON with schema: \\{content: string\\}\\n`));
    expect(over).toContain('You MUST read the content from the file at');
    expect(over.length).toBeLessThan(2_000);
    expect(over).not.toContain('line 0: the quarterly');
  });

  it(`Read: over ${CC_READ_MAX_TOKENS} tokens (count_tokens over the file's text) the model gets the first lines that fit and a notice`, () => {
    expect(countTokens(read.under)).toBeLessThan(CC_READ_MAX_TOKENS);
    const under = textOf(got('toolu_read_under'));
    const lastLine = read.under.trimEnd().split('\n').length;
    expect(under).toContain(`${lastLine}\t${read.under.trimEnd().split('\n').at(-1)}`);
    expect(besides('toolu_read_under')).not.toContain('[Truncated');
    expect(countTokens(read.over)).toBeGreaterThan(CC_READ_MAX_TOKENS);
    const over = textOf(got('toolu_read_over'));
    const shown = over.split('\n').length;
    // Claude Code counts the empty line after the final newline.
    const total = read.over.split('\n').length;
    expect(shown).toBeLessThan(total);
    // What it shows fits the cap (the same count the client asked for).
    expect(countedTokens({ messages: [{ role: 'user', content: read.over.split('\n').slice(0, shown).join('\n') }] })).toBeLessThanOrEqual(CC_READ_MAX_TOKENS);
    const notice = besides('toolu_read_over');
    expect(notice).toMatch(new RegExp(`\\[Truncated: PARTIAL view — \\S+read-over\\.txt: showing lines 1-${shown} of ${total} total \\((\\d+) tokens, cap ${CC_READ_MAX_TOKENS}\\)\\. Call Read with offset=${shown + 1} limit=${shown} for the next page`));
  });

  it(`Read: a file over ${CC_READ_MAX_BYTES} bytes is refused before reading (an error), one of exactly ${CC_READ_MAX_BYTES} is read and cut by tokens`, () => {
    const refused = got('toolu_read_256k1');
    expect(refused.is_error).toBe(true);
    expect(textOf(refused)).toMatch(/^(<tool_use_error>)?File content \(256KB\) exceeds maximum allowed size \(256KB\)\. Use offset and limit parameters/);
    const ok = got('toolu_read_256k');
    expect(ok.is_error ?? false).toBe(false);
    expect(textOf(ok)).toMatch(/^1\tS00000 /);
  });

  it(`Read of an image: sent as an image block, scaled to fit ${CC_IMAGE_MAX_SIDE_PX} px on its long side`, () => {
    const image = (id: string) => {
      const b = blocksOf(got(id)).find((x: any) => x.type === 'image');
      expect(b, id).toBeDefined();
      return { media: b.source.media_type as string, ...imageDims(Buffer.from(b.source.data, 'base64'))! };
    };
    // A smooth picture stays PNG; a noisy 1.2 MB one of the same size came back as JPEG in an earlier run.
    expect(image('toolu_img_wide')).toEqual({ media: 'image/png', width: 2000, height: 1036 });
    expect(image('toolu_img_tall')).toEqual({ media: 'image/png', width: 1000, height: 2000 });
    expect(besides('toolu_img_tall')).toContain('[Image: original 1200x2400, displayed at 1000x2000.');
    expect(image('toolu_img_fits')).toEqual({ media: 'image/png', width: 1000, height: 600 });
  });
});

describe('Codex 0.171.0, no guard: its own rules for large results', () => {
  let d: ResponsesDouble;
  let run: CodexRun;
  const execText = (n: number) => exactText(n, 'X');

  beforeAll(async () => {
    const cwd = tmpDir('spillway-rules-cx-');
    const data = path.join(cwd, 'data');
    fs.mkdirSync(data);
    const atBytes = CODEX_EXEC_MAX_TOKENS * 4;
    for (const n of [atBytes, atBytes + 1, 60_000]) fs.writeFileSync(path.join(cwd, `x${n}.txt`), execText(n));
    fs.writeFileSync(path.join(cwd, 'lines2000.txt'), Array.from({ length: 2000 }, (_, i) => `l${i}`).join('\n'));
    for (const n of [47_000, 60_000]) fs.writeFileSync(path.join(data, `m${n}.txt`), mcpTextOfJsonChars(n));
    fs.writeFileSync(path.join(cwd, 'wide.png'), makePngOf(3013, 1561));
    const exec = (id: string, cmd: string, extra: Record<string, unknown> = {}) => ({ call: { name: 'exec_command', arguments: { cmd, ...extra }, callId: id } });
    d = await startResponsesDouble({
      steps: [
        exec('call_exec_at', `cat x${atBytes}.txt`),
        exec('call_exec_over', `cat x${atBytes + 1}.txt`),
        exec('call_exec_asked', 'cat x60000.txt', { max_output_tokens: 100_000 }),
        exec('call_exec_lines', 'cat lines2000.txt'),
        { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(data, 'm47000.txt') }, callId: 'call_mcp_under' } },
        { call: { name: 'read_text_file', namespace: 'mcp__fs', arguments: { path: path.join(data, 'm60000.txt') }, callId: 'call_mcp_over' } },
        { call: { name: 'view_image', arguments: { path: path.join(cwd, 'wide.png') }, callId: 'call_image' } },
        { text: 'done' },
      ],
    });
    const mcpToml = ['[mcp_servers.fs]', `command = ${tomlString(process.execPath)}`, `args = [${[FILESYSTEM, data].map(tomlString).join(', ')}]`, 'required = true'].join('\n');
    run = await runCodex({ baseUrl: d.origin, prompt: 'probe the limits', cwd, configToml: mcpToml, timeoutMs: RUN_MS });
  }, RUN_MS + 60_000);

  afterAll(async () => {
    await d?.close();
  });

  const out = (id: string): any => {
    const o = d.toolOutputs().find((t) => t.item.call_id === id);
    expect(o, `no output for ${id}`).toBeDefined();
    return o!.item.output;
  };
  const outText = (id: string): string => {
    const o = out(id);
    return typeof o === 'string' ? o : o.map((p: any) => p.text ?? '').join('');
  };
  /** exec_command's frame: `Chunk ID`, `Wall time`, exit code, `Original token count: ceil(bytes/4)`, then `Output:`. */
  const EXEC = /^Chunk ID: \w+\nWall time: [\d.]+ seconds\nProcess exited with code 0\nOriginal token count: (\d+)\nOutput:\n([\s\S]*)$/;

  it('the run completed', () => {
    expect(run.timedOut).toBe(false);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
  });

  it(`exec_command: up to ${CODEX_EXEC_MAX_TOKENS} tokens (bytes / 4) whole; over it, a warning and head + tail of ${CODEX_EXEC_MAX_TOKENS} tokens with "…N tokens truncated…"`, () => {
    const at = EXEC.exec(outText('call_exec_at'));
    expect(at).not.toBeNull();
    expect(Number(at![1])).toBe(CODEX_EXEC_MAX_TOKENS);
    expect(at![2]).toBe(execText(CODEX_EXEC_MAX_TOKENS * 4));
    for (const [id, bytes] of [
      ['call_exec_over', CODEX_EXEC_MAX_TOKENS * 4 + 1],
      // A larger max_output_tokens asked by the model is capped at the same budget.
      ['call_exec_asked', 60_000],
    ] as const) {
      const m = EXEC.exec(outText(id));
      expect(m, id).not.toBeNull();
      const original = Math.ceil(bytes / 4);
      expect(Number(m![1])).toBe(original);
      const body = m![2]!;
      const full = execText(bytes);
      const frame = `Warning: truncated output (original token count: ${original})\nTotal output lines: ${full.split('\n').length}\n\n`;
      expect(body.startsWith(frame), body.slice(0, 160)).toBe(true);
      const cut = /…(\d+) tokens truncated…/.exec(body);
      expect(cut, id).not.toBeNull();
      const kept = body.slice(frame.length).replace(cut![0], '');
      // Head and tail of about the budget in bytes (observed: 40,025 kept of 40,001 and of 60,000).
      expect(Math.abs(Buffer.byteLength(kept) - CODEX_EXEC_MAX_TOKENS * 4)).toBeLessThan(100);
      expect(full.startsWith(kept.slice(0, 1000))).toBe(true);
      expect(full.endsWith(kept.slice(-1000))).toBe(true);
    }
  });

  it('exec_command: no line-count rule (2,000 short lines come back whole)', () => {
    const m = EXEC.exec(outText('call_exec_lines'));
    expect(m![2]!.split('\n').length).toBe(2000);
    expect(m![2]).not.toContain('truncated');
  });

  it(`MCP: the output text (with its "Wall time … Output:" frame) is kept to ${CODEX_MCP_MAX_TOKENS} tokens (bytes / 4), head and tail`, () => {
    const under = outText('call_mcp_under');
    expect(under).toMatch(/^Wall time: [\d.]+ seconds\nOutput:\n\{"content":/);
    expect(under).not.toContain('tokens truncated');
    expect(under.endsWith(`${JSON.stringify({ content: mcpTextOfJsonChars(47_000) })}`)).toBe(true);
    const over = outText('call_mcp_over');
    const cut = /…(\d+) tokens truncated…/.exec(over);
    expect(cut).not.toBeNull();
    const kept = Buffer.byteLength(over.replace(cut![0], ''));
    expect(Math.abs(kept - CODEX_MCP_MAX_TOKENS * 4)).toBeLessThan(100);
    // Head and tail halves.
    expect(Math.abs(over.indexOf(cut![0]) - (over.length - over.indexOf(cut![0]) - cut![0].length))).toBeLessThan(100);
  });

  it('view_image: the PNG is sent whole as an input_image (detail "original", not scaled)', () => {
    const all = d.mainTurns().at(-1)!.body.input.flatMap((i: any) => (Array.isArray(i.output) ? i.output : Array.isArray(i.content) ? i.content : []));
    const img = all.find((p: any) => p.type === 'input_image');
    expect(img).toBeDefined();
    expect(img.detail).toBe('original');
    expect(imageDims(Buffer.from(img.image_url.split(',')[1], 'base64'))).toEqual({ width: 3013, height: 1561 });
  });
});
