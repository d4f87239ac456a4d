/**
 * The library used from another project, the two ways the README gives: `npm pack` and installing
 * the tarball, and `npm link`. Each runs the README's library snippet verbatim in a scratch folder
 * outside the checkout (only `result` is defined before it, and `forModel` printed after it).
 *
 * The tarball is packed from the built dist/lib (`--ignore-scripts`: `prepare` would rebuild and
 * fetch Electron); its dependencies come from npm's cache where it has them (`--prefer-offline`),
 * else the registry. Install scripts are skipped: the package root needs no native module.
 * Measured here: pack ~10 s, install of the tarball (188 packages) 52–78 s, npm link ~15 s.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PKG = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const NPM_FLAGS = ['--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline', '--loglevel=error'];

function scratch(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }));
  return dir;
}

function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 280_000 });
}

/** The README's library snippet, as written. */
function readmeSnippet(): string {
  const at = README.indexOf('## The library call');
  const m = /```js\n([\s\S]*?)```/.exec(README.slice(at));
  expect(at >= 0 && m, 'README has a "## The library call" section with a ```js block').toBeTruthy();
  return m![1]!;
}

/** A tool result well over the limit: a price list, as JSON text. */
function priceList(): string {
  return JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, product: `plan-${i % 7}`, price_usd: (i % 50) + 0.99, region: ['eu', 'us', 'apac'][i % 3] })));
}

/** Run the snippet in `dir` (where `spillway` is installed or linked) on `input`, verbatim as a file of its own, as the README says; what the model gets. */
function runSnippet(dir: string, inputFile: string): string {
  fs.writeFileSync(path.join(dir, 'guard-demo.mjs'), readmeSnippet());
  // From the scratch folder, with nothing of the checkout on the way: NODE_PATH unset.
  return execFileSync(process.execPath, ['guard-demo.mjs', inputFile], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_PATH: '' }, timeout: 120_000 });
}

/** Start the installed `spillway serve` in `dir` (a private app data, no default roots), fetch its page and the first script it loads, stop it. */
async function serveOnce(dir: string): Promise<{ index: string; asset: number }> {
  const child = spawn(path.join(dir, 'node_modules', '.bin', 'spillway'), ['serve', '--port', '0', '--no-default-roots'], {
    cwd: dir,
    env: { ...process.env, SPILLWAY_HOME: path.join(dir, 'app-data'), SPILLWAY_TOKEN: 'scratch-token-0123456789', BROWSER: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  try {
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 60_000);
      const seen = (d: Buffer) => {
        out += d.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+)\//.exec(out);
        if (m) (clearTimeout(timer), resolve(m[1]!));
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', seen);
      child.once('exit', (code) => (clearTimeout(timer), reject(new Error(`serve exited with ${code}:\n${out}`))));
    });
    const index = await (await fetch(`${origin}/`)).text();
    const script = /<script type="module"[^>]*src="([^"]+)"/.exec(index)?.[1];
    const asset = script ? (await fetch(new URL(script, origin))).status : 0;
    return { index, asset };
  } finally {
    child.kill('SIGTERM');
  }
}

const summaryOf = (message: string) => message.slice(message.indexOf('\nSummary ('));

function expectStructuralSummary(message: string) {
  expect(message).toContain('[spillway] The result of `mcp__browser__screenshot` is too large');
  expect(message).toMatch(/\nSummary \(structural\/structural, focus: what does the page say about pricing\):\n/);
  expect(message).toMatch(/Schema \(path: type ×count, stats\):[\s\S]*\$\[\*\]\.price_usd: number ×3,000/);
  expect(message).not.toContain('\nPreview:\n');
}

