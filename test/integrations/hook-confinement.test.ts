/**
 * Issue 22, findings 3 and "session_id": the hook reads Claude Code's spill files as the index
 * does (no linked `tool-results/` or `<session>/` folder, no FIFO, device or hard link), and a
 * `session_id` that is not a plain id never lands a spill in another session's folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { claudeCodeSessionDir, handleClaudeCodeHook, readPersisted } from '../../src/integrations/hooks/claude-code.js';
import { HOSTILE_KINDS, closePlanted, outsideSecret, plant } from '../helpers/hostile-files.js';
import { makeLog, tmpDir } from './helpers.js';

afterAll(closePlanted);

const SID = 'a1b2c3d4-5e6f-4a5b-8c9d-0e1f2a3b4c5d';

function claudeProject() {
  const projects = path.join(tmpDir(), 'projects');
  const project = path.join(projects, '-home-user-work');
  fs.mkdirSync(project, { recursive: true });
  const transcript = path.join(project, `${SID}.jsonl`);
  fs.writeFileSync(transcript, '');
  return { project, sessionDir: path.join(project, SID), toolResults: path.join(project, SID, 'tool-results'), transcript };
}

const input = (transcript: string) => ({ session_id: SID, transcript_path: transcript });

describe('readPersisted reads only what the index would', () => {
  it('reads a regular file in a real tool-results folder (the control)', async () => {
    const p = claudeProject();
    fs.mkdirSync(p.toolResults, { recursive: true });
    fs.writeFileSync(path.join(p.toolResults, 'out.txt'), 'inside');
    expect(await readPersisted(input(p.transcript), path.join(p.toolResults, 'out.txt'))).toEqual({ bytes: Buffer.from('inside') });
  });

  it('refuses a tool-results folder that is itself a link, and a linked <session>/ folder', async () => {
    for (const linked of ['toolResults', 'sessionDir'] as const) {
      const p = claudeProject();
      const secret = outsideSecret();
      const elsewhere = path.dirname(secret.file);
      if (linked === 'toolResults') {
        fs.mkdirSync(p.sessionDir);
        fs.symlinkSync(elsewhere, p.toolResults);
      } else {
        fs.mkdirSync(path.join(elsewhere, 'tool-results'));
        fs.renameSync(secret.file, path.join(elsewhere, 'tool-results', 'secret.txt'));
        fs.symlinkSync(elsewhere, p.sessionDir);
      }
      const r = await readPersisted(input(p.transcript), path.join(p.toolResults, 'secret.txt'));
      expect(r, linked).toHaveProperty('error');
      expect(JSON.stringify(r)).not.toContain(secret.text);
    }
  });

  for (const kind of HOSTILE_KINDS) {
    it(`refuses a ${kind} without blocking`, async () => {
      const p = claudeProject();
      fs.mkdirSync(p.toolResults, { recursive: true });
      const secret = outsideSecret();
      await plant(path.join(p.toolResults, 'out.txt'), kind, secret.file);
      const t0 = Date.now();
      const r = await readPersisted(input(p.transcript), path.join(p.toolResults, 'out.txt'));
      expect(Date.now() - t0).toBeLessThan(1000);
      expect(r).toHaveProperty('error');
      expect(JSON.stringify(r)).not.toContain(secret.text);
    });
  }

  it('a Bash result whose persisted file sits in a linked tool-results folder is saved as what the hook had, never the outside file', async () => {
    const p = claudeProject();
    const secret = outsideSecret(`SECRET ${makeLog(100_000)}`);
    fs.mkdirSync(p.sessionDir);
    fs.symlinkSync(path.dirname(secret.file), p.toolResults);
    const inline = makeLog(60_000).slice(0, 30_000);
    const sessionDir = path.join(tmpDir(), 'session');
    const ev = {
      ...input(p.transcript),
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'cat x' },
      tool_response: { stdout: inline, stderr: '', interrupted: false, isImage: false, persistedOutputPath: path.join(p.toolResults, 'secret.txt'), persistedOutputSize: 412_098 },
      tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
    };
    const out = await handleClaudeCodeHook(JSON.stringify(ev), { sessionDir });
    const saved = fs.readFileSync(out.guard!.payloadPath!, 'utf8');
    expect(saved).toBe(inline);
    expect(saved).not.toContain('SECRET');
  });
});

describe('a hook session_id that is not a plain id', () => {
  it('never names another session\'s folder, nor one outside the sessions root', () => {
    const root = path.join(tmpDir(), 'sessions');
    const victim = claudeCodeSessionDir(SID, root);
    expect(victim).toBe(path.join(root, `claude-code_${SID}`));
    const hostile = [`../${SID}`, `../claude-code_${SID}`, `${SID}/..`, `x/../${SID}`, `${SID}\u0000`, `.${SID}`, `${SID} `, '..', '/etc', `${SID}.`, 'a\\b'];
    const dirs = new Set<string>();
    for (const id of hostile) {
      const d = claudeCodeSessionDir(id, root);
      expect(d, id).not.toBe(victim);
      expect(path.dirname(d), id).toBe(root);
      expect(path.basename(d)).toMatch(/^claude-code_unsafe\.[0-9a-f]{32}$/);
      dirs.add(d);
    }
    expect(dirs.size, 'each odd id its own folder').toBe(hostile.length);
  });

  it('a spill for session_id "../<other id>" lands in a folder of its own', async () => {
    const root = path.join(tmpDir(), 'sessions');
    const ev = {
      session_id: `../${SID}`,
      transcript_path: `/home/user/.claude/projects/-p/${SID}.jsonl`,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'cat big' },
      tool_response: { stdout: makeLog(200_000), stderr: '', interrupted: false, isImage: false },
      tool_use_id: 'toolu_01ABCDEFGHJKLMNPQRSTUVWX',
    };
    const out = await handleClaudeCodeHook(JSON.stringify(ev), { sessionsRoot: root });
    expect(out.guard?.payloadPath).toBeDefined();
    expect(out.guard!.payloadPath!.startsWith(path.join(root, `claude-code_${SID}`) + path.sep)).toBe(false);
    expect(fs.existsSync(path.join(root, `claude-code_${SID}`))).toBe(false);
    expect(path.relative(root, out.guard!.payloadPath!).split(path.sep)[0]).toMatch(/^claude-code_unsafe\./);
  });
});
