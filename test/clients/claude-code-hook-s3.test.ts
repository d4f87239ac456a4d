/**
 * `spillway hook claude-code --store s3://…` inside the real Claude Code binary, against a real
 * Ceph RADOS gateway (test/helpers/ceph.ts). Claude Code's Read and Bash cannot open `s3://…`:
 * the message must name a local copy, and the model's follow-up Read and `grep -n` of the path it
 * was told must work. The assertions are on what Claude Code sent the model next.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardLargeResult, restoreFromStore } from '../../src/pipeline/index.js';
import { S3SpillStore } from '../../src/pipeline/store/s3/index.js';
import { startAnthropicDouble, type AnthropicDouble } from './doubles/anthropic.js';
import { hookAttachments, runClaudeCode, shapeWarnings, sourceHookCommand, type ClaudeRun } from './claude.js';
import { tmpDir } from './harness.js';
import { s3Suite } from '../helpers/ceph.js';
import { useGateway } from '../helpers/ceph-fixture.js';

const RUN_MS = 180_000;
const NEEDLE = 'line 777: the quarterly report lists revenue 10101';

function makeText(bytes: number): string {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `line ${i}: the quarterly report lists revenue ${i * 13} for region ${i % 17}\n`;
  return s;
}

const textOf = (block: any): string =>
  typeof block?.content === 'string' ? block.content : Array.isArray(block?.content) ? block.content.map((b: any) => (b.type === 'text' ? b.text : `<${b.type}>`)).join('\n') : '';

/** The path a message tells the model to open. */
const absolutePath = (message: string) => /Absolute path: (\S+)/.exec(message)?.[1];

s3Suite('the hook with an S3 store', () => {
  const f = useGateway('cc-hook-s3');
  let store: string;
  beforeAll(() => {
    store = `s3://${f.gw.bucket}/p`;
  });

  it('the library with localCopy: the payload in the bucket (with its sidecar) and a local copy the message names', async () => {
    const session = path.join(f.tmp, 'lib-session');
    const text = makeText(80_000);
    const r = (await guardLargeResult(text, { sessionPath: session, toolName: 'read_file', store, localCopy: true }))!;
    expect(r.errors).toEqual([]);
    expect(r.payloadPath).toMatch(new RegExp(`^s3://${f.gw.bucket}/p/lib-session/long_responses/`));
    expect(r.localPath).toBe(path.join(session, '.local-copy', 'long_responses', path.basename(r.payloadPath!)));
    expect(fs.readFileSync(r.localPath!, 'utf8')).toBe(text);
    expect(absolutePath(r.message)).toBe(r.localPath);
    expect(r.message).toContain(`durable copy: ${r.payloadPath}`);
    expect(r.message).toContain(`spillway restore ${r.payloadPath} -o`);
    // The sidecar is in the bucket only: the local folder holds no spill to list or sync twice.
    expect(fs.readdirSync(path.dirname(r.localPath!)).filter((n) => n.endsWith('.meta.json'))).toEqual([]);
    expect(fs.existsSync(path.join(session, 'long_responses'))).toBe(false);
    const { store: st, metaKey } = S3SpillStore.locate(r.payloadPath!);
    expect((await restoreFromStore(st, metaKey)).toString('utf8')).toBe(text);
    // Without the option, nothing is written locally (the bucket is the home).
    const other = path.join(f.tmp, 'lib-session-2');
    const r2 = (await guardLargeResult(text, { sessionPath: other, toolName: 'read_file', store }))!;
    expect(r2.localPath).toBeUndefined();
    expect(absolutePath(r2.message)).toBe(r2.payloadPath);
    expect(fs.existsSync(other)).toBe(false);
  });

  describe('inside Claude Code, whose Read and Bash open local files only', () => {
    let d: AnthropicDouble;
    let run: ClaudeRun;
    let text: string;
    beforeAll(async () => {
      const cwd = tmpDir('spillway-cc-s3-cwd-');
      text = makeText(70_000);
      fs.writeFileSync(path.join(cwd, 'report.txt'), text);
      const told = (body: any) => {
        const blocks = (body?.messages ?? []).flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).filter((b: any) => b?.type === 'tool_result');
        return absolutePath(textOf(blocks.find((b: any) => b.tool_use_id === 'toolu_01s3read'))) ?? 'missing';
      };
      d = await startAnthropicDouble({
        steps: [
          { toolUses: [{ id: 'toolu_01s3read', name: 'Read', input: { file_path: path.join(cwd, 'report.txt') } }] },
          (body) => ({ toolUses: [{ id: 'toolu_01s3again', name: 'Read', input: { file_path: told(body), offset: 770, limit: 10 } }] }),
          (body) => ({ toolUses: [{ id: 'toolu_01s3grep', name: 'Bash', input: { command: `grep -n "${NEEDLE}" ${told(body)}`, description: 'find line 777' } }] }),
          { text: 'done' },
        ],
      });
      // The default set-up: no --allowedTools, so 2.1.328 offers no Grep tool.
      run = await runClaudeCode({
        baseUrl: d.origin,
        prompt: 'read report.txt',
        cwd,
        settings: { hooks: { PostToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: sourceHookCommand(['--store', store]), timeout: 120 }] }] } },
        env: f.gw.env,
        timeoutMs: RUN_MS,
      });
    }, RUN_MS + 60_000);

    afterAll(async () => {
      await d?.close();
    });

    it('the run completed and Claude Code accepted the answer', () => {
      expect(run.timedOut).toBe(false);
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(shapeWarnings(run)).toEqual([]);
      expect(hookAttachments(run).filter((a) => a.type !== 'hook_success').map((a) => `${a.type}: ${a.stderr ?? a.content}`)).toEqual([]);
    });

    it('the message names a local copy to read, with the bucket URL as the durable copy', () => {
      const got = textOf(d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01s3read')!.block);
      expect(got).toContain('[spillway] The result of `Read` is too large');
      const local = absolutePath(got)!;
      expect(local).toMatch(/^\/.*\/\.local-copy\/long_responses\/[^/]+\.txt$/);
      expect(fs.readFileSync(local, 'utf8')).toBe(text);
      expect(got).toMatch(new RegExp(`durable copy: s3://${f.gw.bucket}/p/claude-code_${run.sessionId}/long_responses/`));
    });

    it("the model's follow-up Read of the path it was told succeeds: the tool_result carries the file's lines", () => {
      const got = textOf(d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01s3again')!.block);
      expect(got).toContain(NEEDLE);
      expect(got).not.toMatch(/does not exist|<tool_use_error>|No such file/i);
    });

    it('advice names only tools the client offers: no Grep tool here, and the `grep -n` in Bash it names finds the line', () => {
      const tools = d.mainTurns()[0]!.body.tools.map((t: any) => t.name) as string[];
      expect(tools).toContain('Read');
      expect(tools).toContain('Bash');
      expect(tools).not.toContain('Grep');
      const msg = textOf(d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01s3read')!.block);
      expect(msg).toContain('with Read (offset/limit');
      expect(msg).toContain('`grep -n "<pattern>" <path>` with Bash');
      expect(msg).not.toMatch(/search it with Grep/);
      const grep = textOf(d.toolResults().find((t) => t.block.tool_use_id === 'toolu_01s3grep')!.block);
      expect(grep).toContain(`778:${NEEDLE}`);
    });
  });
});
