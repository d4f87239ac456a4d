/** Gemini CLI's reads of a file: read_file (offset is a 0-based line, limit a line count), its grep tool, run_shell_command. */
import { commandLine, shellReads, type ClientReads } from '../readback.js';

const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

export const GEMINI_CLI_READS: ClientReads = (tool, input) => {
  if (tool === 'read_file') {
    const p = typeof input.absolute_path === 'string' ? input.absolute_path : typeof input.file_path === 'string' ? input.file_path : undefined;
    if (p === undefined) return [];
    const offset = int(input.offset);
    const limit = int(input.limit);
    if (offset === undefined && limit === undefined) return [{ path: p, via: 'read', part: { kind: 'whole' } }];
    const start = (offset ?? 0) + 1;
    return [{ path: p, via: 'read', part: { kind: 'lines', start, ...(limit !== undefined ? { end: start + limit - 1 } : {}) } }];
  }
  if ((tool === 'grep_search' || tool === 'search_file_content') && typeof input.pattern === 'string') {
    const p = typeof input.path === 'string' ? input.path : typeof input.dir_path === 'string' ? input.dir_path : undefined;
    return p === undefined ? [] : [{ path: p, via: 'search', part: { kind: 'grep', pattern: input.pattern, regex: 'extended', ignoreCase: true } }];
  }
  if (tool === 'run_shell_command') {
    const line = commandLine(input.command);
    return line === undefined ? [] : shellReads(line);
  }
  return undefined;
};
