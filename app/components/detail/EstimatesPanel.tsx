import type { DensityShares, EstimateResponse, GuardAction, PayloadDetail, PayloadLedger, StrategyName } from '../../../src/service/contract.js';
import { useApp } from '../../store/react.js';
import { formatBytes, formatDiff, formatInt, formatMs, formatPercent } from '../../lib/format.js';
import { enteredRule, provenanceText } from './ledger.js';

const DENSITY_LABELS: Record<keyof DensityShares, string> = {
  base64: 'base64',
  hex: 'hex',
  uuid: 'UUIDs',
  cjk: 'CJK',
  otherNonAscii: 'other non-ASCII',
  digits: 'digits',
  punctuation: 'punctuation',
  whitespace: 'whitespace',
  letters: 'letters',
};
/** Content classes that tokenize densely (many tokens per char): the ones worth calling out. */
const DENSE: ReadonlyArray<keyof DensityShares> = ['base64', 'hex', 'uuid', 'cjk', 'otherNonAscii', 'digits'];
const EXACT: readonly StrategyName[] = ['o200k', 'cl100k', 'claude'];

export function densityReason(d: DensityShares): string {
  const dense = DENSE.map((k) => [k, d[k]] as const)
    .filter(([, v]) => v >= 0.05)
    .sort((a, b) => b[1] - a[1]);
  if (dense.length === 0) return 'Mostly prose and punctuation: close to 4 characters per token.';
  return `Dense: ${dense.map(([k, v]) => `${formatPercent(v, 0)} ${DENSITY_LABELS[k]}`).join(', ')}. These tokenize at far fewer characters per token than prose, so chars/4 undercounts.`;
}

/**
 * The payload's one figure (the header's, the table's, the message's), and why the strategies
 * below, measured now on the saved file, may show another number.
 */
export function figureText(figure: PayloadDetail['figure'], measured: number | undefined, profile?: string): string {
  const named = `${formatInt(figure.tokens)} tokens (${figure.strategy}${figure.exact ? ', exact' : ' estimate'}, ${figure.profile})`;
  const base =
    figure.source === 'guard'
      ? `Listed everywhere as ${named}: the number the guard decided with, and the one the model's message stated${figure.note ? ` (${figure.note})` : ''}.`
      : `Listed everywhere as ${named}: ${figure.note ?? 'counted by the index'}.`;
  if (measured === undefined || measured === figure.tokens) return base;
  // The likeliest reason first: another tokenizer profile (the guard counts for the client's model).
  const why =
    profile && profile !== figure.profile
      ? `, counted for the ${profile} profile where the guard counted for ${figure.profile}`
      : figure.source === 'guard' && !figure.note
        ? ', the saved file not being exactly what the guard measured'
        : '';
  return `${base} Below, every strategy measured now on the saved file: ${figure.strategy} gives ${formatInt(measured)}${why}.`;
}

function FigureNote({ figure, res }: { figure: PayloadDetail['figure']; res: EstimateResponse }) {
  const measured = res.estimates.find((e) => e.strategy === figure.strategy)?.tokens;
  return (
    <p className="figure-note" data-testid="figure-note">
      {figureText(figure, measured, res.profile)}
    </p>
  );
}

