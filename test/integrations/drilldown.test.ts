import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isInside } from '../../src/pipeline/index.js';
import { queryValue, resolvePayload, textView } from '../../src/integrations/mcp/drilldown.js';
import { defaultSessionDir, serverNameFromCommand } from '../../src/integrations/mcp/session.js';
import { tmpDir } from './helpers.js';

function session() {
  const dir = tmpDir();
  const lr = path.join(dir, 'long_responses');
  fs.mkdirSync(path.join(lr, 'assets'), { recursive: true });
  const payload = path.join(lr, '20261130T081530123Z_read_file_3f9a1c2e_0.json');
  fs.writeFileSync(payload, '{"content":[{"type":"text","text":"a\\nb"}]}');
  fs.writeFileSync(path.join(lr, '20261130T081530123Z_read_file_3f9a1c2e_0.meta.json'), JSON.stringify({ payloadFile: path.basename(payload) }));
  const outside = path.join(dir, 'outside.txt');
  fs.writeFileSync(outside, 'TOPSECRET');
  return { dir, lr, payload: fs.realpathSync(payload), outside };
}

describe('resolvePayload', () => {
  it('finds a payload by absolute path, session-relative path, file name, or its meta sidecar', async () => {
    const s = session();
    const name = path.basename(s.payload);
    for (const ref of [s.payload, `long_responses/${name}`, name, name.replace('.json', '.meta.json')]) {
      expect(await resolvePayload(s.dir, ref)).toBe(s.payload);
    }
  });

  it('never resolves outside long_responses/, whatever the path (property)', async () => {
    const s = session();
    fs.symlinkSync(s.outside, path.join(s.lr, 'evil-link.json'));
    fs.symlinkSync(s.dir, path.join(s.lr, 'assets', 'up'));
    const segment = fc.constantFrom('..', '.', 'long_responses', 'assets', 'up', 'evil-link.json', 'outside.txt', path.basename(s.payload), '', '%2e%2e', '..\\..');
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 6 }), fc.boolean(), async (parts, absolute) => {
        const ref = (absolute ? `${s.lr}/` : '') + parts.join('/');
        let got: string;
        try {
          got = await resolvePayload(s.dir, ref);
        } catch (err) {
          expect(err).toBeInstanceOf(Error); // refused, with a reason
          return;
        }
        expect(isInside(fs.realpathSync(s.lr), got)).toBe(true);
        expect(fs.readFileSync(got, 'utf8')).not.toContain('TOPSECRET');
      }),
      { numRuns: 300 },
    );
  });

  it('says so when nothing was spilled yet', async () => {
    await expect(resolvePayload(tmpDir(), 'x.json')).rejects.toThrow(/nothing has been spilled/);
  });
});

describe('views of a saved MCP result', () => {
  it('textView joins text blocks and text resources; other files are themselves', () => {
    const raw = JSON.stringify({ content: [{ type: 'text', text: 'one' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'resource', resource: { uri: 'x:', text: 'two' } }] });
    expect(textView(raw)).toBe('one\ntwo');
    expect(textView('plain\ntext')).toBe('plain\ntext');
    expect(textView('{"rows":[1]}')).toBe('{"rows":[1]}');
  });

  it('queryValue prefers structured arrays, then JSON carried in text, then text lines', () => {
    expect(queryValue(JSON.stringify({ content: [{ type: 'text', text: 'x' }], structuredContent: [{ a: 1 }] }))).toEqual([{ a: 1 }]);
    expect(queryValue(JSON.stringify({ content: [{ type: 'text', text: '[{"b":2}]' }], structuredContent: { content: '[{"b":2}]' } }))).toEqual([{ b: 2 }]);
    expect(queryValue(JSON.stringify({ content: [{ type: 'text', text: 'l1\nl2' }], structuredContent: { content: 'l1\nl2' } }))).toBe('l1\nl2');
    expect(queryValue('just text')).toBe('just text');
  });
});

describe('session naming', () => {
  it('names a default session by start time and server name, under the sessions root', () => {
    expect(defaultSessionDir('example-servers/everything', new Date('2026-11-30T08:15:30.123Z'), '/root/sessions')).toBe(
      '/root/sessions/20261130T081530123Z_example-servers_everything',
    );
    expect(serverNameFromCommand('npx', ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'])).toBe('server-filesystem');
    expect(serverNameFromCommand('node', ['/x/node_modules/@modelcontextprotocol/server-everything/dist/index.js'])).toBe('server-everything');
    expect(serverNameFromCommand('/usr/local/bin/my-server', ['--port', '1'])).toBe('my-server');
    expect(serverNameFromCommand('uvx', ['mcp-server-git', '--repository', '.'])).toBe('mcp-server-git');
  });
});
