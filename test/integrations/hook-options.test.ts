import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claudeProject, makeLog, makePng, ROOT, testEnv, tmpDir } from './helpers.js';

/**
 * Every option of `spillway hook claude-code` reaches the guard, whichever way the hook gets to it:
 * a Bash result over the limit, a Bash output Claude Code persisted (read back whole), one it
 * persisted where the hook may not read (known to be large: only the inline part is saved), a
 * small result carrying a media block, and an MCP result with an image. Run through the real
 * bin/spillway.js (its fast path hands these to the full CLI), with Claude Code's stdin JSON.
 */

const BIN = path.join(ROOT, 'bin', 'spillway.js');
const SESSION_ID = 'c0ffee00-1234-4abc-9def-0123456789ab';
const STORE = 's3://spillway-hook-options/spills';

/** A port nothing listens on: the bucket named by --store is down, so the guard falls back (and says so). */
async function deadPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function event(tool_name: string, tool_response: unknown, transcript_path: string) {
  return {
    session_id: SESSION_ID,
    transcript_path,
    cwd: '/home/user/work',
    permission_mode: 'default',
    hook_event_name: 'PostToolUse',
    tool_name,
    tool_input: { command: 'x', description: 'Look at it' },
    tool_response,
    tool_use_id: 'toolu_01OPTIONSOPTIONSOPTIONS',
  };
}
const bash = (stdout: string, extra: Record<string, unknown> = {}) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false, ...extra });

interface Sidecar {
  action: string;
  limitTokens: number;
  estimate: { profile: string; strategy: string };
  assets: Array<{ source: string }>;
  errors?: string[];
  message: string;
  payloadFile: string;
}

function runBin(input: unknown, args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync(process.execPath, [BIN, 'hook', 'claude-code', ...args], { input: JSON.stringify(input), env, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

function sidecars(session: string): Sidecar[] {
  const dir = path.join(session, 'long_responses');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.meta.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Sidecar);
}

describe('spillway hook claude-code: every option reaches the guard on every path', () => {
  it('--store, --profile, --strategy, --limit and --cut-media, for Bash (plain, persisted, persisted but unreadable), a media block in Bash, and MCP image blocks', async () => {
    const home = tmpDir();
    const env = {
      ...testEnv(home),
      AWS_ENDPOINT_URL: `http://127.0.0.1:${await deadPort()}`,
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_REGION: 'us-east-1',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      SPILLWAY_STORE: '',
    };
    const flags = ['--limit', '3000', '--profile', 'o200k', '--strategy', 'chars4', '--store', STORE, '--cut-media', '--summarizer', 'none'];
    const { toolResults, transcript } = claudeProject(SESSION_ID);

    const whole = makeLog(200_000);
    fs.writeFileSync(path.join(toolResults, 'b1.txt'), whole);
    const png = makePng(40, 3).toString('base64');
    const mediaJson = JSON.stringify({ content: [{ type: 'image', data: png, mimeType: 'image/png' }, { type: 'text', text: 'rendered' }] });
    const cases: Array<{ name: string; input: unknown; action: string; media?: boolean }> = [
      { name: 'Bash over the limit', input: event('Bash', bash(makeLog(20_000)), transcript), action: 'spill' },
      {
        name: 'Bash that Claude Code persisted',
        input: event('Bash', bash(whole.slice(0, 30_000), { persistedOutputPath: path.join(toolResults, 'b1.txt'), persistedOutputSize: whole.length }), transcript),
        action: 'spill',
      },
      {
        // Claude Code judged it too large and kept it where the hook may not read: the hook knows it is large.
        name: 'Bash persisted where the hook may not read',
        input: event('Bash', bash(whole.slice(0, 30_000), { persistedOutputPath: path.join(toolResults, 'gone.txt'), persistedOutputSize: whole.length }), transcript),
        action: 'spill',
      },
      { name: 'a small Bash output holding an MCP image block', input: event('Bash', bash(mediaJson), transcript), action: 'inline-assets', media: true },
      {
        name: 'MCP result: a small text and an image block',
        input: event('mcp__fs__read_media_file', [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'a picture' }], transcript),
        action: 'inline-assets',
        media: true,
      },
    ];

    for (const c of cases) {
      const session = path.join(tmpDir(), 'session');
      const r = runBin(c.input, ['--session', session, ...flags], env);
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(0);
      expect(r.stdout, `${c.name}: ${r.stderr}`).toContain('updatedToolOutput');
      const metas = sidecars(session);
      expect(metas, c.name).toHaveLength(1);
      const meta = metas[0]!;
      expect(meta, c.name).toMatchObject({ action: c.action, limitTokens: 3000, estimate: { profile: 'o200k', strategy: 'chars4' } });
      // --store: the bucket was tried first; it is down, so the spill went to the session folder, and the record says so.
      expect(meta.errors?.some((e) => e.includes(`The store ${STORE}`) && e.includes('was unavailable')), `${c.name}: ${JSON.stringify(meta.errors)}`).toBe(true);
      expect(meta.message, c.name).toContain(STORE);
      if (c.media) {
        // --cut-media: the image is cut out to an asset, and the answer carries no base64 and no image block.
        expect(meta.assets.length, c.name).toBe(1);
        expect(r.stdout, c.name).not.toContain(png.slice(0, 200));
        const answer = (JSON.parse(r.stdout) as { hookSpecificOutput: { updatedToolOutput: unknown } }).hookSpecificOutput.updatedToolOutput;
        if (Array.isArray(answer)) expect(answer.map((b: { type: string }) => b.type), c.name).toEqual(['text']);
      }
      if (c.name === 'Bash that Claude Code persisted') expect(fs.readFileSync(path.join(session, 'long_responses', meta.payloadFile), 'utf8')).toBe(whole);
    }

    // The same flags without --cut-media: the media blocks that fit pass untouched, so the flag is what cut them above.
    for (const c of cases.filter((x) => x.media)) {
      const session = path.join(tmpDir(), 'session');
      const r = runBin(c.input, ['--session', session, ...flags.filter((f) => f !== '--cut-media')], env);
      expect(r, c.name).toMatchObject({ code: 0, stdout: '' });
      expect(sidecars(session), c.name).toEqual([]);
    }
  }, 240_000);
});
