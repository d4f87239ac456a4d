import { diffLines, diffWordsWithSpace, type ChangeObject } from 'diff';
import { useMemo } from 'react';
import type { RunScores, SummaryRun } from '../../../src/service/contract.js';
import { formatMs, formatPercent, formatTime } from '../../lib/format.js';

/** Word diffs above this many chars get slow; longer summaries fall back to a line diff. */
const WORD_DIFF_MAX_CHARS = 40_000;

export function diffRuns(a: string, b: string): ChangeObject<string>[] {
  if (a.length + b.length > WORD_DIFF_MAX_CHARS) return diffLines(a, b);
  return diffWordsWithSpace(a, b);
}

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '—' : formatPercent(v, 0));

/** One run's scores without a judge, in a line (docs/scores.md). */
export function scoresLine(s: RunScores | undefined): string {
  if (!s?.scores) return s?.note ?? '';
  const { readBackRecall: rb, anchorRecall: a, inventedAnchors: inv, compression: c } = s.scores;
  return [
    `read-back ${rb ? pct(rb.score) : '—'}`,
    `anchors ${pct(a.score)}`,
    `invented ${inv.count}${inv.count ? ` (${inv.invented.map((x) => x.text).join(', ')})` : ''}`,
    `size ${c.ratio === null ? '—' : formatPercent(c.ratio, 1)}`,
  ].join(' · ');
}

/** Two summary runs side by side: removed words marked on the left, added words on the right, each run's scores above it. */
export function RunDiff({ left, right, scoresOf }: { left: SummaryRun; right: SummaryRun; scoresOf?: (runId: string) => RunScores | undefined }) {
  const parts = useMemo(() => diffRuns(left.summary, right.summary), [left.summary, right.summary]);
  const stats = useMemo(() => {
    let added = 0;
    let removed = 0;
    for (const p of parts) {
      const words = p.value.split(/\s+/).filter(Boolean).length;
      if (p.added) added += words;
      else if (p.removed) removed += words;
    }
    return { added, removed };
  }, [parts]);
  return (
    <div className="run-diff" data-testid="run-diff">
      <div className="run-diff-head">
        <strong>Comparing two runs</strong>
        <span className="dim">
          <span className="diff-del-text">−{stats.removed} words</span> · <span className="diff-add-text">+{stats.added} words</span>
        </span>
      </div>
      <div className="run-diff-cols">
        {[left, right].map((run, side) => (
          <div key={run.id} className="run-diff-col">
            <div className="run-diff-meta">
              <span className="mono">{formatTime(run.createdAt)}</span>
              <span>{run.provider}/{run.model}</span>
              {run.focus ? <span className="chip">focus: {run.focus}</span> : null}
              {run.template ? <span className="chip">template: {run.template}</span> : null}
              <span className="dim">{formatMs(run.ms)}</span>
            </div>
            {scoresOf ? (
              <div className="run-diff-scores dim mono" data-testid="run-scores">
                {scoresLine(scoresOf(run.id))}
              </div>
            ) : null}
            <pre className="summary-text">
              {parts.map((p, i) =>
                side === 0 ? (
                  p.added ? null : <span key={i} className={p.removed ? 'diff-del' : undefined}>{p.value}</span>
                ) : p.removed ? null : (
                  <span key={i} className={p.added ? 'diff-add' : undefined}>{p.value}</span>
                ),
              )}
            </pre>
          </div>
        ))}
      </div>
    </div>
  );
}
