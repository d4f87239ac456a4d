import { describe, expect, it } from 'vitest';
import type { SetOwn, Slice } from '../../app/store/slice.js';
import { createAppStore } from '../../app/store/index.js';
import { createMemoryApi } from './memory-api.js';

/**
 * A slice writes only its own fields and sees only what it declares of the others. The first
 * half is checked by the compiler (`npm test` typechecks before vitest runs): each
 * `@ts-expect-error` below fails the build if the line it covers ever compiles.
 */
interface Counter {
  count: number;
  bump(): void;
}

describe('store slices', () => {
  it('a slice cannot write another slice\'s field, nor read one it did not declare', () => {
    const writes: unknown[] = [];
    const set: SetOwn<Counter> = (patch) => void writes.push(patch);
    const make: Slice<Counter, { view: string }> = (setOwn, get) => ({
      count: 0,
      bump() {
        setOwn({ count: 1 });
        // @ts-expect-error view belongs to another slice: change it through that slice's action
        setOwn({ view: 'analyze' });
        // @ts-expect-error an action is not state to set
        setOwn({ bump: () => {} });
        void get().view; // declared in Needs: readable
        // @ts-expect-error not declared in Needs
        void get().selectedSessionId;
      },
    });
    make(set, () => ({ count: 0, bump() {}, view: 'payloads' }), { api: createMemoryApi() }).bump();
    expect(writes).toEqual([{ count: 1 }, { view: 'analyze' }, { bump: expect.any(Function) }]);
  });

  it('the store built from the slices still moves state across them through actions', async () => {
    const api = createMemoryApi();
    const store = createAppStore(api);
    await store.getState().analyze({ name: 'x.json', text: '{"a":1}' }).catch(() => undefined);
    expect(store.getState().view).toBe('analyze');
    store.getState().selectSession(null);
    expect(store.getState().view).toBe('payloads');
  });
});