describe('the library from another project', () => {
  const built = path.join(ROOT, PKG.exports['.'].import);

  it('npm pack, the tarball installed in a scratch folder: the README snippet runs as written and the message carries the structural summary, as the CLI’s does; its `spillway serve` serves the inspector', async () => {
    expect(fs.existsSync(built), `${built} missing: run npm run build:lib`).toBe(true);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-pack-'));
    const packed = JSON.parse(npm(['pack', '--ignore-scripts', '--json', '--pack-destination', out, '--loglevel=error'], ROOT)) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = packed[0]!.files.map((f) => f.path);
    expect(files).toContain('dist/lib/index.js');
    expect(files).toContain('bin/spillway.js');
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
    const tgz = path.join(out, packed[0]!.filename);

    const dir = scratch('spillway-consumer-');
    npm(['install', ...NPM_FLAGS, tgz], dir);
    expect(fs.lstatSync(path.join(dir, 'node_modules', 'spillway')).isSymbolicLink()).toBe(false);
    const input = path.join(dir, 'prices.json');
    fs.writeFileSync(input, priceList());
    const message = runSnippet(dir, input);
    expectStructuralSummary(message);
    expect(fs.readdirSync(path.join(dir, '.spillway', 'session-42', 'long_responses')).some((f) => f.endsWith('.meta.json'))).toBe(true);

    // The installed CLI gives the same summary for the same result: one default.
    const cli = execFileSync(
      path.join(dir, 'node_modules', '.bin', 'spillway'),
      ['guard', input, '--session', path.join(dir, 'cli-session'), '--tool', 'mcp__browser__screenshot', '--intent', 'what does the page say about pricing', '--context-window', '200000'],
      { cwd: dir, encoding: 'utf8', timeout: 120_000 },
    );
    expect(summaryOf(cli).trim()).toBe(summaryOf(message).trim());

    // The installed hook: bin/spillway.js reaches it through the package's public `spillway/hook`, not a path into dist.
    expect(files).toContain(PKG.exports['./hook'].import.slice(2));
    const spillway = path.join(dir, 'node_modules', '.bin', 'spillway');
    const hookEvent = (tool_response: unknown) =>
      JSON.stringify({ session_id: 'pack-1', cwd: dir, hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'cat prices.json' }, tool_response });
    const bashOut = (stdout: string) => ({ stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false });
    const hook = (client: string, input: string) => execFileSync(spillway, ['hook', client, '--session', path.join(dir, `hook-${client}`)], { cwd: dir, input, encoding: 'utf8', timeout: 120_000 });
    expect(hook('claude-code', hookEvent(bashOut('ok\n')))).toBe('');
    expect(JSON.parse(hook('claude-code', hookEvent(bashOut(priceList())))).hookSpecificOutput.updatedToolOutput.stdout).toMatch(/^\[spillway\] The result of `Bash` is too large/);
    expect(hook('codex', hookEvent('ok\n'))).toBe('');
    expect(JSON.parse(hook('codex', hookEvent(priceList()))).reason).toMatch(/^\[spillway\] The result of `exec_command` is too large/);
    const entries = execFileSync(process.execPath, ['--input-type=module', '-e', "const h = await import('spillway/hook'); const c = await import('spillway/cli'); console.log(typeof h.runHookCommand, typeof c.main)"], { cwd: dir, encoding: 'utf8' });
    expect(entries.trim()).toBe('function function');

    // The installed `spillway serve` serves the inspector itself: the built renderer ships in the tarball.
    expect(files).toContain('dist/renderer/index.html');
    // Install scripts were skipped, so better-sqlite3 has no binary: the checkout's build of the same
    // pinned version, for this same Node, stands in for the one `npm install` would compile.
    const sqliteBuild = path.join(dir, 'node_modules', 'better-sqlite3', 'build');
    if (!fs.existsSync(path.join(sqliteBuild, 'Release', 'better_sqlite3.node'))) fs.cpSync(path.join(ROOT, 'node_modules', 'better-sqlite3', 'build'), sqliteBuild, { recursive: true });
    const served = await serveOnce(dir);
    expect(served.index).toContain('<script type="module"');
    expect(served.index).not.toContain('not built');
    expect(served.asset).toBe(200);
  }, 400_000);

  it('npm link: `spillway` on PATH and the package resolvable in a scratch folder; the README snippet runs as written', () => {
    expect(fs.existsSync(built), `${built} missing: run npm run build:lib`).toBe(true);
    // A private global prefix, so the machine's global folder is never touched.
    const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-prefix-'));
    const env = { npm_config_prefix: prefix };
    npm(['link', ...NPM_FLAGS], ROOT, env);
    expect(fs.realpathSync(path.join(prefix, 'bin', 'spillway'))).toBe(fs.realpathSync(path.join(ROOT, 'bin', 'spillway.js')));
    const dir = scratch('spillway-linked-');
    npm(['link', ...NPM_FLAGS, 'spillway'], dir, env);
    expect(fs.realpathSync(path.join(dir, 'node_modules', 'spillway'))).toBe(fs.realpathSync(ROOT));
    const input = path.join(dir, 'prices.json');
    fs.writeFileSync(input, priceList());
    expectStructuralSummary(runSnippet(dir, input));
  }, 300_000);

  it('the README names the Node version package.json requires', () => {
    const min = /^>=(\d+\.\d+)$/.exec(PKG.engines.node)?.[1];
    expect(min, 'engines.node is ">=X.Y"').toBeTruthy();
    expect(README).toContain(`Node ${min}`);
  });
});
