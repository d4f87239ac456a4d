import type {
  EstimateResponse,
  PayloadDetail,
  PayloadRow,
  ProviderInfo,
  SummaryRun,
  TemplateInfo,
} from '../../../src/service/contract.js';
import { errorMessage } from '../../transport/errors.js';
import type { Slice } from '../slice.js';

export type DetailTab = 'content' | 'linked' | 'tree' | 'preview' | 'estimates' | 'summaries' | 'assets';
export const DETAIL_TABS: ReadonlyArray<{ id: DetailTab; label: string }> = [
  { id: 'content', label: 'Raw' },
  { id: 'linked', label: 'Linked' },
  { id: 'tree', label: 'Tree' },
  { id: 'preview', label: 'Model saw' },
  { id: 'estimates', label: 'Estimates' },
  { id: 'summaries', label: 'Summaries' },
  { id: 'assets', label: 'Assets' },
];

export interface SummaryForm {
  focus: string;
  provider: string;
  model: string;
  template: string;
  /** The template body as edited in the Monaco pane (saved as a user template on run when changed). */
  templateBody: string;
}

export interface DetailSlice {
  detailId: string | null;
  /** The table row of the payload being opened: enough to start streaming its content before the detail arrives. */
  detailRow: PayloadRow | null;
  detail: PayloadDetail | null;
  detailLoading: boolean;
  detailError: string | null;
  tab: DetailTab;
  estimates: EstimateResponse | null;
  exactEstimates: EstimateResponse | null;
  estimatesLoading: 'cheap' | 'exact' | null;
  estimatesError: string | null;
  providers: ProviderInfo[];
  templates: TemplateInfo[];
  summaryForm: SummaryForm;
  summaryRunning: boolean;
  summaryStartedAt: number | null;
  /** Up to two run ids picked for the side-by-side diff. */
  compare: string[];
  openPayload(id: string, row?: PayloadRow): Promise<void>;
  closePayload(): void;
  setTab(tab: DetailTab): void;
  loadEstimates(exact?: boolean): Promise<void>;
  loadSummaryOptions(): Promise<void>;
  setSummaryForm(patch: Partial<SummaryForm>): void;
  runSummary(): Promise<SummaryRun | undefined>;
  toggleCompare(runId: string): void;
  addRun(payloadId: string, run: SummaryRun): void;
}

/** What the detail slice uses of the others. */
interface DetailNeeds {
  notify(kind: 'error' | 'info' | 'success', text: string): void;
  withToast<T>(what: string, fn: () => Promise<T>): Promise<T | undefined>;
}

