/**
 * Issue 22, finding 2 and the index's part of finding 1: the index reads only what lies in its
 * root without a link on the way, and only regular files with one name. A `<project>/<sid>/`
 * folder that is a link (before the fix its `tool-results/*.txt` were read, and `listPayloads
 * {query}` returned snippets of the outside file), a FIFO, a socket, a device or a hard link in
 * place of a spill file, a transcript or a Spillway payload: none is read, and the scan finishes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/pipeline/index.js';
import { HOSTILE_KINDS, closePlanted, outsideSecret, plant } from '../helpers/hostile-files.js';
import { tmpDir, tmpIndex } from './helpers.js';

afterAll(closePlanted);

const SID = '0b5a3c1e-0000-4000-8000-00000000e001';
const PROJECT = '-home-user-proj';

/** A Claude Code session whose one tool result was spilled by Claude Code to `tool-results/<name>`. */
function claudeSession(projects: string, sid: string, spillName: string): { transcript: string; spillDir: string } {
  const dir = path.join(projects, PROJECT);
  fs.mkdirSync(dir, { recursive: true });
  const spillDir = path.join(dir, sid, 'tool-results');
  const transcript = path.join(dir, `${sid}.jsonl`);
  const stub = `<persisted-output>\nOutput too large (40KB). Full output saved to: ${path.join(spillDir, spillName)}\n\nPreview (first 2KB):\nline\n</persisted-output>`;
  const lines = [
    { type: 'user', sessionId: sid, cwd: '/home/user/proj', timestamp: '2026-11-30T10:00:00.000Z', message: { role: 'user', content: 'look' } },
    { type: 'assistant', sessionId: sid, timestamp: '2026-11-30T10:00:01.000Z', message: { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_spilled', name: 'Bash', input: { command: 'cat big' } }] } },
    { type: 'user', sessionId: sid, timestamp: '2026-11-30T10:00:02.000Z', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_spilled', content: stub }] } },
  ];
  fs.writeFileSync(transcript, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return { transcript, spillDir };
}

async function indexed(projects: string): Promise<{ hits: (q: string) => number; texts: () => Promise<string[]>; warnings: string[] }> {
  const { index } = tmpIndex();
  index.addRoot(projects);
  const t0 = Date.now();
  const stats = await index.scan();
  await index.idle();
  expect(Date.now() - t0, 'the scan finished').toBeLessThan(30_000);
  return {
    hits: (q) => index.listPayloads({ query: q, limit: 10 }).rows.length,
    texts: async () => {
      const out: string[] = [];
      for (const r of index.listPayloads({ limit: 100 }).rows) {
        const c = await index.payloadContent(r.id);
        out.push(c.type === 'text' ? c.text : fs.readFileSync(c.path, 'utf8'));
      }
      return out;
    },
    warnings: stats.warnings,
  };
}

/** A Claude Code session (one spill, `out.txt`) in a fresh projects folder; its spill folder is not made. */
function newSession(): { projects: string; spillDir: string } {
  const projects = path.join(tmpDir(), 'projects');
  return { projects, spillDir: claudeSession(projects, SID, 'out.txt').spillDir };
}

/** `word` is searchable once and in a payload's text, or neither. */
async function expectFound(ix: Awaited<ReturnType<typeof indexed>>, word: string, found: boolean): Promise<void> {
  expect(ix.hits(word)).toBe(found ? 1 : 0);
  expect((await ix.texts()).some((t) => t.includes(word))).toBe(found);
}

describe('the Claude Code importer stays inside its root', () => {
  it('reads a spill file from a real tool-results folder (the control)', async () => {
    const { projects, spillDir } = newSession();
    fs.mkdirSync(spillDir, { recursive: true });
    fs.writeFileSync(path.join(spillDir, 'out.txt'), 'zebracontrolword '.repeat(3000));
    const ix = await indexed(projects);
    await expectFound(ix, 'zebracontrolword', true);
  });

  it('does not follow a <project>/<sid>/ folder that is a link: the outside spill file is neither read nor searchable', async () => {
    const { projects, spillDir } = newSession();
    const elsewhere = tmpDir('spillway-elsewhere-');
    fs.mkdirSync(path.join(elsewhere, 'tool-results'));
    fs.writeFileSync(path.join(elsewhere, 'tool-results', 'out.txt'), 'outsidesecretword '.repeat(3000));
    fs.symlinkSync(elsewhere, path.dirname(spillDir));
    const ix = await indexed(projects);
    await expectFound(ix, 'outsidesecretword', false);
  });

  it('does not follow a tool-results folder that is a link', async () => {
    const { projects, spillDir } = newSession();
    const elsewhere = tmpDir('spillway-elsewhere-');
    fs.writeFileSync(path.join(elsewhere, 'out.txt'), 'outsidesecretword '.repeat(3000));
    fs.mkdirSync(path.dirname(spillDir), { recursive: true });
    fs.symlinkSync(elsewhere, spillDir);
    const ix = await indexed(projects);
    expect(ix.hits('outsidesecretword')).toBe(0);
  });

  for (const kind of HOSTILE_KINDS) {
    it(`a spill file that is a ${kind} is not read, and the scan finishes`, async () => {
      const { projects, spillDir } = newSession();
      fs.mkdirSync(spillDir, { recursive: true });
      const secret = outsideSecret('outsidesecretword '.repeat(3000));
      await plant(path.join(spillDir, 'out.txt'), kind, secret.file);
      const ix = await indexed(projects);
      await expectFound(ix, 'outsidesecretword', false);
    });

    it(`a transcript that is a ${kind} is not read, and the scan finishes`, async () => {
      const projects = path.join(tmpDir(), 'projects');
      const { transcript } = claudeSession(projects, SID, 'out.txt');
      // Another real session, so the root still looks like Claude Code's projects folder.
      claudeSession(projects, '0b5a3c1e-0000-4000-8000-00000000e002', 'x.txt');
      const outside = outsideSecret();
      fs.copyFileSync(transcript, outside.file);
      fs.appendFileSync(outside.file, JSON.stringify({ type: 'user', sessionId: SID, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'outsidesecretword '.repeat(100) }] } }) + '\n');
      await plant(transcript, kind, outside.file);
      const ix = await indexed(projects);
      expect(ix.hits('outsidesecretword')).toBe(0);
    });
  }
});

describe('Spillway sessions: a planted payload is not read', () => {
  for (const kind of HOSTILE_KINDS) {
    it(`a payload file that is a ${kind} is not read, and the scan finishes`, async () => {
      const root = path.join(tmpDir(), 'sessions');
      const r = await guardLargeResult('ordinary line\n'.repeat(4000), { sessionPath: path.join(root, 's1'), toolName: 'victim', limitTokens: 1000 });
      const secret = outsideSecret('outsidesecretword '.repeat(3000));
      await plant(r!.payloadPath!, kind, secret.file);
      const ix = await indexed(root);
      expect(ix.hits('outsidesecretword')).toBe(0);
    });
  }
});
