import type { ContentKind } from '../../src/service/contract.js';

/** Monaco language id for a payload kind (and the tool name as a hint for code). */
export function languageFor(kind: ContentKind | undefined, path?: string): string {
  switch (kind) {
    case 'json':
    case 'ndjson':
      return 'json';
    case 'html':
      return 'html';
    case 'xml':
      return 'xml';
    case 'markdown':
      return 'markdown';
    case 'csv':
    case 'log':
    case 'text':
    case 'binary':
    case undefined:
      return 'plaintext';
    case 'code': {
      const ext = path?.split('.').pop()?.toLowerCase();
      const byExt: Record<string, string> = {
        ts: 'typescript', tsx: 'typescript', js: 'javascript', mjs: 'javascript', cjs: 'javascript', jsx: 'javascript',
        py: 'python', rs: 'rust', go: 'go', java: 'java', rb: 'ruby', php: 'php', c: 'c', h: 'cpp', cpp: 'cpp',
        cs: 'csharp', sh: 'shell', sql: 'sql', yaml: 'yaml', yml: 'yaml', css: 'css', kt: 'kotlin', swift: 'swift',
      };
      return (ext && byExt[ext]) || 'plaintext';
    }
    default:
      return 'plaintext';
  }
}
