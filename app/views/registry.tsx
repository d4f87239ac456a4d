/**
 * The renderer's half of the view registry: each view's rail icon and component, keyed by the ids of
 * src/service/shell/views.ts (the list itself: keys, labels, menu and palette text, order). `satisfies
 * Record<ViewId, …>` makes a view added there without an entry here a compile error, and the rail,
 * the router, the shortcuts, the help and the palette all read VIEW_REGISTRY.
 */
import type { ComponentType, ReactElement } from 'react';
import { VIEWS, type ViewId, type ViewSpec } from '../../src/service/shell/views.js';
import type { AppState } from '../store/index.js';
import { PayloadsView } from './PayloadsView.js';
import { TunerView } from './TunerView.js';
import { WasteView } from './WasteView.js';
import { AnalyzeView } from './AnalyzeView.js';
import { TimelineView } from './TimelineView.js';

/** What the router gives every view: the main area's width (the payload list's splitter needs it). */
export interface ViewProps {
  mainPx: number;
}

interface ViewUi {
  /** The rail icon's SVG content, in a 16×16 box. */
  icon: ReactElement;
  Component: ComponentType<ViewProps>;
}

const UI = {
  payloads: { icon: <path d="M3 4h10M3 8h10M3 12h6" />, Component: PayloadsView },
  tuner: { icon: <path d="M3 13V9M6.5 13V5M10 13V7M13.5 13V3M2 13.5h13" />, Component: TunerView },
  waste: { icon: <path d="M8 2.5a5.5 5.5 0 1 0 5.5 5.5H8z M9.5 1.5v5h5a5 5 0 0 0-5-5z" />, Component: WasteView },
  analyze: { icon: <path d="M8 2v8m0 0L5 7m3 3l3-3M3 11v2h10v-2" />, Component: AnalyzeView },
  timeline: { icon: <path d="M2 13l3-4 3 2 3-6 3 3M2 3v10.5h12" />, Component: TimelineView },
} satisfies Record<ViewId, ViewUi>;

export type RegisteredView = ViewSpec & ViewUi;

/** Every view, in the rail's (and the menu's) order. */
export const VIEW_REGISTRY: readonly RegisteredView[] = VIEWS.map((v) => ({ ...v, ...UI[v.id] }));

export function viewOf(id: ViewId): RegisteredView {
  return VIEW_REGISTRY.find((v) => v.id === id)!;
}

/**
 * Go to a view, the same way from every entry point (the rail, its shortcut, the menu, the palette):
 * the tuner and the waste report are asked again on entry, and let go of when left.
 */
export function goToView(s: Pick<AppState, 'setView' | 'refreshToolViews'>, id: ViewId): void {
  s.setView(id);
  s.refreshToolViews();
}
