// @vitest-environment jsdom
import './setup.js';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { diffLineClass } from '../../app/components/ApplyConfigDialog.js';
import { createMemoryApi } from './memory-api.js';
import { renderApp } from './render.js';

/**
 * The Summaries tab's "Apply to config…": a run's template, for the payload's tool, previewed as the
 * rules file's diff and written with the hashes of that preview (the e2e walk drives the tuner's).
 */
describe('Apply to config… from the Summaries tab', () => {
  it("previews the run's template for the payload's tool in the session's project, then applies it", async () => {
    const sessionList = [
      { id: 's0', rootId: 'r0', name: 'session-000', path: '/tmp/root/session-0', kind: 'claude-code' as const, readOnly: true, payloadCount: 0, assetCount: 0, totalBytes: 0, totalTokens: 0, project: '/home/me/webapp' },
    ];
    const api = createMemoryApi({ payloads: 4, sessionList });
    const store = await renderApp(api);
    await act(() => store.getState().openPayload('p2'));
    fireEvent.click(screen.getByRole('tab', { name: /Summaries/ }));
    await waitFor(() => expect((screen.getByRole('button', { name: 'Run summary' }) as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(screen.getByRole('button', { name: 'Run summary' }));
    await waitFor(() => expect(store.getState().detail?.summaryRuns).toHaveLength(1));
    fireEvent.click(await screen.findByTestId('apply-template'));
    const dialog = await screen.findByTestId('apply-config');
    const diff = await within(dialog).findByTestId('apply-config-diff');
    const tool = store.getState().detail!.row.tool;
    expect(api.calls.find((c) => c.method === 'previewConfig')?.req).toEqual({ scope: 'project', project: '/home/me/webapp', change: { tool, set: { template: 'default' } } });
    expect(diff.textContent).toContain('+      "template": "default"');
    // Lines are text in spans, coloured by kind: no markup from the file's text.
    expect([...diff.children].every((c) => c.tagName === 'SPAN')).toBe(true);
    expect(diff.querySelector('.cfg-diff-add')!.textContent).toMatch(/^\+/);
    // The user's file instead: previewed again.
    fireEvent.click(within(dialog).getByRole('radio', { name: /Yours/ }));
    await waitFor(() => expect(within(dialog).getByTestId('apply-config-diff').textContent).toContain('+++ /tmp/app/config.json'));
    fireEvent.click(within(dialog).getByTestId('apply-config-apply'));
    const path = await within(dialog).findByTestId('apply-config-path');
    expect(path.textContent).toBe('/tmp/app/config.json');
    const applied = api.calls.find((c) => c.method === 'applyConfig')!.req as { baseHash: string; proposedHash: string; scope: string };
    expect(applied.scope).toBe('user');
    expect(applied.baseHash).toBe('absent');
    expect(applied.proposedHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(within(dialog).getByTestId('apply-config-effective').textContent).toContain('user: ' + tool);
  });

  it('classes each diff line by its kind', () => {
    expect(['--- a', '+++ b', '@@ -1 +1,2 @@', '+x', '-y', ' z', 'Index: f', '====', '\\ No newline at end of file'].map(diffLineClass)).toEqual([
      'cfg-diff-file',
      'cfg-diff-file',
      'cfg-diff-hunk',
      'cfg-diff-add',
      'cfg-diff-del',
      'cfg-diff-ctx',
      'cfg-diff-file',
      'cfg-diff-file',
      'cfg-diff-ctx',
    ]);
  });
});
