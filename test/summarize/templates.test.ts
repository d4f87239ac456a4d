import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deleteTemplate, listTemplates, loadTemplate, renderPrompt, saveTemplate, TemplateError } from '../../src/summarize/index.js';

const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-tpl-'));

describe('templates', () => {
  it('lists built-ins, saves, loads, overrides and deletes user templates as <name>.md files', () => {
    const dir = path.join(fresh(), 'templates'); // not created yet: save makes it
    expect(listTemplates(dir).map((t) => t.name)).toEqual(['default', 'errors', 'reduce', 'terse']);
    expect(loadTemplate('default', dir).builtIn).toBe(true);
    const saved = saveTemplate(dir, 'incident-report', 'Write an incident report about {{focus}}.\n{{payload}}');
    expect(saved.path).toBe(path.join(dir, 'incident-report.md'));
    expect(fs.readFileSync(saved.path!, 'utf8')).toContain('incident report');
    expect(loadTemplate('incident-report', dir)).toMatchObject({ name: 'incident-report', builtIn: false });
    // override a built-in, then delete the override: the built-in is back
    saveTemplate(dir, 'default', 'my default {{payload}}');
    expect(loadTemplate('default', dir).body).toBe('my default {{payload}}');
    expect(listTemplates(dir).find((t) => t.name === 'default')!.builtIn).toBe(false);
    deleteTemplate(dir, 'default');
    expect(loadTemplate('default', dir).builtIn).toBe(true);
    deleteTemplate(dir, 'incident-report');
    expect(() => loadTemplate('incident-report', dir)).toThrow(/no template named incident-report/);
    expect(() => deleteTemplate(dir, 'terse')).toThrow(/built-in/);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses names that could escape the folder', () => {
    const dir = fresh();
    for (const bad of ['../x', '..', 'a/b', '/etc/passwd', 'a.b', '', ' x', 'x\u0000', 'a\\b', '.hidden', 'x'.repeat(65)]) {
      expect(() => saveTemplate(dir, bad, 'body'), bad).toThrow(TemplateError);
      expect(() => loadTemplate(bad, dir), bad).toThrow(TemplateError);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('a symlink pointing outside the folder is not followed', () => {
    const dir = fresh();
    const outside = path.join(fresh(), 'secret.md');
    fs.writeFileSync(outside, 'secret');
    fs.symlinkSync(outside, path.join(dir, 'evil.md'));
    expect(() => loadTemplate('evil', dir)).toThrow(/outside/);
    expect(listTemplates(dir).map((t) => t.name)).not.toContain('evil');
  });

  it('rendering fills placeholders once and appends the payload when the template has none', () => {
    const p = renderPrompt('Focus on {{focus}} for {{tool}} in {{maxTokens}} tokens.', { payload: 'DATA {{focus}}', focus: 'errors', tool: 't', maxTokens: 99 });
    expect(p.user.startsWith('Focus on errors for t in 99 tokens.')).toBe(true);
    expect(p.user).toContain('DATA {{focus}}');
    expect(p.user.indexOf('DATA')).toBeGreaterThan(p.user.indexOf('99 tokens'));
  });
});
