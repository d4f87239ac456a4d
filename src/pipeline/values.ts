/**
 * Two checks every layer makes on values it did not create: a JSON object, and an error's message.
 * This module imports nothing, so the renderer and the hook's fast path may take it without
 * pulling in anything else.
 */

/** A plain object (not null, not an array): the shape of a parsed JSON object. */
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** What went wrong, in full: an Error's message, or anything else as a string. `errText` (errors.ts) is the one-line cut form. */
export const errMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
