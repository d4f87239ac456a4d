/**
 * Issue 30 item 5, in the browser: the limit tuner's "Apply to config…" opens a dialog that shows
 * the rules file's diff (plain text, + and − lines coloured) and the tool's effective rule before
 * and after; Apply writes the project's `.spillway.json` and the dialog names the file and the rule.
 * The file is read back from disk. The session is the timeline's real Claude Code fixture, moved to
 * a project folder of this test's own (its transcript's `cwd`), so "this project" is a real folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openInspector, REPO_ROOT } from './helpers/serve.js';
import { serveSuite, SHOTS } from './helpers/suite.js';

const FIXTURE = path.join(REPO_ROOT, 'test', 'index', 'fixtures', 'timeline', 'claude-code-pct5');
const FIXTURE_CWD = '/home/dev/project';

const s = serveSuite(
  'apply-config',
  (tmp) => {
    const project = path.join(fs.realpathSync(tmp), 'work', 'project');
    fs.mkdirSync(project, { recursive: true });
    const root = path.join(tmp, 'projects');
    for (const f of fs.readdirSync(FIXTURE, { recursive: true, withFileTypes: true })) {
      if (!f.isFile()) continue;
      const from = path.join(f.parentPath, f.name);
      const to = path.join(root, path.relative(FIXTURE, from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      // The transcript ran in the test's project folder (a JSON string: the path has no character JSON escapes).
      fs.writeFileSync(to, fs.readFileSync(from, 'utf8').replaceAll(`"cwd":"${FIXTURE_CWD}"`, `"cwd":${JSON.stringify(project)}`));
    }
    return [root];
  },
  { reindex: true },
);

const projectOf = () => path.join(fs.realpathSync(s.tmp), 'work', 'project');

async function openTuner(): Promise<Page> {
  const page = await openInspector(s.browser, await s.serve.freshUrl(), { colorScheme: 'light' });
  const row = page.locator('.session-row').first();
  await row.waitFor({ timeout: 60_000 });
  await row.click();
  await page.keyboard.press('Control+2');
  await page.getByTestId('tuner-stats').waitFor({ timeout: 60_000 });
  return page;
}

describe('Apply to config… from the limit tuner', () => {
  it("shows the project file's diff and the effective rule, writes it, and names the file written", async () => {
    const project = projectOf();
    const file = path.join(project, '.spillway.json');
    // The project already has a rule for another tool: the diff keeps it and adds `*`.
    fs.writeFileSync(file, `${JSON.stringify({ rules: { Read: { template: 'errors' } } }, null, 2)}\n`);
    const page = await openTuner();
    await page.getByLabel('Limit in tokens').fill('8000');
    await page.getByTestId('apply-limit').click();
    const dialog = page.getByTestId('apply-config');
    await dialog.waitFor();
    const diff = dialog.getByTestId('apply-config-diff');
    await diff.waitFor({ timeout: 30_000 });
    const text = (await diff.textContent()) ?? '';
    expect(text).toContain(`--- ${file}`);
    expect(text).toContain(`+++ ${file}`);
    expect(text).toContain('+    "*": {');
    expect(text).toContain('+      "limit": 8000');
    expect(text).toContain('     "Read": {');
    // The added lines are coloured as additions, a removed line as a removal; each is text, never markup.
    const added = dialog.locator('.cfg-diff-add');
    expect(await added.count()).toBeGreaterThan(0);
    expect(await added.first().evaluate((e) => getComputedStyle(e).color)).not.toBe(await dialog.locator('.cfg-diff-ctx').first().evaluate((e) => getComputedStyle(e).color));
    expect(await diff.locator('*:not(span)').count()).toBe(0);
    // "This project" is the session's folder, chosen by default; the rule goes from the default to the project's.
    expect(await dialog.getByRole('radio', { name: /This project/ }).isChecked()).toBe(true);
    const beforeAfter = dialog.getByTestId('apply-config-before-after');
    const limitRow = beforeAfter.locator('tr[data-setting="limit"]');
    expect(await limitRow.textContent()).toContain('12000');
    expect(await limitRow.textContent()).toContain('8000');
    expect(await limitRow.textContent()).toContain('project: *');
    await page.screenshot({ path: path.join(SHOTS, 'apply-config-diff.png') });

    await dialog.getByTestId('apply-config-apply').click();
    await dialog.getByTestId('apply-config-done').waitFor({ timeout: 30_000 });
    expect(await dialog.getByTestId('apply-config-path').textContent()).toBe(file);
    expect(await dialog.getByTestId('apply-config-effective').locator('tr[data-setting="limit"]').textContent()).toContain('8000');
    // Read back: exactly what the diff showed.
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ rules: { Read: { template: 'errors' }, '*': { limit: 8000 } } });
    await page.screenshot({ path: path.join(SHOTS, 'apply-config-written.png') });
    await page.context().close();
  }, 180_000);

  it('a file changed after the preview is not overwritten: the dialog says so and previews again', async () => {
    const project = projectOf();
    const file = path.join(project, '.spillway.json');
    fs.writeFileSync(file, '{"rules":{}}\n');
    const page = await openTuner();
    await page.getByLabel('Limit in tokens').fill('6000');
    await page.getByTestId('apply-limit').click();
    const dialog = page.getByTestId('apply-config');
    await dialog.getByTestId('apply-config-diff').waitFor({ timeout: 30_000 });
    // Another editor writes the file while the dialog is open.
    const theirs = '{"rules":{"Bash":{"limit":3000}}}\n';
    fs.writeFileSync(file, theirs);
    await dialog.getByTestId('apply-config-apply').click();
    const error = dialog.getByTestId('apply-config-error');
    await error.waitFor({ timeout: 30_000 });
    expect(await error.textContent()).toContain('changed since the preview');
    expect(fs.readFileSync(file, 'utf8')).toBe(theirs);
    await error.getByRole('button', { name: 'Preview again' }).click();
    await expect.poll(async () => (await dialog.getByTestId('apply-config-diff').textContent()) ?? '', { timeout: 30_000 }).toContain('"Bash": {');
    await dialog.getByTestId('apply-config-apply').click();
    await dialog.getByTestId('apply-config-done').waitFor({ timeout: 30_000 });
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ rules: { Bash: { limit: 3000 }, '*': { limit: 6000 } } });
    await page.context().close();
  }, 180_000);
});
