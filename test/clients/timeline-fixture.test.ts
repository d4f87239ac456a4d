/**
 * The timeline fixtures are what test/clients/timeline-fixture.ts makes of a run (SOURCES.md says
 * so): running the rule on them again drops nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixtureText } from './timeline-fixture.js';
import { ROOT, listFiles } from './harness.js';

const TL = path.join(ROOT, 'test', 'index', 'fixtures', 'timeline');

describe('timeline fixtures', () => {
  const files = listFiles(TL).filter((f) => f.endsWith('.jsonl'));
  it.each(files)('%s holds no prompt_snapshot and one api-request-shape at most', (f) => {
    const text = fs.readFileSync(path.join(TL, f), 'utf8');
    expect(fixtureText(text).dropped).toBe(0);
    expect(text.includes('"prompt_snapshot"')).toBe(false);
  });

  it('the rule drops every prompt_snapshot and the shapes after the first, and renames the run folders', () => {
    const lines = [
      { type: 'attachment', attachment: { type: 'prompt_snapshot', systemPrompt: ['x'] } },
      { type: 'api-request-shape', shape: { a: 1 } },
      { type: 'user', cwd: '/tmp/r-cwd-1', message: { content: 'read /tmp/r-cwd-1/data/a.txt' } },
      { type: 'api-request-shape', shape: { a: 2 } },
    ].map((o) => JSON.stringify(o));
    const { text, dropped } = fixtureText(lines.join('\n'), { cwd: '/tmp/r-cwd-1', home: '/tmp/r-home' });
    expect(dropped).toBe(2);
    expect(text.trimEnd().split('\n')).toEqual([lines[1], lines[2]!.replaceAll('/tmp/r-cwd-1', '/home/dev/project')]);
  });
});
