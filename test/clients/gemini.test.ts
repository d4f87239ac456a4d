/**
 * Gemini CLI 0.61.0 (the real bundle from node_modules) against the scripted Gemini API double, then
 * indexed: the run's chat is found as a Gemini session, each model call is one turn whose context is
 * the promptTokenCount the double reported, and every tool call is one payload. The frozen fixture
 * (test/index/fixtures/timeline/gemini) holds one such run; this re-runs the client, so a change of
 * its format shows here first.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openIndex, type SpillIndex } from '../../src/index/index.js';
import { openTimelines } from '../../src/timeline/index.js';
import { startGeminiDouble } from './doubles/gemini.js';
import { GEMINI_CLI_VERSION, countedUsage, geminiBinary, runGemini } from './gemini.js';
import { CLIENTS_NM, tmpDir } from './harness.js';
import { textFile } from './timeline-runs.js';

const RUN_MS = 300_000;
const indexes: SpillIndex[] = [];
afterAll(async () => {
  for (const i of indexes.splice(0)) await i.close();
});

describe(`Gemini CLI ${GEMINI_CLI_VERSION}, re-run`, () => {
  it('is the version the fixture was written by', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(CLIENTS_NM, '@google', 'gemini-cli', 'package.json'), 'utf8'));
    expect(pkg.version).toBe(GEMINI_CLI_VERSION);
    expect(geminiBinary()).toBeDefined();
  });

  it('two reads and a shell call: one turn per model call at the reported context, one payload per call', async () => {
    const cwd = tmpDir('spillway-gm-cwd-');
    const files = [0, 1].map((i) => textFile(cwd, `r${i}.txt`, 20_000, `gm${i}`));
    const shell = textFile(cwd, 'b.txt', 8_000, 'gmb');
    const { usage, main } = countedUsage();
    const double = await startGeminiDouble({
      steps: [...files.map((f) => ({ call: { name: 'read_file', args: { file_path: f } } })), { call: { name: 'run_shell_command', args: { command: `cat ${shell}`, description: 'show b.txt' } } }, { text: 'done' }],
      usage,
    });
    try {
      const run = await runGemini({ baseUrl: double.origin, prompt: 'read the files one by one', cwd, timeoutMs: RUN_MS });
      expect(run.code, run.stderr.slice(-2000)).toBe(0);
      expect(run.chats.length).toBeGreaterThan(0);
      expect(main.length).toBe(4);

      const index = openIndex({ dbPath: path.join(tmpDir('spillway-gm-db-'), 'index.sqlite') });
      const timelines = openTimelines(index);
      indexes.push(index);
      index.addRoot(path.join(run.home, '.gemini', 'tmp'));
      const scan = await index.scan();
      expect(scan.warnings).toEqual([]);
      const [s, ...rest] = index.listSessions();
      expect(rest).toEqual([]);
      expect(s).toMatchObject({ client: 'Gemini CLI' });
      const t = (await timelines.timeline({ sessionId: s!.id }))!;
      expect(t.turns.filter((x) => x.kind === 'main').map((x) => x.context)).toEqual(main);
      const payloads = index.listPayloads({ sessionId: s!.id }).rows;
      expect(payloads.map((p) => p.tool).sort()).toEqual(['read_file', 'read_file', 'run_shell_command']);
      const read = payloads.find((p) => p.tool === 'read_file')!;
      expect(read.bytes).toBeGreaterThan(15_000);
    } finally {
      await double.close();
    }
  }, RUN_MS + 60_000);
});
