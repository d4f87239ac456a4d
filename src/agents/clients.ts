/**
 * The agent clients as plain data: ids, labels, badges. The renderer imports this module (it
 * imports nothing at run time, checked by test/architecture.test.ts), the index and the service take
 * the same words from the registry (`./index.ts`), so a label is written once.
 *
 * A new client is one line here and one in `./index.ts`; `ClientId` is derived from this list.
 */
export interface ClientMeta {
  /** The id the index stores as a session's kind and a spill's client (`claude-code`). */
  id: string;
  /** Its name in full (`Claude Code`, `Gemini CLI`). */
  label: string;
  /** Its badge in the sidebar (short). */
  badge: string;
  /** The badge's colour, light and dark theme. */
  colour: { light: string; dark: string };
}

export const CLIENTS = {
  'claude-code': { id: 'claude-code', label: 'Claude Code', badge: 'Claude Code', colour: { light: '#c4623f', dark: '#e8926f' } },
  codex: { id: 'codex', label: 'Codex', badge: 'Codex', colour: { light: '#0e8a6c', dark: '#3fc39f' } },
  gemini: { id: 'gemini', label: 'Gemini CLI', badge: 'Gemini CLI', colour: { light: '#3b73d6', dark: '#7aa7f7' } },
} as const satisfies Record<string, ClientMeta>;

export type ClientId = keyof typeof CLIENTS;

export const CLIENT_IDS = Object.keys(CLIENTS) as ClientId[];

export function isClientId(s: string | null | undefined): s is ClientId {
  return typeof s === 'string' && Object.prototype.hasOwnProperty.call(CLIENTS, s);
}

/** The client's full name; an id we do not know is shown as itself. */
export function clientName(id: string): string {
  return isClientId(id) ? CLIENTS[id].label : id;
}
