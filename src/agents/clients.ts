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
  /** The badge's colours: its text on a light and on a dark theme, and the tint its background is mixed from. */
  colour: { light: string; dark: string; tint: string };
  /** Its sessions folder under a home, as path parts (`.claude`, `projects`): the default root, and how the UI tells it is one. */
  homeSuffix: readonly string[];
  /** The prefix of its transcripts' file names, dropped from a session's fallback title (`rollout-`). */
  titlePrefix?: string;
  /**
   * The project a session's folder name stands for, when the transcript recorded no working directory
   * (a guess: Claude Code turns every `/`, `.` and `-` of it into `-`); undefined when it cannot tell.
   */
  projectOfFolder?(folder: string): string | undefined;
}

/**
 * Claude Code names a project's folder after its working directory with every character that is
 * not a letter or digit turned into `-`. Decoding is a guess: used only when the transcript recorded no `cwd`.
 */
function decodeDashedFolder(folder: string): string | undefined {
  if (!/^-[A-Za-z0-9]/.test(folder)) {
    // Windows: `C--Users-gray-app` from `C:\Users\gray\app`.
    const m = /^([A-Za-z])--(.+)$/.exec(folder);
    return m ? `${m[1]}:\\${m[2]!.replace(/-/g, '\\')}` : undefined;
  }
  return folder.replace(/-/g, '/');
}

export const CLIENTS = {
  'claude-code': {
    id: 'claude-code',
    label: 'Claude Code',
    badge: 'Claude Code',
    colour: { light: '#c4623f', dark: '#e8926f', tint: '#d97757' },
    homeSuffix: ['.claude', 'projects'],
    projectOfFolder: decodeDashedFolder,
  },
  codex: { id: 'codex', label: 'Codex', badge: 'Codex', colour: { light: '#0e8a6c', dark: '#3fc39f', tint: '#10a37f' }, homeSuffix: ['.codex', 'sessions'], titlePrefix: 'rollout-' },
  gemini: { id: 'gemini', label: 'Gemini CLI', badge: 'Gemini CLI', colour: { light: '#3b73d6', dark: '#7aa7f7', tint: '#4285f4' }, homeSuffix: ['.gemini', 'tmp'], titlePrefix: 'session-' },
  // Its sessions live in one SQLite database in this folder (`$XDG_DATA_HOME/opencode`, src/agents/opencode).
  opencode: { id: 'opencode', label: 'OpenCode', badge: 'OpenCode', colour: { light: '#52525b', dark: '#d4d4d8', tint: '#71717a' }, homeSuffix: ['.local', 'share', 'opencode'] },
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
