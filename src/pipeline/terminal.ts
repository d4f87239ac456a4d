/**
 * Text from payloads (tool names, summaries, rows, file names inside sessions) reaches a terminal
 * through every CLI verb, and the proxy's and the hook's log lines on stderr. A terminal obeys what it is sent: ESC starts colours, title changes,
 * `ESC ] 8 ;;` hyperlinks that show one URL and open another, cursor moves that overwrite what was
 * printed; C1 controls (U+0080–U+009F) do the same on some terminals; bidi controls reorder what is
 * shown. So every such text goes through one of these two functions before it is written.
 *
 * | call              | for                                  | what it does                                              |
 * | ----------------- | ------------------------------------ | --------------------------------------------------------- |
 * | `terminalSafe(s)` | plain text lines                     | each control shown as `\xNN` / `\uNNNN`; tab and newline kept |
 * | `jsonLine(v)`     | `--json` output                      | JSON.stringify, plus the controls it leaves raw as `\uNNNN` |
 *
 * Both apply whether or not stdout is a terminal: a pipe often ends in one (an agent's transcript
 * view, `less -R`, a log tail), and the escaped text says the same to a model or a script.
 */

// C0 except tab and newline, DEL, C1, a carriage return not ending a line, and the bidi controls.
// eslint-disable-next-line no-control-regex
const UNSAFE_TEXT_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;
// What JSON.stringify leaves unescaped among those (it escapes all of C0 itself).
const UNSAFE_JSON_RE = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const hex = (c: string, width: number) => c.charCodeAt(0).toString(16).padStart(width, '0');

/** `s` with every terminal control made visible as text (`\x1b`, `\u202e`); tab, newline and CRLF kept. */
export function terminalSafe(s: string): string {
  return s.replace(UNSAFE_TEXT_RE, (c) => (c.charCodeAt(0) < 0x100 ? `\\x${hex(c, 2)}` : `\\u${hex(c, 4)}`));
}

/** JSON (one line, or indented with `space`) that parses to the same value and carries no raw terminal control. */
export function jsonLine(value: unknown, space?: number): string {
  return (JSON.stringify(value, null, space) ?? 'null').replace(UNSAFE_JSON_RE, (c) => `\\u${hex(c, 4)}`);
}
