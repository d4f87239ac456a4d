/**
 * Issue 22: `spillway restore X | head -c 300` died with an unhandled EPIPE stack trace, and so did
 * every verb whose reader left early. Now each stops quietly with 141, the status a shell shows for
 * a tool killed by SIGPIPE (src/cli/pipes.ts). Real pipelines, run by bash with pipefail.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-pipes-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const env = { ...process.env, SPILLWAY_HOME: path.join(tmp, 'home') };
const SPILLWAY = [process.execPath, '--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts')].map((a) => `'${a}'`).join(' ');

/** `spillway <args> | <reader>` in bash: the verb's status, its stderr, and what the reader let through. */
function pipeline(args: string, reader: string, o: { stderrToPipe?: boolean } = {}) {
  const err = path.join(tmp, `err-${Math.random().toString(36).slice(2)}`);
  const redirect = o.stderrToPipe ? `2>&1 >/dev/null` : `2>'${err}'`;
  const script = `set -o pipefail; ${SPILLWAY} ${args} ${redirect} | ${reader}; echo "status=\${PIPESTATUS[0]}" >&2`;
  const r = spawnSync('bash', ['-c', script], { cwd: REPO, env, timeout: 120_000 });
  const status = Number(/status=(\d+)/.exec(r.stderr.toString())?.[1]);
  return { status, stderr: o.stderrToPipe ? '' : fs.readFileSync(err, 'utf8'), stdout: r.stdout };
}

const big = path.join(tmp, 'big.json');
fs.writeFileSync(big, JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `row ${i}`, tags: ['a', 'b'], note: 'x'.repeat(40) }))));
const session = path.join(tmp, 'session');
const indexRoot = path.join(tmp, 'sessions-root');
fs.mkdirSync(indexRoot);

describe('a verb whose reader went away exits quietly with 141', () => {
  it('spillway restore X | head -c 300: the first 300 bytes, no stack trace', () => {
    const g = spawnSync('bash', ['-c', `${SPILLWAY} guard '${big}' --session '${session}' --json`], { cwd: REPO, env });
    const payload = JSON.parse(g.stdout.toString()).payloadPath as string;
    const r = pipeline(`restore '${payload}'`, 'head -c 300');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(141);
    expect(r.stdout.equals(fs.readFileSync(big).subarray(0, 300))).toBe(true);
  });

  // A reader that has closed before the verb's first write: the write itself fails with EPIPE.
  it.each([
    ['estimate', `estimate '${big}' package.json`],
    ['estimate --json', `estimate --json '${big}'`],
    ['summarize', `summarize '${big}'`],
    ['guard (the spill message)', `guard '${big}' --session '${session}' --limit 500`],
    ['project --suggest', `project '${big}' --suggest`],
    ['handle put', `handle put '${big}' --session '${session}'`],
    ['index', `index '${indexRoot}' --db '${path.join(tmp, 'index.sqlite')}'`],
    ['--help', '--help'],
    ['--version', '--version'],
  ])('%s | head -c 0', (_what, args) => {
    const r = pipeline(args, 'head -c 0');
    // The verb's own report lines on stderr (index's progress, summarize's token line) may still show; no error does.
    expect(r.stderr).not.toMatch(/EPIPE|Error|spillway[^:]*: write|\n\s+at /);
    expect(r.status, r.stderr).toBe(141);
  });

  it('stderr into a closed pipe too (estimate of a missing file 2>&1 | head -c 0)', () => {
    const r = pipeline(`estimate '${path.join(tmp, 'missing')}'`, 'head -c 0', { stderrToPipe: true });
    expect(r.status).toBe(141);
  });

  it('a reader that stays: the same verbs still exit 0', () => {
    const r = pipeline(`estimate '${big}'`, 'cat >/dev/null');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('spillway mcp keeps serving when its stderr reader goes away', () => {
  it('a real MCP server behind the proxy, stderr closed at once: initialize and tools/list are still answered, exit 0', async () => {
    const server = path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', path.join(REPO, 'src', 'cli', 'main.ts'), 'mcp', '--session', path.join(tmp, 'mcp'), '--', process.execPath, server], {
      cwd: REPO,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // The server writes a banner to stderr at start: the proxy's write of it meets EPIPE.
    child.stderr.destroy();
    const send = (m: object) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
    let out = '';
    const answered = new Promise<void>((resolve) =>
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('"id":1') && !out.includes('"id":2')) send({ id: 2, method: 'tools/list', params: {} });
        if (out.includes('"id":2')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'pipes-test', version: '1' } } });
    // Before the fix the proxy died of the unhandled EPIPE (exit 1) before it answered.
    expect(await Promise.race([answered.then(() => 'answered'), exited.then((code) => `exited with ${code}`)])).toBe('answered');
    expect(out).toMatch(/"tools":\[/);
    child.stdin.end();
    expect(await exited).toBe(0);
  }, 120_000);
});
