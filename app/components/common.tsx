import type { GuardAction } from '../../src/service/contract.js';

const ACTION_LABEL: Record<GuardAction, string> = { pass: 'pass', spill: 'spilled', 'inline-assets': 'assets cut' };

export function ActionBadge({ action }: { action: GuardAction }) {
  return <span className={`badge action-${action}`}>{ACTION_LABEL[action] ?? action}</span>;
}

export function Kbd({ keys }: { keys: string[] }) {
  return (
    <span className="kbd-combo">
      {keys.map((k, i) => (
        <kbd key={i}>{k}</kbd>
      ))}
    </span>
  );
}

export const isMac = () => typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent);
export const modKey = () => (isMac() ? '⌘' : 'Ctrl');
