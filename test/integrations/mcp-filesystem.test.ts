import fs from 'node:fs';
import path from 'node:path';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_MESSAGE_CHARS } from '../../src/pipeline/index.js';
import { connectDirect, connectProxy, FILESYSTEM, makeLog, makePng, makeWav, spillOf, textOf, tmpDir } from './helpers.js';

type Connected = Awaited<ReturnType<typeof connectProxy>>;
type Result = { content: Array<Record<string, unknown>>; structuredContent?: unknown; isError?: boolean; _meta?: Record<string, unknown> };

const ajv = new AjvJsonSchemaValidator();

describe('spillway mcp in front of @modelcontextprotocol/server-filesystem', () => {
  let home: string;
  let data: string;
  let session: string;
  let proxy: Connected;
  let direct: Connected;
  let log: string;
  let png: Buffer;
  let wav: Buffer;
  const schemas = new Map<string, object>();

  beforeAll(async () => {
    home = tmpDir();
    data = fs.realpathSync(tmpDir('spillway-fs-'));
    session = path.join(tmpDir(), 'session');
    log = makeLog(300_000);
    fs.writeFileSync(path.join(data, 'big.log'), log);
    png = makePng(140);
    wav = makeWav(60_000);
    fs.writeFileSync(path.join(data, 'picture.png'), png);
    fs.writeFileSync(path.join(data, 'sound.wav'), wav);
    // A big folder: 30 packages × 4 folders × 25 files.
    for (let p = 0; p < 30; p++) {
      for (const sub of ['src', 'test', 'docs', 'lib']) {
        const dir = path.join(data, 'tree', `package-${p}`, sub);
        fs.mkdirSync(dir, { recursive: true });
        for (let f = 0; f < 25; f++) fs.writeFileSync(path.join(dir, `file-${f}.ts`), '');
      }
    }
    [proxy, direct] = await Promise.all([connectProxy(home, ['--session', session, '--profile', 'cl100k'], FILESYSTEM, [data]), connectDirect(FILESYSTEM, [data])]);
    // As a client does before calling: this also makes the SDK Client validate structuredContent against each outputSchema.
    const tools = await proxy.client.listTools();
    await direct.client.listTools();
    for (const t of tools.tools) if (t.outputSchema) schemas.set(t.name, t.outputSchema);
  });
  afterAll(async () => {
    await Promise.allSettled([proxy?.client.close(), direct?.client.close()]);
  });

  async function both(name: string, args: Record<string, unknown>): Promise<[Result, Result]> {
    const [a, b] = await Promise.all([proxy.client.callTool({ name, arguments: args }), direct.client.callTool({ name, arguments: args })]);
    return [a as Result, b as Result];
  }

  /**
   * read_media_file's schema (a strict array of media items, nothing else) has no field that could
   * carry the message without making up an item: the result is the error form, whose content the
   * clients show, with a note that the call itself succeeded.
   */
  function expectBoundedErrorForm(r: Result) {
    expect(JSON.stringify(r).length).toBeLessThan(2 * MAX_MESSAGE_CHARS + 6_000);
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toBeUndefined();
    expect(textOf(r)).toContain('[spillway]');
    expect(textOf(r)).toContain('the call itself succeeded');
  }

  function expectBoundedAndValid(name: string, r: Result) {
    expect(JSON.stringify(r).length).toBeLessThan(2 * MAX_MESSAGE_CHARS + 6_000);
    expect(r.isError).not.toBe(true);
    const validate = ajv.getValidator(schemas.get(name) as never);
    expect(validate(r.structuredContent).valid, JSON.stringify(r.structuredContent).slice(0, 300)).toBe(true);
  }

  it('read_text_file on a 300 KB file: bounded, schema-valid, saved exactly', async () => {
    const [r, d] = await both('read_text_file', { path: path.join(data, 'big.log') });
    expectBoundedAndValid('read_text_file', r);
    expect(textOf(r)).toContain('[spillway]');
    // The spill message is also what structuredContent.content says, for clients that read that instead.
    expect((r.structuredContent as { content: string }).content).toContain('[spillway]');
    const spill = spillOf(r)!;
    expect(JSON.parse(fs.readFileSync(spill.payloadPath!, 'utf8'))).toEqual(d);
    expect(textOf(d)).toBe(log);
    // --profile reaches the guard: the limit was measured with cl100k
    expect((JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { estimate: { profile: string } }).estimate.profile).toBe('cl100k');
  });

  it('spillway_read returns exact line ranges and character slices of the spilled text', async () => {
    const [r] = await both('read_text_file', { path: path.join(data, 'big.log') });
    const p = spillOf(r)!.payloadPath!;
    const lines = log.split('\n');
    const slice = await proxy.client.callTool({ name: 'spillway_read', arguments: { path: p, startLine: 1000, endLine: 1010 } });
    const body = textOf(slice).split('\n');
    expect(body.slice(0, 11)).toEqual(lines.slice(999, 1010));
    expect(body[11]).toBe('[spillway_read: lines 1000–1010; next: startLine 1011]');
    const chars = await proxy.client.callTool({ name: 'spillway_read', arguments: { path: path.basename(p), offset: 5000, limit: 300 } });
    expect(textOf(chars).startsWith(log.slice(5000, 5300))).toBe(true);
    // A relative path from the session folder works as well as the absolute one.
    const rel = await proxy.client.callTool({ name: 'spillway_read', arguments: { path: `long_responses/${path.basename(p)}`, startLine: 1, endLine: 1 } });
    expect(textOf(rel).split('\n')[0]).toBe(lines[0]);
    // Past the end, and malformed ranges, are told, not thrown.
    const past = await proxy.client.callTool({ name: 'spillway_read', arguments: { path: p, startLine: 10_000_000 } });
    expect(textOf(past)).toMatch(/past the end/);
    const bad = await proxy.client.callTool({ name: 'spillway_read', arguments: { path: p, startLine: 5, offset: 3 } });
    expect(bad.isError).toBe(true);
  });

  it('spillway_grep finds the matching lines with context', async () => {
    const [r] = await both('read_text_file', { path: path.join(data, 'big.log') });
    const p = spillOf(r)!.payloadPath!;
    const lines = log.split('\n');
    const errors = lines.map((l, i) => [i + 1, l] as const).filter(([, l]) => l.includes(' ERROR '));
    const g = await proxy.client.callTool({ name: 'spillway_grep', arguments: { path: p, pattern: ' ERROR ', maxMatches: 5 } });
    const out = textOf(g).split('\n');
    expect(out.slice(0, 5)).toEqual(errors.slice(0, 5).map(([n, l]) => `${n}: ${l}`));
    expect(out[5]).toBe(`[spillway_grep: ${errors.length} matching lines in ${lines.length - 1}; the first 5 shown (raise maxMatches or narrow the pattern)]`);
    const withContext = await proxy.client.callTool({ name: 'spillway_grep', arguments: { path: p, pattern: `line ${errors[0]![0]}:`, context: 1 } });
    const n = errors[0]![0];
    expect(textOf(withContext).split('\n').slice(0, 3)).toEqual([`${n - 1}- ${lines[n - 2]}`, `${n}: ${lines[n - 1]}`, `${n + 1}- ${lines[n]}`]);
    const re = await proxy.client.callTool({ name: 'spillway_grep', arguments: { path: p, pattern: 'ERROR line \\d+7:', regex: true, maxMatches: 500 } });
    expect(textOf(re).split('\n').filter((l) => /^\d+: /.test(l))).toEqual(
      errors.filter(([, l]) => /ERROR line \d+7:/.test(l)).map(([n, l]) => `${n}: ${l}`),
    );
    for (const pattern of ['(', '(a+)+$']) {
      const bad = await proxy.client.callTool({ name: 'spillway_grep', arguments: { path: p, pattern, regex: true } });
      expect(bad.isError, pattern).toBe(true);
    }
  });

  it('read_media_file on a PNG: the image is saved as an asset, byte-identical', async () => {
    const [r, d] = await both('read_media_file', { path: path.join(data, 'picture.png') });
    expectBoundedErrorForm(r);
    const spill = spillOf(r)!;
    expect(spill).toBeDefined();
    const meta = JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { assets: Array<{ path: string; mimeType: string; sha256: string }> };
    const asset = meta.assets.find((a) => a.mimeType === 'image/png');
    expect(asset).toBeDefined();
    expect(fs.readFileSync(asset!.path).equals(png)).toBe(true);
    expect(textOf(r)).toContain(path.basename(asset!.path));
    // The direct result carries the same image, twice (content and structuredContent).
    expect((d.content[0] as { data: string }).data).toBe(png.toString('base64'));
  });

  it('read_media_file on a WAV: the audio is saved as an asset, byte-identical', async () => {
    const [r] = await both('read_media_file', { path: path.join(data, 'sound.wav') });
    expectBoundedErrorForm(r);
    const meta = JSON.parse(fs.readFileSync(spillOf(r)!.metaPath!, 'utf8')) as { assets: Array<{ path: string; mimeType: string }> };
    const asset = meta.assets.find((a) => /wav/.test(a.mimeType));
    expect(asset, JSON.stringify(meta.assets)).toBeDefined();
    expect(fs.readFileSync(asset!.path).equals(wav)).toBe(true);
  });

  it('directory_tree on a big folder: bounded, schema-valid, saved exactly, greppable', async () => {
    const [r, d] = await both('directory_tree', { path: path.join(data, 'tree') });
    expectBoundedAndValid('directory_tree', r);
    const p = spillOf(r)!.payloadPath!;
    expect(JSON.parse(fs.readFileSync(p, 'utf8'))).toEqual(d);
    const g = await proxy.client.callTool({ name: 'spillway_grep', arguments: { path: p, pattern: '"name": "package-17"' } });
    expect(textOf(g)).toMatch(/^\d+: +"name": "package-17",/);
  });

  it('spillway_query turns a spilled JSON list into rows to filter and group', async () => {
    const [r] = await both('directory_tree', { path: path.join(data, 'tree') });
    const p = spillOf(r)!.payloadPath!;
    const q = await proxy.client.callTool({ name: 'spillway_query', arguments: { path: p, where: ['name~package-1'], select: ['name', 'type'], sort: ['name'], limit: 20 } });
    expect(q.isError).not.toBe(true);
    const answer = JSON.parse(textOf(q)) as { handle: string; rows: Array<{ name: string; type: string }>; total?: number; receipt?: { rows: number } };
    const expected = Array.from({ length: 30 }, (_, i) => `package-${i}`).filter((n) => n.includes('package-1')).sort();
    expect(answer.rows.map((x) => x.name)).toEqual(expected);
    expect(answer.rows.every((x) => x.type === 'directory')).toBe(true);
    expect(answer.receipt?.rows).toBe(30);
    // A later query can use the handle alone.
    const grouped = await proxy.client.callTool({ name: 'spillway_query', arguments: { handle: answer.handle, groupBy: ['type'], aggregate: ['count'] } });
    expect(JSON.parse(textOf(grouped)).rows).toEqual([{ type: 'directory', count: 30 }]);
  });

  it('spillway_query reads a spilled text as lines', async () => {
    const [r] = await both('read_text_file', { path: path.join(data, 'big.log') });
    const q = await proxy.client.callTool({ name: 'spillway_query', arguments: { path: spillOf(r)!.payloadPath!, where: ['~ ERROR '], limit: 3 } });
    const answer = JSON.parse(textOf(q)) as { rows: unknown[]; total?: number };
    expect(answer.total).toBe(log.split('\n').filter((l) => l.includes(' ERROR ')).length);
    expect(answer.rows.length).toBe(3);
  });

  it('a small text carrying a data URL: the blob is cut out to an asset, the rest reaches the client (inline-assets)', async () => {
    const thumb = makePng(24, 7);
    const note = `note: thumbnail attached\n<img src="data:image/png;base64,${thumb.toString('base64')}">\nend of note\n`;
    fs.writeFileSync(path.join(data, 'note.md'), note);
    expect(Buffer.byteLength(note)).toBeLessThan(12_000); // under the limit by size: it used to pass as is
    const [r, d] = await both('read_text_file', { path: path.join(data, 'note.md') });
    expect(JSON.stringify(d)).toContain(thumb.toString('base64'));
    expect(JSON.stringify(r)).not.toContain(thumb.toString('base64').slice(0, 200));
    expect(textOf(r)).toContain('note: thumbnail attached');
    expect(textOf(r)).toContain('end of note');
    const spill = spillOf(r)!;
    expect(spill.action).toBe('inline-assets');
    const meta = JSON.parse(fs.readFileSync(spill.metaPath!, 'utf8')) as { assets: Array<{ path: string; mimeType: string }> };
    expect(fs.readFileSync(meta.assets.find((a) => a.mimeType === 'image/png')!.path).equals(thumb)).toBe(true);
    expectBoundedAndValid('read_text_file', r);
  });

  it('a small image that fits passes untouched (clients show it as media)', async () => {
    const small = makePng(8, 3);
    fs.writeFileSync(path.join(data, 'small.png'), small);
    const [r, d] = await both('read_media_file', { path: path.join(data, 'small.png') });
    expect(r).toEqual(d);
  });

  it('passes small results untouched', async () => {
    fs.writeFileSync(path.join(data, 'small.txt'), 'tiny file\n');
    const [r, d] = await both('read_text_file', { path: path.join(data, 'small.txt') });
    expect(r).toEqual(d);
  });

  it('--projection adds the projected fields of a spilled result to the message', async () => {
    const specFile = path.join(tmpDir(), 'specs.json');
    fs.writeFileSync(specFile, JSON.stringify({ tools: { directory_tree: { keep: ['[*].name'] } } }));
    const p = await connectProxy(home, ['--session', path.join(tmpDir(), 's'), '--projection', specFile], FILESYSTEM, [data]);
    try {
      await p.client.listTools();
      const r = await p.client.callTool({ name: 'directory_tree', arguments: { path: path.join(data, 'tree') } });
      const text = textOf(r);
      const m = /Projected fields:\n(.+)$/m.exec(text);
      expect(m, text.slice(-500)).not.toBeNull();
      const projected = (JSON.parse(m![1]!) as Array<{ name: string }>).sort((a, b) => a.name.localeCompare(b.name));
      expect(projected).toEqual(
        fs.readdirSync(path.join(data, 'tree')).sort((a, b) => a.localeCompare(b)).map((name) => ({ name })),
      );
    } finally {
      await p.client.close();
    }
  });
});
