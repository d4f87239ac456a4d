import type { OpenIndexOptions } from '../../src/index/index.js';
import { openTimelines } from '../../src/timeline/index.js';
import { tmpIndex } from '../index/helpers.js';

export { REPO, copyTree, tmpDir, tmpIndex, waitFor } from '../index/helpers.js';

/** An index on a real SQLite file in a temp folder with the timeline layer over it, opened as the service opens them (the timeline before the first scan). */
export function tmpTimelines(dbPath?: string, o: Omit<OpenIndexOptions, 'dbPath' | 'onEvent'> = {}) {
  const r = tmpIndex(dbPath, o);
  return { ...r, timelines: openTimelines(r.index) };
}
