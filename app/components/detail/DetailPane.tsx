import { useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { useApp, useAppStore } from '../../store/react.js';
import { DETAIL_TABS, type DetailTab } from '../../store/slices/detail.js';
import { formatBytes, formatDateTime, formatInt, formatTime, formatTokens } from '../../lib/format.js';
import { ActionBadge } from '../common.js';
import { guessHome, shortenHome } from '../../lib/sessions.js';
import { WindowedViewer } from '../viewer/WindowedViewer.js';
import { ParsedView } from '../viewer/ParsedView.js';
import { EstimatesPanel } from './EstimatesPanel.js';
import { SummariesPanel } from './SummariesPanel.js';
import { AssetsGallery } from './AssetsGallery.js';
import { ReadBacks, ReadsBack } from './ReadBacks.js';
import { spillTarget } from '../../lib/readback.js';
import { enteredRule, provenanceText } from './ledger.js';
import type { GuardAction, PayloadLedger } from '../../../src/service/contract.js';

const JOIN_HOW = {
  path: 'by the path its message names',
  id: "by the client's tool call id, recorded in the spill's sidecar",
  inferred: 'by inference (same tool and arguments, close in time): the client sent no id',
} as const;

/** The right pane: one payload, its header and its tabs. */
export function DetailPane() {
  const detail = useApp((s) => s.detail);
  const loading = useApp((s) => s.detailLoading);
  const error = useApp((s) => s.detailError);
  const detailId = useApp((s) => s.detailId);
  const early = useApp((s) => s.detailRow);
  const tab = useApp((s) => s.tab);
  const setTab = useApp((s) => s.setTab);
  const store = useAppStore();
  const roots = useApp((s) => s.roots);
  const home = useMemo(() => guessHome(roots), [roots]);
  const [assetFocus, setAssetFocus] = useState<string | null>(null);
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});
  /** An asset reference clicked in the linked or the raw tree (a raw payload may itself be the linked form). */
  const openAsset = (a: { sha256: string }) => {
    setAssetFocus(a.sha256);
    setTab('assets');
  };

  if (!detailId)
    return (
      <section className="detail empty" aria-label="Payload">
        <div className="state">
          <strong>No payload open</strong>
          <span>Pick a row, or press <kbd>↓</kbd> then <kbd>Enter</kbd>. <kbd>Ctrl</kbd>+<kbd>K</kbd> searches every payload.</span>
        </div>
      </section>
    );
  if (error)
    return (
      <section className="detail" aria-label="Payload">
        <div className="state error" role="alert">
          <strong>Could not open this payload.</strong>
          <span>{error}</span>
          <button className="btn sm" onClick={() => void store.getState().openPayload(detailId)}>Retry</button>
        </div>
      </section>
    );
  const row = detail?.row ?? (early && early.id === detailId ? early : null);
  if (!row)
    return (
      <section className="detail" aria-label="Payload" aria-busy={loading}>
        <div className="state"><span className="spinner" /> Opening…</div>
      </section>
    );
  // Until the detail arrives (the content is already streaming from the row) the other tabs wait.
  const tabs = DETAIL_TABS.filter((t) => (t.id !== 'linked' || detail?.linkedPath) && (t.id !== 'tree' || !detail?.binary));
  const onTabKey = (e: KeyboardEvent) => {
    const i = tabs.findIndex((t) => t.id === tab);
    let next: DetailTab | undefined;
    if (e.key === 'ArrowRight') next = tabs[(i + 1) % tabs.length]!.id;
    else if (e.key === 'ArrowLeft') next = tabs[(i - 1 + tabs.length) % tabs.length]!.id;
    else if (e.key === 'Home') next = tabs[0]!.id;
    else if (e.key === 'End') next = tabs[tabs.length - 1]!.id;
    if (next) {
      e.preventDefault();
      setTab(next);
      tabRefs.current[next]?.focus();
    }
  };
  /** The other side of a joined tool call: its session, and the row opened. */
  const openElsewhere = async (sessionId: string, payloadId: string) => {
    store.getState().selectSession(sessionId);
    await store.getState().openPayload(payloadId);
  };
  /** A call that read this spill back, or the spill this call read: opened in its session (the table moves there only when it is another). */
  const openIn = async (sessionId: string, payloadId: string) => {
    if (store.getState().selectedSessionId !== sessionId) store.getState().selectSession(sessionId);
    await store.getState().openPayload(payloadId);
  };
  const copyPath = async () => {
    if (!detail) return;
    try {
      await navigator.clipboard.writeText(detail.path);
      store.getState().notify('info', 'Path copied');
    } catch {
      store.getState().notify('info', detail.path);
    }
  };

  return (
    <section className="detail" aria-label={`Payload ${row.tool}`} data-payload-id={row.id} aria-busy={!detail}>
      <header className="detail-head">
        <div className="detail-title">
          <h2 className="mono">{row.tool}</h2>
          <ActionBadge action={row.action} />
          <span className="badge">{row.kind}</span>
          {detail?.source ? <span className="badge" title={detail.source.transcript}>imported</span> : null}
          {detail?.readOnly ? (
            <span className="badge read-only" data-testid="read-only-badge" title="Its session is read-only: Spillway never writes next to it. Summary runs of this payload are kept in Spillway's app data.">
              read-only
            </span>
          ) : null}
          {detail?.spill ? (
            <button
              className="badge joined"
              data-testid="joined-badge"
              title={`One tool call: the transcript's call and the spill Spillway made for it, joined ${JOIN_HOW[detail.spill.how]}. Open the spill in its own session.`}
              onClick={() => void openElsewhere(detail.spill!.sessionId, detail.spill!.payloadId)}
            >
              spill{detail.spill.how === 'inferred' ? ' (inferred)' : ''}
            </button>
          ) : null}
          {detail?.calledIn ? (
            <button
              className="badge joined"
              data-testid="called-in-badge"
              title="This spill answered a tool call in a client's transcript: listed there, once. Open that call."
              onClick={() => void openElsewhere(detail.calledIn!.sessionId, detail.calledIn!.payloadId)}
            >
              in transcript
            </button>
          ) : null}
          {!detail ? <span className="spinner" aria-label="Loading details" /> : null}
        </div>
        <div className="detail-facts">
          <span title={formatDateTime(row.createdAt)}>{formatTime(row.createdAt)}</span>
          <span title={detail && detail.totalBytes !== row.bytes ? `${formatBytes(detail.totalBytes)} on disk (assets cut out)` : undefined}>{formatBytes(row.bytes)}</span>
          {detail ? <span>{formatInt(detail.totalLines)} lines</span> : null}
          {detail?.ledger ? <EnteredFact action={row.action} ledger={detail.ledger} /> : null}
          <span
            data-testid="figure"
            title={detail?.figure ? `${formatInt(detail.figure.tokens)} tokens: the whole result, ${detail.figure.source === 'guard' ? "the guard's figure, as the model's message stated it" : 'counted by the index'}${detail.figure.note ? ` (${detail.figure.note})` : ''}` : 'Tokens'}
          >
            {detail?.ledger ? 'full ' : ''}≈ {formatTokens(row.tokens)} tokens{detail?.figure ? <span className="dim"> · {detail.figure.strategy}{detail.figure.exact ? ', exact' : ''}, {detail.figure.profile}</span> : null}
          </span>
          {row.assetCount ? <span>{row.assetCount} assets</span> : null}
          {detail?.meta?.intent ? <span className="chip" title="The caller's intent">intent: {detail.meta.intent}</span> : null}
        </div>
        <div className="detail-path">
          <code className="ellipsis" title={detail?.path}>{detail ? shortenHome(detail.path, home) : '…'}</code>
          <button className="btn ghost sm" onClick={() => void copyPath()} disabled={!detail}>Copy path</button>
        </div>
        {detail?.readBacks?.length ? <ReadBacks list={detail.readBacks} onOpen={(rb) => void openIn(rb.sessionId, rb.readerId)} /> : null}
        {detail?.reads?.length ? (
          <ReadsBack
            list={detail.reads}
            onOpen={(rb) => {
              // The spill as the call it answered beside this one (same session), else in its own session.
              const to = spillTarget(rb, row.sessionId);
              void openIn(to.sessionId ?? row.sessionId, to.payloadId);
            }}
          />
        ) : null}
        {detail?.source?.spilledTo ? (
          <div className="note" data-testid="spilled-elsewhere">
            The guard spilled this result to <code title={detail.source.spilledTo}>{shortenHome(detail.source.spilledTo, home)}</code>, a folder this
            inspector does not index: what is shown here is the message the model got. Add that session&apos;s folder to open the whole payload.
          </div>
        ) : null}
        {row.inputExcerpt ? <div className="detail-input mono ellipsis" title={row.inputExcerpt}>input {row.inputExcerpt}</div> : null}
      </header>
      <div className="tabs" role="tablist" aria-label="Payload views" onKeyDown={onTabKey}>
        {tabs.map((t) => (
          <button
            key={t.id}
            ref={(el) => {
              tabRefs.current[t.id] = el;
            }}
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls="detail-tabpanel"
            tabIndex={tab === t.id ? 0 : -1}
            className="tab"
            disabled={!detail && t.id !== tab}
            onClick={() => setTab(t.id)}
          >
            {t.label}
            {t.id === 'summaries' && detail?.summaryRuns.length ? <span className="count">{detail.summaryRuns.length}</span> : null}
            {t.id === 'assets' && detail?.assets.length ? <span className="count">{detail.assets.length}</span> : null}
          </button>
        ))}
      </div>
      <div className="tabpanel" role="tabpanel" id="detail-tabpanel" aria-labelledby={`tab-${tab}`}>
        {tab === 'content' ? (
          <WindowedViewer payloadId={row.id} variant="raw" totalBytes={row.bytes} binary={row.kind === 'binary'} kind={row.kind} path={detail?.path} />
        ) : !detail ? (
          <div className="state"><span className="spinner" /> Opening…</div>
        ) : tab === 'linked' ? (
          <ParsedView
            payloadId={row.id}
            variant="linked"
            totalBytes={detail.totalBytes}
            onAsset={openAsset}
          />
        ) : tab === 'tree' ? (
          <ParsedView
            payloadId={row.id}
            variant="raw"
            totalBytes={detail.totalBytes}
            onAsset={openAsset}
          />
        ) : tab === 'preview' ? (
          // The scroll box is the container the columns ask about: on the grid itself the query never matched.
          <div className="scroll pad">
            <div className="two-col" data-testid="model-saw">
              <section className="card">
                <header className="card-head"><h3>The message the model got</h3></header>
                <pre className="summary-text">{detail.message || '(none recorded)'}</pre>
              </section>
              <section className="card">
                <header className="card-head"><h3>Safe preview</h3><span className="dim">what the guard shows without a summary</span></header>
                <pre className="summary-text">{detail.preview || '(empty)'}</pre>
              </section>
            </div>
          </div>
        ) : tab === 'estimates' ? (
          <EstimatesPanel />
        ) : tab === 'summaries' ? (
          <SummariesPanel />
        ) : (
          <AssetsGallery highlight={assetFocus} />
        )}
      </div>
    </section>
  );
}

/**
 * What entered the model's context for this call, from the ledger: the same figure as the table's
 * Entered column, the sidebar's "N entered" and the Timeline, and the rule that decided it.
 */
function EnteredFact({ action, ledger }: { action: GuardAction; ledger: PayloadLedger }) {
  const rule = enteredRule(action, ledger);
  return (
    <span
      data-testid="entered"
      data-entered={ledger.entered.tokens}
      data-rule={rule.id}
      title={`${formatInt(ledger.entered.tokens)} tokens entered the model's context for this call, ${provenanceText(ledger.entered.provenance)}: ${rule.text}`}
    >
      <strong>entered {formatTokens(ledger.entered.tokens)}</strong> tokens <span className="dim">· {rule.text} · {ledger.entered.provenance}</span>
    </span>
  );
}
