/** Codex's reads of a file: its shell tools (a command string, or argv run through `bash -lc`). */
import { commandLine, shellReads, type ClientReads } from '../readback.js';

const SHELL_TOOLS = new Set(['shell', 'local_shell', 'container.exec', 'exec_command', 'shell_command', 'unified_exec']);

export const CODEX_READS: ClientReads = (tool, input) => {
  if (!SHELL_TOOLS.has(tool)) return undefined;
  const line = commandLine(input.cmd ?? input.command);
  return line === undefined ? [] : shellReads(line);
};
