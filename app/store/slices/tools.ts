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
import type { View } from './core.js';

export interface ToolsSlice {
  tuner: LimitTunerResponse | null;
  tunerLoading: boolean;
  tunerError: string | null;
  tunerStrategy: StrategyName | null;
  /** The slider's value; the response's limit is the baseline "current" limit. */
  tunerLimit: number | null;
  tunerPrice: number | null;
  tunerContextWindow: number | null;
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
  setTuner(patch: { strategy?: StrategyName; limit?: number; price?: number; contextWindow?: number | null }): void;
  loadWaste(): Promise<void>;
  refreshToolViews(): void;
  analyze(req: AnalyzeRequest): Promise<void>;
  summarizeAnalysis(): Promise<void>;
}

/** What the tools slice uses of the others. */
interface ToolsNeeds {
  info: AppInfo | null;
  view: View;
  selectedSessionId: string | null;
  selectedRootId: string | null;
  setView(view: View): void;
  withToast<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
}

export const createToolsSlice: Slice<ToolsSlice, ToolsNeeds> = (set, get, { api }) => {
  let tunerSeq = 0;
  let wasteSeq = 0;
  return {
    tuner: null,
    tunerLoading: false,
    tunerError: null,
    tunerStrategy: null,
    tunerLimit: null,
    tunerPrice: null,
    tunerContextWindow: null,
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
      set({ tunerLoading: true, tunerError: null });
      try {
        const res = await api.limitTuner({
          sessionId: selectedSessionId ?? undefined,
          rootId: selectedSessionId ? undefined : (selectedRootId ?? undefined),
          strategy,
          limitTokens: info?.defaults.limitTokens ?? 12_000,
          pricePerMTok: get().tunerPrice ?? info?.defaults.pricePerMTok,
          buckets: 40,
        });
        if (seq !== tunerSeq) return;
        set({ tuner: res, tunerLoading: false, tunerLimit: get().tunerLimit ?? res.limitTokens, tunerStrategy: res.strategy });
      } catch (err) {
        if (seq !== tunerSeq) return;
        set({ tunerLoading: false, tunerError: errorMessage(err) });
      }
    },
    setTuner(patch) {
      const next: Partial<ToolsSlice> = {};
      if (patch.limit !== undefined) next.tunerLimit = patch.limit;
      if (patch.price !== undefined) next.tunerPrice = patch.price;
      if (patch.contextWindow !== undefined) next.tunerContextWindow = patch.contextWindow;
      if (patch.strategy !== undefined) next.tunerStrategy = patch.strategy;
      set(next);
      if (patch.strategy !== undefined) void get().loadTuner();
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
        const res = await api.wasteReport({
          sessionId,
          limitTokens: get().tunerLimit ?? undefined,
          pricePerMTok: get().tunerPrice ?? undefined,
        });
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
