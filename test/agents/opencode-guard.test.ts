import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { handleOpenCodeEvent } from '../../src/agents/opencode/guard.js';
import { restorePayload } from '../../src/pipeline/index.js';

/** A private XDG data folder with OpenCode's tool-output/, the full output, and the event the plugin would pipe for it. */
function scene() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-oc-hook-'));
  const env = { ...process.env, XDG_DATA_HOME: path.join(root, 'data'), SPILLWAY_HOME: path.join(root, 'app') };
  const dir = path.join(root, 'data', 'opencode', 'tool-output');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'tool_abc');
  const full = Array.from({ length: 10_000 }, (_, i) => `line ${i} of the output ${'.'.repeat(20)}`).join('\n') + '\n';
  // OpenCode 1.18.33's cut of a bash output: its head, then the last 50 KB of lines (measured).
  const shown = `...output truncated...\n\nFull output saved to: ${file}\n\n${full.slice(-50_000).replace(/^[^\n]*\n/, '')}`;
  const event = JSON.stringify({ input: { tool: 'bash', sessionID: 'ses_x', callID: 'call_1', args: { command: 'cat big' } }, output: { title: 'cat big', output: shown, metadata: { outputPath: file, truncated: true, exit: 0 } } });
  return { root, env, file, full, event, session: path.join(root, 'spills') };
}

async function spilled(session: string): Promise<{ bytes: Buffer; meta: Record<string, any> }> {
  const lr = path.join(session, 'long_responses');
  const meta = JSON.parse(fs.readFileSync(path.join(lr, fs.readdirSync(lr).find((f) => f.endsWith('.meta.json'))!), 'utf8'));
  return { meta, bytes: await restorePayload(path.join(lr, meta.payloadFile)) };
}

describe('spillway hook opencode: the full output OpenCode is still writing', () => {
  it('waits until the file ends with the lines OpenCode showed, so the spill is whole (the real binary ran the hook mid-write)', async () => {
    const s = scene();
    fs.writeFileSync(s.file, s.full.slice(0, 262_144));
    setTimeout(() => fs.appendFileSync(s.file, s.full.slice(262_144)), 300);
    const out = await handleOpenCodeEvent(s.event, { env: s.env, sessionDir: s.session, guard: { limitTokens: 2000 } });
    expect(out.output?.output).toMatch(/^\[spillway\]/);
    const { bytes } = await spilled(s.session);
    expect(bytes.length).toBe(Buffer.byteLength(s.full));
    expect(bytes.toString('utf8')).toBe(s.full);
  });

  it('a file that never completes: what it holds is saved after the wait, and the message says it is partial', async () => {
    const s = scene();
    fs.writeFileSync(s.file, s.full.slice(0, 100_000));
    const out = await handleOpenCodeEvent(s.event, { env: s.env, sessionDir: s.session, guard: { limitTokens: 2000 }, settleMs: 200 });
    expect(out.output?.output).toMatch(/still writing/);
    const { bytes } = await spilled(s.session);
    expect(bytes.toString('utf8')).toBe(s.full.slice(0, 100_000));
  });
});
