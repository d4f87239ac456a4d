import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, CLIENT_IDS, recogniseTranscript } from '../../src/agents/index.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Type-check one in-memory program next to the registry; the diagnostics' messages. */
function diagnosticsOf(source: string): string[] {
  const file = path.join(ROOT, 'src/agents/__planted__.ts');
  const options: ts.CompilerOptions = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, types: ['node'] };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (f) => (path.resolve(f) === file ? source : read(f));
  const exists = host.fileExists.bind(host);
  host.fileExists = (f) => path.resolve(f) === file || exists(f);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const FIFTH = (members: string) => `
import type { ClientAdapter } from './adapter.js';
import { ADAPTERS } from './index.js';
const fifth = { ${members} };
export const REGISTRY = { ...ADAPTERS, fifth } satisfies Record<string, ClientAdapter>;
`;
const WHOLE = `meta: ADAPTERS.codex.meta, files: ADAPTERS.codex.files, rules: ADAPTERS.codex.rules, provider: 'openai' as const, prices: ADAPTERS.codex.prices, context: ADAPTERS.codex.context`;

describe('the client registry', () => {
  it('a fifth client lacking one member of ClientAdapter does not compile, and the compiler names the member', () => {
    const missing = diagnosticsOf(FIFTH(WHOLE));
    expect(missing.join('\n')).toMatch(/Property 'mcp' is missing/);
    // The same client with the member compiles: the error was the missing member, not the fixture.
    expect(diagnosticsOf(FIFTH(`${WHOLE}, mcp: ADAPTERS.codex.mcp`))).toEqual([]);
  }, 60_000);

  it('every client id has an adapter whose meta names it, and recognising asks every adapter', () => {
    for (const id of CLIENT_IDS) expect(ADAPTERS[id].meta.id).toBe(id);
    expect(recogniseTranscript('x.txt', '{}')).toBeNull();
    expect(recogniseTranscript('a.jsonl', '{"type":"session_meta"}')).toBe('codex');
    expect(recogniseTranscript('session-1.jsonl', '{"sessionId":"s","projectHash":"h"}')).toBe('gemini');
    expect(recogniseTranscript('a.jsonl', '{"parentUuid":null,"sessionId":"s"}')).toBe('claude-code');
  });
});
