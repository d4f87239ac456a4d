/**
 * The realistic sessions (test/clients/realistic.ts) run live in the real Claude Code and Codex,
 * with Spillway installed by `spillway setup`: the assertions are on what each client sent the model
 * next. A second group checks the committed fixtures (recorded by the same script) still hold every
 * ingredient, within the size budget.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { imageDims } from './doubles/images.js';
import { hookAttachments, shapeWarnings } from './claude.js';
import { listFiles, ROOT } from './harness.js';
import { blockText, CC, CX, ELF, IMAGE, NEEDLES, REALISTIC_FIXTURES, runClaudeRealistic, runCodexRealistic, type ClaudeRealistic, type CodexRealistic } from './realistic.js';

const RUN_MS = 300_000;
/** The guard's message, as the model reads it. */
const GUARD = /\[spillway\] The result of `[^`]+` is too large for the context/;

/** Raw bytes decoded as text: NULs, or a run of U+FFFD (bytes that were not UTF-8). */
function looksRaw(text: string): boolean {
  return text.includes('\u0000') || /\uFFFD{3,}/.test(text) || text.includes('\u007fELF');
}

describe('a realistic Claude Code session (hook + proxy as setup installs them)', () => {
  let s: ClaudeRealistic;
  beforeAll(async () => {
    s = await runClaudeRealistic();
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await s?.double.close();
  });

  const result = (id: string) => {
    const r = s.double.toolResults().find((t) => t.block.tool_use_id === id);
    expect(r, `no tool_result for ${id}`).toBeDefined();
    return r!;
  };

  it('the run completed and Claude Code accepted every hook answer', () => {
    expect(s.run.timedOut).toBe(false);
    expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
    expect(shapeWarnings(s.run)).toEqual([]);
    expect(hookAttachments(s.run).filter((a) => a.type !== 'hook_success' && a.type !== 'hook_additional_context').map((a) => `${a.type}: ${a.stderr ?? a.content}`.slice(0, 300))).toEqual([]);
  });

  it('every result reaches the model on the turn right after its call', () => {
    const order = Object.values(CC);
    for (const [i, id] of order.entries()) expect(result(id).turn, id).toBe(i + 1);
  });

  it(`raw binary through the shell (head -c 3000 ${ELF}) never reaches the model raw`, () => {
    const text = blockText(result(CC.elf).block);
    expect(looksRaw(text), text.slice(0, 200)).toBe(false);
    expect(text).toMatch(/\[spillway/);
  });

  it('base64 of a PNG through the shell: the blob never reaches the model as text', () => {
    const png = fs.readFileSync(path.join(s.ws.cwd, 'logo.png')).toString('base64');
    const text = blockText(result(CC.base64).block);
    expect(text).not.toContain(png.slice(0, 200));
    expect(text).toContain('[spillway');
  });

  it(`the image Read (${IMAGE.width}×${IMAGE.height} PNG) is sent as an image block, and the double counts it by pixels`, () => {
    const r = result(CC.image);
    const img = (r.block.content as any[]).find((b) => b.type === 'image');
    expect(img).toBeDefined();
    const d = imageDims(Buffer.from(img.source.data, 'base64'));
    expect(Math.max(d!.width, d!.height)).toBeLessThanOrEqual(2000);
    // The context grew by the image's pixels (~1,600 tokens), not by its base64 as text (~16,000).
    const grew = s.usage.main[r.turn]! - s.usage.main[r.turn - 1]!;
    expect(grew).toBeLessThan(2_500);
    expect(grew).toBeGreaterThan(1_000);
  });

  it("every large result (Read, Bash cat of the JSON, the MCP read through the proxy, Grep) reaches the model as the guard's message", () => {
    for (const id of [CC.read, CC.json, CC.mcp, CC.grep]) {
      const text = blockText(result(id).block);
      expect(text, id).toMatch(GUARD);
      expect(text.length, id).toBeLessThan(20_000);
    }
  });

  it('the small ones pass unchanged', () => {
    expect(blockText(result(CC.echo).block)).toBe('hi');
    expect(blockText(result(CC.ls).block).split('\n').sort()).toEqual(['data', 'logo.png', 'package-lock.json', 'photo.png', 'report.txt', 'src']);
  });

  it('each spill read back (Read offset/limit, grep in the shell, spillway_read, spillway_grep) returns what it asked for', () => {
    expect(blockText(result(CC.readBack).block)).toMatch(/^100\tline 99: the quarterly report/);
    expect(blockText(result(CC.grepBack).block)).toMatch(/^\d+: +"node_modules\/pkg-777": \{/);
    expect(blockText(result(CC.spillwayRead).block)).toContain('line 1234: sensor');
    expect(blockText(result(CC.spillwayGrep).block)).toContain(NEEDLES.mcp);
  });
});

describe('a realistic Codex session (proxy as setup installs it)', () => {
  let s: CodexRealistic;
  beforeAll(async () => {
    s = await runCodexRealistic();
  }, RUN_MS + 60_000);
  afterAll(async () => {
    await s?.double.close();
  });

  const output = (id: string) => {
    const o = s.double.toolOutputs().find((t) => t.item.call_id === id);
    expect(o, `no output for ${id}`).toBeDefined();
    return o!;
  };
  const text = (id: string) => {
    const o = output(id).item.output;
    return typeof o === 'string' ? o : o.map((p: any) => p.text ?? `<${p.type}>`).join('\n');
  };

  it('the run completed', () => {
    expect(s.run.timedOut).toBe(false);
    expect(s.run.code, s.run.stderr.slice(-2000)).toBe(0);
  });

  it('every result reaches the model on the turn right after its call', () => {
    for (const [i, id] of Object.values(CX).entries()) expect(output(id).turn, id).toBe(i + 1);
  });

  it("the MCP read through the proxy reaches the model as the guard's message", () => {
    expect(text(CX.mcp)).toMatch(GUARD);
    expect(text(CX.mcp).length).toBeLessThan(20_000);
  });

  it('the shell outputs over 40,000 bytes get Codex\'s own cut (no guard on its shell), the small ones pass unchanged', () => {
    for (const id of [CX.read, CX.json, CX.grep]) expect(text(id), id).toContain('Warning: truncated output (original token count: ');
    expect(text(CX.echo)).toMatch(/Output:\nhi\n?$/);
    expect(text(CX.ls)).toMatch(/Output:\ndata\nlogo\.png\npackage-lock\.json\nphoto\.png\nreport\.txt\nsrc\n?$/);
  });

  it('view_image sends the PNG as an input_image, and the double counts it by the tile rule', () => {
    const o = output(CX.image);
    const img = (Array.isArray(o.item.output) ? o.item.output : []).find((p: any) => p.type === 'input_image');
    expect(img).toBeDefined();
    const grew = s.main[o.turn]! - s.main[o.turn - 1]!;
    expect(grew).toBeLessThan(2_500);
  });

  it('each spill read back (spillway_read, spillway_grep, grep and sed in the shell) returns what it asked for', () => {
    expect(text(CX.spillwayRead)).toContain('line 1234: sensor');
    expect(text(CX.spillwayGrep)).toContain(NEEDLES.mcp);
    expect(text(CX.grepBack)).toContain(NEEDLES.mcp);
    expect(text(CX.readBack)).toContain('line 0: sensor');
  });
});

describe('the committed realistic fixtures', () => {
  const files = listFiles(REALISTIC_FIXTURES);
  const read = (f: string) => fs.readFileSync(path.join(REALISTIC_FIXTURES, f), 'utf8');

  it('stay under 3 MB together', () => {
    const bytes = files.reduce((n, f) => n + fs.statSync(path.join(REALISTIC_FIXTURES, f)).size, 0);
    expect(bytes).toBeLessThan(3 * 1024 * 1024);
  });

  it('hold every ingredient: each call in the transcript, the spills with their sidecars, what the model saw', () => {
    const cc = files.find((f) => f.startsWith('claude-code/projects/') && f.endsWith('.jsonl'))!;
    const cx = files.find((f) => f.startsWith('codex/sessions/') && f.endsWith('.jsonl'))!;
    expect(cc).toBeDefined();
    expect(cx).toBeDefined();
    for (const id of Object.values(CC)) expect(read(cc), id).toContain(id);
    for (const id of Object.values(CX)) expect(read(cx), id).toContain(id);
    for (const tool of ['Read', 'Bash', 'Grep', 'read_text_file']) expect(files.some((f) => f.startsWith('claude-code/spillway-sessions/') && f.includes(`_${tool}_`) && f.endsWith('.meta.json')), tool).toBe(true);
    expect(files.some((f) => f.startsWith('codex/spillway-sessions/') && f.includes('_read_text_file_') && f.endsWith('.meta.json'))).toBe(true);
    for (const k of ['claude-code', 'codex']) expect(JSON.parse(read(`${k}/model-saw.json`)).length).toBeGreaterThan(10);
    // No path of the recording machine is left.
    for (const f of files.filter((x) => /\.(jsonl?|txt)$/.test(x))) {
      expect(read(f), f).not.toMatch(/\/tmp\/spillway-rl-/);
      expect(read(f).includes(ROOT), f).toBe(false);
    }
  });
});
