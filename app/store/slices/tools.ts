import type {
  AnalyzeRequest,
  AnalyzeResponse,
  LimitTunerResponse,
  StrategyName,
  SummaryRun,
  WasteReport,
} from '../../../src/service/contract.js';
import type { AppInfo } from '../../../src/service/contract.js';
import { errorMessage } from '../../transport/errors.js';
import type { Slice } from '../slice.js';
import type { ViewId } from '../../../src/service/shell/views.js';

export interface ToolsSlice {
  tuner: LimitTunerResponse | null;
  tunerLoading: boolean;
  tunerError: string | null;
  tunerStrategy: StrategyName | null;
  /** The slider's value: the limit the service replays each session at. */
  tunerLimit: number | null;
  tunerContextWindow: number | null;
  /** Pages of sessions still being replayed, or guard messages still being built (the figures will change). */
  tunerReplaying: boolean;
  waste: WasteReport | null;
  wasteLoading: boolean;
  wasteError: string | null;
  analysis: AnalyzeResponse | null;
  analysisName: string | null;
  analysisLoading: boolean;
  analysisError: string | null;
  analysisSummary: SummaryRun | null;
  analysisSummaryRunning: boolean;
  loadTuner(): Promise<void>;
  setTuner(patch: { strategy?: StrategyName; limit?: number; contextWindow?: number | null }): void;
  loadWaste(): Promise<void>;
  refreshToolViews(): void;
  analyze(req: AnalyzeRequest): Promise<void>;
  summarizeAnalysis(): Promise<void>;
}

/** What the tools slice uses of the others. */
interface ToolsNeeds {
  info: AppInfo | null;
  view: ViewId;
  selectedSessionId: string | null;
  selectedRootId: string | null;
  setView(view: ViewId): void;
  withToast<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
}

/** A slider move waits this long for the next one before asking the service to replay. */
export const TUNER_DEBOUNCE_MS = 200;
/** While guard messages are being built, the tuner asks again after this long, at most this many times. */
const TUNER_PENDING_RETRY_MS = 400;
const TUNER_PENDING_RETRIES = 10;

export const createToolsSlice: Slice<ToolsSlice, ToolsNeeds> = (set, get, { api }) => {
  let tunerSeq = 0;
  let wasteSeq = 0;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  return {
    tuner: null,
    tunerLoading: false,
    tunerError: null,
    tunerStrategy: null,
    tunerLimit: null,
    tunerContextWindow: null,
    tunerReplaying: false,
    waste: null,
    wasteLoading: false,
    wasteError: null,
    analysis: null,
    analysisName: null,
    analysisLoading: false,
    analysisError: null,
    analysisSummary: null,
    analysisSummaryRunning: false,
    async loadTuner() {
      const seq = ++tunerSeq;
      const { selectedSessionId, selectedRootId, info } = get();
      const strategy = get().tunerStrategy ?? info?.defaults.strategy;
      const limitTokens = get().tunerLimit ?? info?.defaults.limitTokens ?? 12_000;
      const scope = { sessionId: selectedSessionId ?? undefined, rootId: selectedSessionId ? undefined : (selectedRootId ?? undefined) };
      set({ tunerLoading: !get().tuner, tunerError: null, tunerReplaying: true });
      try {
        for (let attempt = 0; ; attempt++) {
          // The replay comes a page of sessions at a time; the view shows each page as it arrives.
          let res = await api.limitTuner({ ...scope, strategy, limitTokens, buckets: 40 });
          if (seq !== tunerSeq) return;
          set({ tuner: res, tunerLoading: false, tunerLimit: get().tunerLimit ?? res.limitTokens, tunerStrategy: res.strategy });
          while (res.replay.next !== undefined) {
            const page = await api.limitTuner({ ...scope, strategy, limitTokens, buckets: 1, offset: res.replay.next });
            if (seq !== tunerSeq) return;
            const flips = [...res.replay.flips, ...page.replay.flips].sort((a, b) => (b.tokensTimesCalls ?? 0) - (a.tokensTimesCalls ?? 0));
            res = { ...res, replay: { ...page.replay, offset: 0, sessions: [...res.replay.sessions, ...page.replay.sessions], flips } };
            set({ tuner: res });
          }
          const pending = res.replay.sessions.some((x) => x.atLimit.pending > 0);
          if (!pending || attempt >= TUNER_PENDING_RETRIES) break;
          await new Promise((r) => setTimeout(r, TUNER_PENDING_RETRY_MS));
          if (seq !== tunerSeq) return;
        }
        set({ tunerReplaying: false });
      } catch (err) {
        if (seq !== tunerSeq) return;
        set({ tunerLoading: false, tunerReplaying: false, tunerError: errorMessage(err) });
      }
    },
    setTuner(patch) {
      const next: Partial<ToolsSlice> = {};
      if (patch.limit !== undefined) next.tunerLimit = patch.limit;
      if (patch.contextWindow !== undefined) next.tunerContextWindow = patch.contextWindow;
      if (patch.strategy !== undefined) next.tunerStrategy = patch.strategy;
      set(next);
      if (patch.strategy === undefined && next.tunerLimit === undefined) return;
      // The replay is the service's: a slider move asks again once the slider rests.
      if (debounce) clearTimeout(debounce);
      debounce = setTimeout(() => void get().loadTuner(), patch.strategy !== undefined ? 0 : TUNER_DEBOUNCE_MS);
    },
    async loadWaste() {
      const sessionId = get().selectedSessionId;
      if (!sessionId) {
        set({ waste: null, wasteError: null });
        return;
      }
      const seq = ++wasteSeq;
      set({ wasteLoading: true, wasteError: null });
      try {
        // A fresh page has no tuner limit yet: the guard's default (the service's too, when info is not in).
        const limitTokens = get().tunerLimit ?? get().info?.defaults.limitTokens;
        const res = await api.wasteReport({ sessionId, ...(limitTokens ? { limitTokens } : {}) });
        if (seq !== wasteSeq) return;
        set({ waste: res, wasteLoading: false });
      } catch (err) {
        if (seq !== wasteSeq) return;
        set({ wasteLoading: false, wasteError: errorMessage(err) });
      }
    },
    refreshToolViews() {
      const view = get().view;
      if (view === 'tuner') void get().loadTuner();
      else set({ tuner: null });
      if (view === 'waste') void get().loadWaste();
      else set({ waste: null });
    },
    async analyze(req) {
      get().setView('analyze');
      set({ analysisLoading: true, analysisError: null, analysis: null, analysisName: req.name, analysisSummary: null });
      try {
        const res = await api.analyze(req);
        set({ analysis: res, analysisLoading: false });
      } catch (err) {
        set({ analysisLoading: false, analysisError: errorMessage(err) });
      }
    },
    async summarizeAnalysis() {
      const id = get().analysis?.payloadId;
      if (!id) return;
      set({ analysisSummaryRunning: true });
      const run = await get().withToast('Summarize', () => api.summarize({ payloadId: id }));
      set({ analysisSummaryRunning: false, analysisSummary: run ?? null });
    },
  };
};