export function EstimatesPanel() {
  const cheap = useApp((s) => s.estimates);
  const exact = useApp((s) => s.exactEstimates);
  const loading = useApp((s) => s.estimatesLoading);
  const error = useApp((s) => s.estimatesError);
  const load = useApp((s) => s.loadEstimates);
  const res: EstimateResponse | null = exact ?? cheap;
  const figure = useApp((s) => s.detail?.figure);
  const ledger = useApp((s) => s.detail?.ledger);
  const action = useApp((s) => s.detail?.row.action);

  if (!res) {
    if (error) return <div className="state error" role="alert"><strong>Could not estimate.</strong><span>{error}</span><button className="btn sm" onClick={() => void load()}>Retry</button></div>;
    return <div className="state"><span className="spinner" /> Estimating…</div>;
  }
  return (
    <div className="scroll pad estimates" data-testid="estimates">
      <div className="panel-head">
        <div>
          <h3>Token estimates</h3>
          <p className="dim">
            {formatInt(res.chars)} chars · {formatInt(res.bytes)} bytes · profile <code>{res.profile}</code> · default strategy <code>{res.default}</code>
          </p>
        </div>
        <button className="btn" onClick={() => void load(true)} disabled={loading !== null} aria-busy={loading === 'exact'}>
          {loading === 'exact' ? <><span className="spinner" /> Counting…</> : exact ? 'Recount exact' : 'Count exact (o200k · cl100k · claude)'}
        </button>
      </div>
      {error ? <div className="inline-error" role="alert">{error}</div> : null}
      {figure ? <FigureNote figure={figure} res={res} /> : null}
      {ledger && action ? <LedgerTable ledger={ledger} action={action} /> : null}
      <h3 className="section-title">Every strategy, measured now on the saved file</h3>
      <EstimateTable res={res} showPending={!exact} />
      <h3 className="section-title">Why it is dense</h3>
      <p className="density-reason">{densityReason(res.density)}</p>
      <DensityChart shares={res.density} />
      {res.trust ? <TrustNote trust={res.trust} calibrated={res.estimates.find((e) => e.strategy === 'calibrated')?.tokens} profile={res.profile} /> : null}
    </div>
  );
}

/** Share of the calibrated estimate from which its risk is worth a warning. */
const RISK_NOTE_SHARE = 0.05;

/** How far the calibrated estimate can be trusted, in words: the corpus margin, and what lies outside the corpus. */
export function trustText(trust: NonNullable<EstimateResponse['trust']>, calibrated: number | undefined, profile: string): { risky: boolean; text: string } {
  const margin = formatPercent(trust.margin, 0);
  if (!calibrated || trust.riskTokens < RISK_NOTE_SHARE * calibrated) {
    return { risky: false, text: `Text like the calibration corpus: the ${profile} fit holds within ±${margin} here, and the guard counts exactly when the limit falls inside that band.` };
  }
  const parts = trust.parts.slice(0, 3).map((p) => `${p.label} (±${formatInt(p.tokens)})`).join(', ');
  return {
    risky: true,
    text: `Up to ±${formatInt(trust.riskTokens)} tokens of this estimate depend on content the fit can misprice: ${parts}. That is on top of its ±${margin} margin, so near the limit the guard counts such text exactly.`,
  };
}

function TrustNote({ trust, calibrated, profile }: { trust: NonNullable<EstimateResponse['trust']>; calibrated: number | undefined; profile: string }) {
  const t = trustText(trust, calibrated, profile);
  return (
    <>
      <h3 className="section-title">How far to trust the calibrated estimate</h3>
      <p className={`trust-note${t.risky ? ' risky' : ''}`} data-testid="trust-note">{t.text}</p>
    </>
  );
}

