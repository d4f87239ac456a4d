/**
 * A sessions root of spilled payloads for the experiment tests: each payload is a log with a marker
 * (`PAYLOAD-007`) the provider doubles find in the prompt, so a request is told to its item.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spillOne } from '../helpers/gen-sessions.js';
import { indexFolders } from '../../src/service/offline.js';

export interface ExperimentFixture {
  dir: string;
  home: string;
  db: string;
  root: string;
  count: number;
  cleanup(): void;
}

export const marker = (i: number) => `PAYLOAD-${String(i).padStart(3, '0')}`;

/** The item a request to a double is for, by the marker in its prompt. */
export function markerIn(body: unknown): string | undefined {
  return JSON.stringify(body).match(/PAYLOAD-\d{3}/)?.[0];
}

export function payloadText(i: number): string {
  const lines: string[] = [`${marker(i)} build log`];
  for (let k = 0; k < 400; k++) {
    lines.push(
      k === 137 + (i % 50)
        ? `2026-11-30T10:00:${String(k % 60).padStart(2, '0')}Z ERROR order=${98_000 + i} payment declined code=E${4000 + i}`
        : `2026-11-30T10:00:${String(k % 60).padStart(2, '0')}Z INFO step ${k} of job ${i} took ${(k * 7) % 97} ms`,
    );
  }
  return lines.join('\n');
}

/** `count` payloads in two sessions, spilled by the real guard (tool Bash for even, Grep for odd; intent "payment errors" on every third). */
export async function makeFixture(count: number, prefix = 'spillway-exp-'): Promise<ExperimentFixture> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const home = path.join(dir, 'home');
  const root = path.join(dir, 'sessions');
  const db = path.join(dir, 'index.sqlite');
  const t0 = Date.parse('2026-11-30T10:00:00Z');
  for (let i = 0; i < count; i++) {
    const session = path.join(root, `session-${i % 2}`);
    fs.mkdirSync(session, { recursive: true });
    await spillOne(session, {
      tool: i % 2 === 0 ? 'Bash' : 'Grep',
      input: { command: `make job-${i}` },
      intent: i % 3 === 0 ? 'payment errors' : undefined,
      text: payloadText(i),
      time: new Date(t0 + i * 1000),
      limitTokens: 1_000,
    });
  }
  await indexFolders({ dirs: [root], dbPath: db, env: { SPILLWAY_HOME: home } });
  return { dir, home, db, root, count, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
