import { useState } from 'react';
import type { ReadBack } from '../../../src/service/contract.js';
import { formatDateTime, formatInt, formatTokens } from '../../lib/format.js';
import { partText, readBackCost, readBackTitle, readBackTotals } from '../../lib/readback.js';

/** Read-backs listed before "N more": the header stays a few lines tall on a spill read back 40 times. */
export const READ_BACKS_SHOWN = 4;

/**
 * "Read back 3×" in the payload's header: each later call that read this spill back, with the part
 * it read and its tokens, each a link that opens that call (in its session). Every string here
 * (a grep pattern, a jq path) comes from a transcript and is rendered as text.
 */
export function ReadBacks({ list, onOpen }: { list: readonly ReadBack[]; onOpen: (rb: ReadBack) => void }) {
  const [all, setAll] = useState(false);
  const totals = readBackTotals(list);
  const shown = all ? list : list.slice(0, READ_BACKS_SHOWN);
  return (
    <div className="detail-readbacks" data-testid="read-backs" data-count={totals.count}>
      <span
        className="readback-head"
        title={`Later calls read this spill back ${totals.count} time${totals.count === 1 ? '' : 's'}: what the agent needed that the message did not hold. ${formatInt(totals.tokens)} tokens entered the model's context with those ${totals.calls} call${totals.calls === 1 ? '' : 's'}.`}
      >
        <strong>Read back {formatInt(totals.count)}×</strong>
        <span className="dim"> · {totals.calls === totals.count ? '' : `${formatInt(totals.calls)} calls, `}{formatTokens(totals.tokens)} tokens</span>
      </span>
      <ul className="readback-list">
        {shown.map((rb, i) => (
          <li key={`${rb.readerId}:${i}`}>
            <button type="button" className="link-btn readback-part mono" data-testid="read-back" data-reader-id={rb.readerId} onClick={() => onOpen(rb)} title={`${readBackTitle(rb, formatDateTime(rb.at))} Open that call.`}>
              {partText(rb.part)}
            </button>
            <span className="dim readback-by"> {rb.tool} · {formatTokens(readBackCost(rb))}</span>
          </li>
        ))}
        {list.length > READ_BACKS_SHOWN ? (
          <li>
            <button type="button" className="link-btn dim" data-testid="read-backs-more" onClick={() => setAll(!all)}>
              {all ? 'fewer' : `${formatInt(list.length - READ_BACKS_SHOWN)} more`}
            </button>
          </li>
        ) : null}
      </ul>
    </div>
  );
}

/**
 * On the reading call's own header: what it read back of earlier spills, each a link to the spill
 * (the way back from a read-back link). `onOpen` gets the read-back; the caller picks where it goes.
 */
export function ReadsBack({ list, onOpen }: { list: readonly ReadBack[]; onOpen: (rb: ReadBack) => void }) {
  return (
    <div className="detail-readbacks" data-testid="reads-back" data-count={list.length}>
      <span className="readback-head"><strong>Reads back</strong></span>
      <ul className="readback-list">
        {list.map((rb, i) => (
          <li key={i}>
            <span className="mono readback-by">{rb.spillTool ?? 'a spill'}</span>
            <button type="button" className="link-btn readback-part mono" data-testid="reads-back-spill" data-spill-id={rb.spillId} onClick={() => onOpen(rb)} title={`${readBackTitle(rb, formatDateTime(rb.at))} Open the spill it read.`}>
              {partText(rb.part)}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
