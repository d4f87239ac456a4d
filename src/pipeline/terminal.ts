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

import { isUtf8 } from 'node:buffer';

// C0 except tab and newline, DEL, C1, a carriage return not ending a line, and the bidi controls.
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

/**
 * `terminalSafe` for bytes that need not be UTF-8 (a wrapped server's stderr): valid UTF-8 runs go
 * through `terminalSafe` itself, so there is one rule; a byte that is not part of valid UTF-8 is
 * shown as `\xNN` (a lone 0x9b is CSI to an 8-bit terminal). Bytes with nothing to escape come
 * back as the same Buffer.
 */
export function terminalSafeBytes(buf: Buffer): Buffer {
  if (isUtf8(buf)) {
    const s = buf.toString('utf8');
    const t = terminalSafe(s);
    return t === s ? buf : Buffer.from(t, 'utf8');
  }
  const parts: string[] = [];
  let run = 0;
  let i = 0;
  while (i < buf.length) {
    const n = utf8Length(buf, i);
    if (n > 0) {
      i += n;
      continue;
    }
    if (run < i) parts.push(terminalSafe(buf.toString('utf8', run, i)));
    parts.push(`\\x${buf[i]!.toString(16).padStart(2, '0')}`);
    run = ++i;
  }
  if (run < buf.length) parts.push(terminalSafe(buf.toString('utf8', run)));
  return Buffer.from(parts.join(''), 'utf8');
}

/** Length of the valid UTF-8 sequence starting at `i`, or 0 when the byte there does not start one. */
function utf8Length(buf: Buffer, i: number): number {
  const b = buf[i]!;
  const n = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (n <= 1) return n;
  // isUtf8 rules out overlong forms, surrogates and code points past U+10FFFF.
  return i + n <= buf.length && isUtf8(buf.subarray(i, i + n)) ? n : 0;
}

/** Longest partial line held back before it is written anyway (a line with no end must not grow without bound). */
export const MAX_PENDING_LINE_BYTES = 64 * 1024;

/**
 * A byte stream (a wrapped server's stderr) passed on line by line with `terminalSafeBytes`: each
 * complete line is written as soon as it arrives; a partial line waits for its newline, the end of
 * the stream or MAX_PENDING_LINE_BYTES. Chunk boundaries change nothing: a UTF-8 sequence or a
 * CRLF split across two chunks is judged whole, so the output is exactly `terminalSafeBytes` of
 * everything that came in.
 */
export class TerminalSafeLines {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly write: (b: Buffer) => void) {}

  push(chunk: Buffer): void {
    let buf = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) {
      this.write(terminalSafeBytes(buf.subarray(0, nl + 1)));
      buf = buf.subarray(nl + 1);
    }
    if (buf.length > MAX_PENDING_LINE_BYTES) {
      const cut = cleanCut(buf);
      this.write(terminalSafeBytes(buf.subarray(0, cut)));
      buf = buf.subarray(cut);
    }
    this.pending = Buffer.from(buf);
  }

  /** The stream ended: write what is left. */
  end(): void {
    if (this.pending.length) this.write(terminalSafeBytes(this.pending));
    this.pending = Buffer.alloc(0);
  }
}

/** Where a partial line may be cut: not inside a UTF-8 sequence, not between CR and what follows it. */
function cleanCut(buf: Buffer): number {
  let cut = buf.length;
  // Back over continuation bytes to the start of the last sequence; keep it if it is incomplete.
  let start = cut - 1;
  while (start > 0 && cut - start < 4 && (buf[start]! & 0xc0) === 0x80) start--;
  const lead = buf[start]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (need > cut - start) cut = start;
  if (cut > 0 && buf[cut - 1] === 0x0d) cut--;
  return cut;
}
