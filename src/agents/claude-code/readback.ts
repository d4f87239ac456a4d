/** Claude Code's reads of a file: Read (offset is the 1-based first line, limit a line count), Grep, and Bash commands. */
import { commandLine, shellReads, type ClientReads } from '../readback.js';

const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

export const CLAUDE_CODE_READS: ClientReads = (tool, input) => {
  if (tool === 'Read' && typeof input.file_path === 'string') {
    const offset = int(input.offset);
    const limit = int(input.limit);
    if (offset === undefined && limit === undefined) return [{ path: input.file_path, via: 'read', part: { kind: 'whole' } }];
    const start = Math.max(1, offset ?? 1);
    return [{ path: input.file_path, via: 'read', part: { kind: 'lines', start, ...(limit !== undefined ? { end: start + limit - 1 } : {}) } }];
  }
  if (tool === 'Grep' && typeof input.pattern === 'string' && typeof input.path === 'string') {
    return [{ path: input.path, via: 'search', part: { kind: 'grep', pattern: input.pattern, regex: 'extended', ignoreCase: input['-i'] === true } }];
  }
  if (tool === 'Bash') {
    const line = commandLine(input.command);
    return line === undefined ? [] : shellReads(line);
  }
  return undefined;
};