export function DensityChart({ shares }: { shares: DensityShares }) {
  const entries = (Object.keys(DENSITY_LABELS) as Array<keyof DensityShares>).map((k) => [k, shares[k] ?? 0] as const);
  return (
    <div className="density" role="img" aria-label={`Content mix: ${entries.filter(([, v]) => v > 0).map(([k, v]) => `${DENSITY_LABELS[k]} ${formatPercent(v, 0)}`).join(', ')}`}>
      <div className="density-stack">
        {entries.filter(([, v]) => v > 0).map(([k, v]) => (
          <span key={k} className={`seg seg-${k}`} style={{ width: `${v * 100}%` }} title={`${DENSITY_LABELS[k]} ${formatPercent(v)}`} />
        ))}
      </div>
      <ul className="density-legend">
        {entries.map(([k, v]) => (
          <li key={k} className={v === 0 ? 'zero' : undefined}>
            <span className={`swatch seg-${k}`} />
            <span className="label">{DENSITY_LABELS[k]}</span>
            <span className="bar"><span className={`fill seg-${k}`} style={{ width: `${v * 100}%` }} /></span>
            <span className="mono num">{formatPercent(v)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Every strategy's count side by side, with each one's difference from the exact count. */
export function EstimateTable({ res, showPending }: { res: EstimateResponse; showPending: boolean }) {
  const rows = res.estimates;
  const exactFor = rows.find((r) => r.exact && r.strategy === res.profile) ?? rows.find((r) => r.exact);
  const max = Math.max(1, ...rows.map((r) => r.tokens));
  const exact = !showPending;
  return (
    <table className="grid-table">
      <thead>
        <tr>
          <th>Strategy</th>
          <th className="num">Tokens</th>
          <th className="bar-col" aria-hidden />
          <th className="num">vs exact {exactFor ? <code>{exactFor.strategy}</code> : null}</th>
          <th className="num">Time</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.strategy} className={r.strategy === res.default ? 'is-default' : undefined}>
            <td>
              <code>{r.strategy}</code> {r.exact ? <span className="badge ok">exact</span> : null}
              {r.strategy === res.default ? <span className="badge">default</span> : null}
            </td>
            <td className="num mono">{formatInt(r.tokens)}</td>
            <td className="bar-col">
              <span className={`hbar ${r.exact ? 'exact' : ''}`} style={{ width: `${(r.tokens / max) * 100}%` }} />
            </td>
            <td className={`num mono ${exactFor && Math.abs(r.tokens - exactFor.tokens) / Math.max(exactFor.tokens, 1) > 0.15 ? 'warn' : ''}`}>
              {exactFor ? (r === exactFor ? 'reference' : formatDiff(r.tokens, exactFor.tokens)) : '—'}
            </td>
            <td className="num mono dim">{formatMs(r.ms)}</td>
          </tr>
        ))}
        {!exact
          ? EXACT.filter((s) => !rows.some((r) => r.strategy === s)).map((s) => (
              <tr key={s} className="pending">
                <td><code>{s}</code> <span className="badge">on demand</span></td>
                <td className="num dim">—</td>
                <td className="bar-col" />
                <td className="num dim">—</td>
                <td className="num dim">—</td>
              </tr>
            ))
          : null}
      </tbody>
    </table>
  );
}

/**
 * The ledger's figures for this result (the ones the table, the sidebar and the Timeline show), each
 * named with where it comes from, above the estimators' counts of the saved file: the estimators
 * count the whole text under one profile; the ledger says what of it entered the model.
 */
export function LedgerTable({ ledger, action }: { ledger: PayloadLedger; action: GuardAction }) {
  const rule = enteredRule(action, ledger);
  const rows: Array<{ id: string; label: string; tokens: number; how: string; note: string }> = [
    { id: 'entered', label: 'Entered the context', tokens: ledger.entered.tokens, how: ledger.entered.provenance, note: `${provenanceText(ledger.entered.provenance)}: ${rule.text}` },
    {
      id: 'full',
      label: 'Full result',
      tokens: ledger.full.tokens,
      how: ledger.full.provenance,
      note: `${formatBytes(ledger.full.bytes)}, its text under ${ledger.full.profile}${ledger.full.images ? ` plus ${formatInt(ledger.full.images)} ${ledger.full.images === 1 ? 'image' : 'images'} by pixels` : ''}`,
    },
    { id: 'as-client', label: 'As the client would give it', tokens: ledger.asClient.tokens, how: ledger.asClient.provenance, note: `without Spillway, by the client's rule ${ledger.asClient.rule}` },
    {
      id: 'kept-out',
      label: 'Kept out',
      tokens: ledger.keptOut.spilled + ledger.keptOut.assetTokens,
      how: ledger.keptOut.provenance,
      note: `${formatInt(ledger.keptOut.spilled)} spilled${ledger.keptOut.assets ? `, ${formatInt(ledger.keptOut.assets)} assets (${formatBytes(ledger.keptOut.bytes)}, ${formatInt(ledger.keptOut.assetTokens)} tokens had they entered)` : ''}`,
    },
  ];
  return (
    <>
      <h3 className="section-title">The ledger (what every view shows)</h3>
      <table className="grid-table" data-testid="ledger">
        <thead>
          <tr>
            <th>Figure</th>
            <th className="num">Tokens</th>
            <th>Source</th>
            <th>How</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.id} data-ledger={r.id} data-tokens={r.tokens}>
              <td>{r.label}</td>
              <td className="num mono">{formatInt(r.tokens)}</td>
              <td><span className="badge">{r.how}</span></td>
              <td className="dim">{r.note}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