export const createDetailSlice: Slice<DetailSlice, DetailNeeds> = (set, get, { api }) => {
  let openSeq = 0;
  return {
    detailId: null,
    detailRow: null,
    detail: null,
    detailLoading: false,
    detailError: null,
    tab: 'content',
    estimates: null,
    exactEstimates: null,
    estimatesLoading: null,
    estimatesError: null,
    providers: [],
    templates: [],
    summaryForm: { focus: '', provider: '', model: '', template: '', templateBody: '' },
    summaryRunning: false,
    summaryStartedAt: null,
    compare: [],
    async openPayload(id, row) {
      const seq = ++openSeq;
      if (get().detailId === id && get().detail) return;
      set({ detailId: id, detailRow: row ?? null, detail: null, detailLoading: true, detailError: null, estimates: null, exactEstimates: null, estimatesError: null, compare: [] });
      try {
        const detail = await api.getPayload({ id });
        if (seq !== openSeq) return;
        const tab = get().tab;
        set({
          detail,
          detailLoading: false,
          summaryForm: { ...get().summaryForm, focus: detail.meta?.intent ?? get().summaryForm.focus },
          // Tabs that make no sense for this payload fall back to the raw view.
          tab: (tab === 'linked' && !detail.linkedPath) || (tab === 'assets' && detail.assets.length === 0) ? 'content' : tab,
        });
        if (get().tab === 'estimates') void get().loadEstimates();
      } catch (err) {
        if (seq !== openSeq) return;
        set({ detail: null, detailLoading: false, detailError: errorMessage(err) });
      }
    },
    closePayload() {
      openSeq++;
      set({ detailId: null, detailRow: null, detail: null, detailError: null });
    },
    setTab(tab) {
      set({ tab });
      if (tab === 'estimates' && !get().estimates) void get().loadEstimates();
      if (tab === 'summaries' && get().providers.length === 0) void get().loadSummaryOptions();
    },
    async loadEstimates(exact = false) {
      const id = get().detailId;
      if (!id) return;
      set({ estimatesLoading: exact ? 'exact' : 'cheap', estimatesError: null });
      try {
        const res = await api.estimate({ payloadId: id, exact });
        if (get().detailId !== id) return;
        set(exact ? { exactEstimates: res, estimates: get().estimates ?? res, estimatesLoading: null } : { estimates: res, estimatesLoading: null });
      } catch (err) {
        if (get().detailId !== id) return;
        set({ estimatesLoading: null, estimatesError: errorMessage(err) });
      }
    },
    async loadSummaryOptions() {
      const res = await get().withToast('Load summary providers', () =>
        Promise.all([api.listProviders({}), api.listTemplates({})]),
      );
      if (!res) return;
      const [providers, templates] = res;
      const form = get().summaryForm;
      const provider = providers.find((p) => p.name === form.provider) ?? providers.find((p) => p.available) ?? providers[0];
      const template = templates.find((t) => t.name === form.template) ?? templates[0];
      set({
        providers,
        templates,
        summaryForm: {
          ...form,
          provider: provider?.name ?? '',
          model: form.model && provider?.models.includes(form.model) ? form.model : (provider?.defaultModel ?? ''),
          template: template?.name ?? '',
          templateBody: form.templateBody || template?.body || '',
        },
      });
    },
    setSummaryForm(patch) {
      const next = { ...get().summaryForm, ...patch };
      if (patch.provider !== undefined && patch.model === undefined) {
        next.model = get().providers.find((p) => p.name === patch.provider)?.defaultModel ?? '';
      }
      if (patch.template !== undefined && patch.templateBody === undefined) {
        next.templateBody = get().templates.find((t) => t.name === patch.template)?.body ?? '';
      }
      set({ summaryForm: next });
    },
    async runSummary() {
      const id = get().detailId;
      if (!id || get().summaryRunning) return undefined;
      const form = get().summaryForm;
      set({ summaryRunning: true, summaryStartedAt: Date.now() });
      try {
        let template = form.template || undefined;
        const base = get().templates.find((t) => t.name === form.template);
        if (base && form.templateBody.trim() && form.templateBody !== base.body) {
          // An edited template is saved under its own name so the run stays reproducible.
          const name = base.builtIn ? `${base.name}-edited` : base.name;
          const saved = await api.saveTemplate({ name, body: form.templateBody });
          template = saved.name;
          const templates = await api.listTemplates({});
          set({ templates, summaryForm: { ...get().summaryForm, template: saved.name } });
        }
        const run = await api.summarize({
          payloadId: id,
          focus: form.focus.trim() || undefined,
          provider: form.provider || undefined,
          model: form.model || undefined,
          template,
        });
        get().addRun(id, run);
        if (run.status === 'ok') get().notify('success', `Summary ready in ${(run.ms / 1000).toFixed(1)} s`);
        else get().notify('error', `Summary ${run.status}${run.error ? `: ${run.error}` : ''}`);
        return run;
      } catch (err) {
        get().notify('error', `Summary failed: ${errorMessage(err)}`);
        return undefined;
      } finally {
        set({ summaryRunning: false, summaryStartedAt: null });
      }
    },
    toggleCompare(runId) {
      const cur = get().compare;
      set({ compare: cur.includes(runId) ? cur.filter((r) => r !== runId) : [...cur, runId].slice(-2) });
    },
    addRun(payloadId, run) {
      const d = get().detail;
      if (!d || d.row.id !== payloadId || d.summaryRuns.some((r) => r.id === run.id)) return;
      set({ detail: { ...d, summaryRuns: [...d.summaryRuns, run], row: { ...d.row, summaryCount: d.row.summaryCount + 1 } } });
    },
  };
};
