import { PayloadFilterBar, PayloadTable } from '../components/PayloadTable.js';
import { DetailPane } from '../components/detail/DetailPane.js';
import { Splitter } from '../components/Splitter.js';
import { usePersistentNumber } from '../lib/persist.js';
import type { ViewProps } from './registry.js';

const LIST_PX = { min: 380, max: 980, initial: 600 };
/** The payload pane keeps at least this much, so its header, "Model saw" and a summary comparison stay readable. */
export const DETAIL_MIN_PX = 560;
/** Until the user drags the splitter, the list takes this share of the main area (within LIST_PX). */
const LIST_SHARE = 0.4;

/**
 * The list's width: the user's (dragged, remembered) or a share of the main area, never so wide
 * that the payload pane drops under DETAIL_MIN_PX (at 1400 px the old fixed 600 left it ~480 px).
 */
export function listWidth(chosen: number, mainPx: number): { width: number; max: number } {
  const max = Math.max(LIST_PX.min, Math.min(LIST_PX.max, mainPx - DETAIL_MIN_PX));
  const want = chosen > 0 ? chosen : Math.min(LIST_PX.initial, Math.round(mainPx * LIST_SHARE));
  return { width: Math.max(LIST_PX.min, Math.min(max, want)), max };
}

/** The payload table beside the open payload, with the splitter between them. */
export function PayloadsView({ mainPx }: ViewProps) {
  // 0: not chosen yet (a share of the window, see listWidth).
  const [listChosen, setListW] = usePersistentNumber('spillway.list', 0);
  const list = listWidth(listChosen, mainPx);
  return (
    <div className="payloads-view" style={{ ['--list-w' as string]: `${list.width}px` }}>
      <div className="list-pane">
        <PayloadFilterBar />
        <PayloadTable />
      </div>
      <Splitter value={list.width} onChange={setListW} min={LIST_PX.min} max={list.max} label="Resize payload list" />
      <DetailPane />
    </div>
  );
}
