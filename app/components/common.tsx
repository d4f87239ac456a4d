import type { GuardAction, SessionInfo } from '../../src/service/contract.js';
import type { CSSProperties } from 'react';
import { CLIENTS, isClientId } from '../../src/agents/clients.js';
import { clientLabel, sessionBadge } from '../lib/sessions.js';

const ACTION_LABEL: Record<GuardAction, string> = { pass: 'pass', spill: 'spilled', 'inline-assets': 'assets cut' };

export function ActionBadge({ action }: { action: GuardAction }) {
  return <span className={`badge action-${action}`}>{ACTION_LABEL[action] ?? action}</span>;
}

/** Which client wrote the session (an agent client, Spillway); the exact client and version in the tooltip. */
export function ClientBadge({ s }: { s: Pick<SessionInfo, 'kind' | 'client'> }) {
  // An agent client's colours are its own (src/agents/clients.ts), not a CSS rule per client.
  const c = isClientId(s.kind) ? CLIENTS[s.kind].colour : undefined;
  const style = c ? ({ '--client-light': c.light, '--client-dark': c.dark, '--client-tint': c.tint } as CSSProperties) : undefined;
  return (
    <span className={`badge tiny client client-${s.kind}${c ? ' agent' : ''}`} style={style} title={s.client ?? clientLabel(s.kind)} data-testid="client-badge">
      {sessionBadge(s)}
    </span>
  );
}

export const isMac = () => typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
export const modKey = () => (isMac() ? '⌘' : 'Ctrl');

/** A tool call as a row names it: the tool and its arguments (one line; the whole in the tooltip). */
export function CallLabel({ tool, input }: { tool: string; input?: string }) {
  return (
    <span className="call-label">
      <span className="mono tool-name" title={tool}>{tool}</span>
      {input ? <span className="call-args dim mono" title={input} data-testid="call-args">{input}</span> : null}
    </span>
  );
}
