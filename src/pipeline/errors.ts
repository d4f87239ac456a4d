import { MAX_ERROR_CHARS } from './limits.js';
import { truncate } from './text.js';

/** An error as one short line for a message or a sidecar: `CODE: message`, cut to MAX_ERROR_CHARS. */
export function errText(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const msg = e instanceof Error ? (e.code && !e.message.startsWith(e.code) ? `${e.code}: ${e.message}` : e.message) : String(err);
  return truncate(msg, MAX_ERROR_CHARS);
}
