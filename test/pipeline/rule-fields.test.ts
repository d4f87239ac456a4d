import { describe, expect, it } from 'vitest';
import { normalizeGuardOptions, ruleFields } from '../../src/pipeline/options.js';

/** The rule a caller hands the guard goes into the sidecar: only known sources and bounded strings. */
describe('the rule a sidecar records', () => {
  it('keeps a rule as the rules give it', () => {
    const rule = { source: 'project', match: 'Bash', file: '/p/.spillway.json', settings: { limit: { source: 'project', match: 'Bash', file: '/p/.spillway.json' }, template: { source: 'default' } } };
    expect(ruleFields(rule)).toEqual(rule);
    expect(normalizeGuardOptions({ sessionPath: '/s', rule: rule as never }).rule).toEqual(rule);
  });

  it('drops what is not a rule, whatever the caller hands over', () => {
    expect(ruleFields(undefined)).toBeUndefined();
    expect(ruleFields('project')).toBeUndefined();
    expect(ruleFields({ source: 'evil' })).toBeUndefined();
    expect(ruleFields({ source: 'user', match: 'x'.repeat(5_000), file: 42, settings: { limit: { source: 'nope' }, model: { source: 'flag', extra: 1 }, other: { source: 'flag' } } })).toEqual({ source: 'user', settings: { model: { source: 'flag' } } });
    const hostile = {
      get rule() {
        throw new Error('no');
      },
      sessionPath: '/s',
    };
    expect(normalizeGuardOptions(hostile as never).rule).toBeUndefined();
  });
});
