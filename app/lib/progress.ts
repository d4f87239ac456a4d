/**
 * Index progress as the UI shows it. A scan runs in two phases: `list` (every payload becomes
 * listed, sortable and openable) and then `fulltext` (search fills in behind). Several roots may
 * be in flight at once; each phase's counts are summed over them.
 */
import type { IndexProgressEvent } from '../../src/service/contract.js';

export interface PhaseProgress {
  done: number;
  total: number;
  roots: number;
}

export interface ProgressSummary {
  list?: PhaseProgress;
  fulltext?: PhaseProgress;
}

export const PHASE_LABEL = { list: 'Listing', fulltext: 'Making searchable' } as const;

export function summarizeProgress(progress: Record<string, IndexProgressEvent>, rootId?: string): ProgressSummary {
  const out: ProgressSummary = {};
  for (const e of Object.values(progress)) {
    if (rootId && e.rootId !== rootId) continue;
    const phase = e.phase ?? 'list';
    const p = (out[phase] ??= { done: 0, total: 0, roots: 0 });
    p.done += Math.min(e.done, e.total);
    p.total += e.total;
    p.roots++;
  }
  return out;
}

/** 0…1; 0 while the total is not known yet (a root still being walked). */
export const share = (p: PhaseProgress) => (p.total > 0 ? Math.min(1, p.done / p.total) : 0);
