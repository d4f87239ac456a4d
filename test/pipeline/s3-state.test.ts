import { describe, expect, it } from 'vitest';
import { S3_DOWN_BACKOFF_MS } from '../../src/pipeline/store/s3/config.js';
import { createS3State, downReason, resetStoreHealth, s3State } from '../../src/pipeline/store/s3/index.js';

// The S3 backend's process-wide state lives in one object: these pin what it owns and what a reset forgets.
describe('S3 process state', () => {
  it('skips a store that failed until the back-off has passed, then tries it again', () => {
    const st = createS3State();
    st.health.markDown('s', 'connection refused', 1_000);
    expect(st.health.downReason('s', 1_000 + S3_DOWN_BACKOFF_MS - 1)).toMatch(/^connection refused \(not retried for 1 s\)$/);
    expect(st.health.downReason('other', 1_000)).toBeUndefined();
    expect(st.health.downReason('s', 1_000 + S3_DOWN_BACKOFF_MS)).toBeUndefined();
    // Expired entries are forgotten, not revived by an earlier clock.
    expect(st.health.downReason('s', 1_000)).toBeUndefined();
    st.health.markDown('s', 'x', 5);
    st.health.markUp('s');
    expect(st.health.downReason('s', 5)).toBeUndefined();
  });

  it('hands each abandoned claim out once, oldest first', () => {
    const st = createS3State();
    st.claims.leave('k', { stem: 'a', token: '1' });
    st.claims.leave('k', { stem: 'a_2', token: '2' });
    expect(st.claims.take('k')).toEqual({ stem: 'a', token: '1' });
    expect(st.claims.take('k')).toEqual({ stem: 'a_2', token: '2' });
    expect(st.claims.take('k')).toBeUndefined();
  });

  it('instances are independent, and reset forgets health and claims', () => {
    const a = createS3State();
    const b = createS3State();
    a.health.markDown('s', 'down');
    a.claims.leave('k', { stem: 'a', token: '1' });
    expect(b.health.downReason('s')).toBeUndefined();
    expect(b.claims.take('k')).toBeUndefined();
    a.reset();
    expect(a.health.downReason('s')).toBeUndefined();
    expect(a.claims.take('k')).toBeUndefined();
  });

  it("the store's face reads and resets the process's one instance", () => {
    s3State.health.markDown('face', 'down');
    expect(downReason('face')).toMatch(/^down/);
    resetStoreHealth();
    expect(downReason('face')).toBeUndefined();
  });
});
