/**
 * Writes test/index/fixtures/timeline/gemini from a real Gemini CLI run against the double:
 * `SPILLWAY_GEMINI_CLI=…/bundle/gemini.js npx tsx test/clients/record-gemini.ts`. Prints the
 * context the double reported per main request (promptTokenCount), for SOURCES.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startGeminiDouble } from './doubles/gemini.js';
import { countedUsage, runGemini } from './gemini.js';
import { ROOT, tmpDir } from './harness.js';
import { textFile } from './timeline-runs.js';
import { writeFixture } from './timeline-fixture.js';

const cwd = tmpDir('spillway-tl-gm-cwd-');
const files = [0, 1, 2].map((i) => textFile(cwd, `r${i}.txt`, 20_000, `gm${i}`));
const shell = textFile(cwd, 'b.txt', 8_000, 'gmb');
const { usage, main } = countedUsage();
const double = await startGeminiDouble({
  steps: [...files.map((f) => ({ call: { name: 'read_file', args: { file_path: f } } })), { call: { name: 'run_shell_command', args: { command: `cat ${shell}`, description: 'show b.txt' } } }, { text: 'done' }],
  usage,
});
const run = await runGemini({ baseUrl: double.origin, prompt: 'read the files one by one', cwd, timeoutMs: 240_000 });
await double.close();
console.log('code', run.code, 'ms', run.ms, 'chats', run.chats, 'main', main, 'requests', double.requests.map((r) => r.url));
if (run.code !== 0) console.log(run.stdout.slice(-2000), run.stderr.slice(-2000));
const to = path.join(ROOT, 'test', 'index', 'fixtures', 'timeline', 'gemini');
fs.rmSync(to, { recursive: true, force: true });
console.log(writeFixture(path.join(run.home, '.gemini', 'tmp'), to, { home: run.home, cwd }));
