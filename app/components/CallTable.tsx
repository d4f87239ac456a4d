import type { ReactNode } from 'react';
import type { CallRow } from '../../src/service/contract.js';
import { useAppStore } from '../store/react.js';
import { formatInt, formatTokens, formatUsd } from '../lib/format.js';

/** Dollars with their sign: a saving can be negative (the guard cost more than it kept out). */
export function signedUsd(n: number): string {
  return n < 0 ? `−${formatUsd(-n)}` : formatUsd(n);
}

/**
 * Tool calls as rows: every row names its call with its arguments and opens it (the payload it
 * saved, in the payloads view). Used by the limit tuner and the waste report, so a row reads the
 * same in both. `withCalls`: the session has model calls, so tokens × calls and dollars are shown.
 */
export function CallTable({ rows, withCalls, extra, testId }: { rows: CallRow[]; withCalls: boolean; extra?: { head: string; cell: (r: CallRow) => ReactNode }; testId?: string }) {
  const store = useAppStore();
  const open = (r: CallRow) => {
    if (!r.payloadId) return;
    store.getState().setView('payloads');
    void store.getState().openPayload(r.payloadId);
  };
  return (
    <table className="grid-table calls" data-testid={testId}>
      <thead>
        <tr>
          <th>Call</th>
          <th className="num">{withCalls ? 'Tokens entered' : 'Payload tokens'}</th>
          {withCalls ? <th className="num">Calls in context</th> : null}
          {withCalls ? <th className="num">Tokens × calls</th> : null}
          {withCalls ? <th className="num">Cost</th> : null}
          {extra ? <th>{extra.head}</th> : null}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.sessionId}:${r.id}`}>
            <td className="call-cell">
              {r.payloadId ? (
                <button type="button" className="link-btn mono" onClick={() => open(r)} title={`Open this ${r.tool} call`}>
                  {r.tool}
                </button>
              ) : (
                <span className="mono" title="no saved payload for this call">{r.tool}</span>
              )}{' '}
              <span className="dim mono call-args" data-testid="call-args">{r.args ?? '(no arguments recorded)'}</span>
            </td>
            <td className="num mono">{formatInt(r.tokens)}</td>
            {withCalls ? <td className="num mono">{r.calls === undefined ? '—' : formatInt(r.calls)}</td> : null}
            {withCalls ? <td className="num mono">{r.tokensTimesCalls === undefined ? '—' : formatTokens(r.tokensTimesCalls)}</td> : null}
            {withCalls ? <td className="num mono">{r.costUsd === undefined ? '—' : formatUsd(r.costUsd)}</td> : null}
            {extra ? <td>{extra.cell(r)}</td> : null}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
