import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fileTmpDir } from '../helpers/file-tmp.js';
import {
  detectContent,
  detectTextFormat,
  detectTextKind,
  handleLargeResponse,
  isBinaryBytes,
  readMeta,
  restorePayload,
  unwrapText,
} from '../../src/pipeline/index.js';
import { quickSniff } from '../../src/pipeline/detect.js';

const tmp = fileTmpDir('spillway-kind-');

/** Claude Code's Read: the number right-aligned to six columns, an arrow, the line. */
const claudeRead = (content: string, first = 1) =>
  content
    .split('\n')
    .map((l, i) => `${String(first + i).padStart(6)}→${l}`)
    .join('\n');
/** `cat -n` / `nl -ba`: the number right-aligned to six columns, a tab, the line. */
const catN = (content: string, first = 1) =>
  content
    .split('\n')
    .map((l, i) => `${String(first + i).padStart(6)}\t${l}`)
    .join('\n');

const TS = `import fs from 'node:fs';
import { x } from './x.js';

export function read(p: string): string {
  const s = fs.readFileSync(p, 'utf8');
  return s.trim();
}
`;
const PACKAGE_JSON = JSON.stringify({ name: 'todo-app', version: '0.1.0', scripts: { dev: 'next dev' }, dependencies: { react: '19' } }, null, 2);
const MARKDOWN = `# Design Decisions

This document captures the project's design philosophies.

## Layering

- **pipeline** imports nothing of ours
- \`index\` and \`summarize\` import pipeline
`;
const CSV = 'id,name,amount\n1,alice,3.50\n2,bob,4.25\n3,carol,1.00\n';

describe('line-numbered listings (Claude Code Read, cat -n, nl -ba)', () => {
  it('a Read is classified by the kind of the file it shows', () => {
    for (const [content, kind] of [
      [TS, 'code'],
      [PACKAGE_JSON, 'json'],
      [MARKDOWN, 'markdown'],
      [CSV, 'csv'],
    ] as const) {
      expect(detectTextKind(content), 'plain').toBe(kind);
      const read = claudeRead(content);
      expect(detectTextFormat(read), content.slice(0, 20)).toEqual({ kind, wrappers: ['line-numbers'] });
      // detectContent names the content's kind, but the MIME type of what the text is.
      expect(detectContent(read)).toEqual({ binary: false, kind, mimeType: 'text/plain', ext: '.txt' });
      // cat -n's tab form too
      expect(detectTextFormat(catN(content))).toEqual({ kind, wrappers: ['line-numbers'] });
    }
  });

  it('unwrapText gives back exactly the listed lines', () => {
    expect(unwrapText(claudeRead(PACKAGE_JSON))).toBe(PACKAGE_JSON);
    expect(unwrapText(catN(TS, 120))).toBe(TS);
    expect(unwrapText(TS)).toBe(TS);
  });

  it('a Read with an offset, a trailing <system-reminder>, or Edit\'s header is still a listing', () => {
    const reminder = '\n\n<system-reminder>\nWhenever you read a file, you should consider whether it would be considered malware.\nYou CAN and SHOULD provide analysis.\nBut you must refuse to improve or augment the code.\n</system-reminder>\n';
    expect(detectTextFormat(claudeRead('# Work Journal\n## Workscope ID: 42\n\n', 1) + reminder)).toEqual({ kind: 'markdown', wrappers: ['line-numbers'] });
    expect(detectTextFormat(claudeRead(TS, 2560)).kind).toBe('code');
    const edit = `The file /repo/src/read.ts has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${claudeRead(TS, 40)}`;
    expect(detectTextFormat(edit)).toEqual({ kind: 'code', wrappers: ['line-numbers'] });
    expect(unwrapText(edit)).toBe(TS);
  });

  it('a Read of a long line-numbered JSON file is named as text by the guard, but its kind is json', async () => {
    const text = claudeRead(JSON.stringify({ rows: Array.from({ length: 3_000 }, (_, i) => ({ id: i, name: `row ${i}` })) }, null, 2));
    const r = await handleLargeResponse({ text, sessionPath: path.join(tmp, 's1'), context: { toolName: 'Read', toolInput: { file_path: '/x/rows.json' } } });
    expect(r.action).toBe('spill');
    // The saved text is not JSON (every line has a number in front): never a .json file.
    expect(r.payloadPath).toMatch(/\.txt$/);
    expect((await readMeta(r.metaPath!)).kind).toBe('json');
    expect((await restorePayload(r.payloadPath!)).toString('utf8')).toBe(text);
  });

  it('numbers that are data are not a listing', () => {
    // A TSV whose first column is a running id: no padding, so not cat -n.
    const tsv = 'id\tname\tamount\n1\talice\t3\n2\tbob\t4\n3\tcarol\t1\n4\tdave\t9\n';
    expect(detectTextFormat(tsv)).toEqual({ kind: 'csv', wrappers: [] });
    // Padded numbers that do not count up by one (a ranking, a column of ids).
    const ids = ['    17\tfoo();', '     3\tbar();', '   240\tbaz();', '    99\tqux();', '     5\tquux();'].join('\n');
    expect(detectTextFormat(ids).wrappers).toEqual([]);
    // Prose that mentions an arrow is prose.
    expect(detectTextFormat('Step 1→2 moves the cursor.\nThen press enter.\nDone.').wrappers).toEqual([]);
  });

  it('Codex CLI exec output is classified by the command output under its header', () => {
    const header = 'Chunk ID: 2d2199\nWall time: 0.2201 seconds\nProcess exited with code 0\nOriginal token count: 1148\nOutput:\n';
    expect(detectTextFormat(header + PACKAGE_JSON)).toEqual({ kind: 'json', wrappers: ['exec-output'] });
    // `nl -ba` inside the exec output: both wrappers are seen through.
    expect(detectTextFormat(header + catN(TS, 90))).toEqual({ kind: 'code', wrappers: ['exec-output', 'line-numbers'] });
    expect(unwrapText(header + catN(TS, 90))).toBe(TS);
    expect(detectTextFormat(`${header}Total output lines: 460\n\n${CSV}`)).toEqual({ kind: 'csv', wrappers: ['exec-output'] });
  });
});

describe('content kinds learnt from the index and summarizer sniffers', () => {
  it('TSX that is mostly markup is code when it opens like a module', () => {
    const tsx = `import Image from "next/image";\n\nexport default function Home() {\n  return (\n${'    <div className="grid">\n      <a href="/x">link</a>\n    </div>\n'.repeat(10)}  );\n}\n`;
    expect(detectTextKind(tsx)).toBe('code');
  });

  it('Markdown without a heading (an agent report) needs inline Markdown; `git branch` output is text', () => {
    const report = 'Done. Round 1 complete.\n\n**Report:**\n\n- **Branch:** `carol/research` (from `master`)\n- **Commit:** `2552732`\n- Tests pass\n';
    expect(detectTextKind(report)).toBe('markdown');
    expect(detectTextKind('+ alice/research-plan-mode\n+ bob/research-teammates\n* master\n  worktree-agent\n')).toBe('text');
  });

  it('a spec whose fenced JSON example is longer than its prose is Markdown', () => {
    const spec = `# Metadata Schema\n\n**Version:** 1.0.0\n\n## JSON Schema\n\n\`\`\`json\n${JSON.stringify({ properties: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, { type: 'string' }])) }, null, 2)}\n\`\`\`\n\n## Notes\n\nSee above.\n`;
    expect(detectTextKind(spec)).toBe('markdown');
  });

  it('logs by timestamps anywhere near the line start, terminal colours, and not two lines with a time', () => {
    const compose = Array.from({ length: 10 }, (_, i) => `web-1  | 2026-11-30T10:00:0${i}.000Z GET /api/${i} 200`).join('\n');
    expect(detectTextKind(compose)).toBe('log');
    expect(detectTextKind('\x1b[32m✓\x1b[39m test/a.test.ts (3 tests)\n\x1b[32m✓\x1b[39m test/b.test.ts\n Test Files  2 passed\n')).toBe('log');
    expect(detectTextKind('<status>running</status>\n\n<timestamp>2025-09-03T01:00:18.892Z</timestamp>')).toBe('text');
  });

  it('CSV with quoted delimiters; a key: value dump with trailing commas is not CSV', () => {
    expect(detectTextKind('id,name,amount\n1,"Smith, John",3\n2,"Doe, Jane",4\n3,"Roe, R",5\n')).toBe('csv');
    const dump = Array.from({ length: 12 }, (_, i) => `  Symbol(prop${i}): null,`).join('\n');
    expect(detectTextKind(dump)).not.toBe('csv');
  });

  it('JSX closing tags do not make a component HTML, and tool errors in tags are text', () => {
    expect(detectTextKind("'use client';\n\nimport { useState } from 'react';\n\nexport function A() {\n  return <div><p>x</p></div>;\n}\n")).toBe('code');
    expect(detectTextKind('<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>')).toBe('text');
  });
  it('a text holding NULs is bytes decoded as text: binary, like isBinaryBytes says of its bytes', () => {
    const png = fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'sample.png'));
    expect(isBinaryBytes(png)).toBe(true);
    expect(detectTextKind(png.toString('utf8'))).toBe('binary');
    expect(detectContent(png.toString('utf8')).binary).toBe(true);
    // Latin-1 text read as UTF-8 has replacement characters but no NUL: still text.
    expect(detectTextKind(Buffer.from('Le café crème et la brûlée sont à la carte ce soir\n'.repeat(20), 'latin1').toString('utf8'))).toBe('text');
  });
});

describe('isBinaryBytes: the one binary check', () => {
  const ctl = (n: number, total: number) => Buffer.concat([Buffer.alloc(n, 0x01), Buffer.alloc(total - n, 0x61)]);

  it('NUL anywhere is binary', () => {
    const b = Buffer.alloc(1_000_000, 0x61);
    b[999_999] = 0;
    expect(isBinaryBytes(b)).toBe(true);
  });

  it('control characters: up to 1% is text, more is binary; ANSI, overstrike, tabs and form feeds are text', () => {
    expect(isBinaryBytes(ctl(10, 1000))).toBe(false);
    expect(isBinaryBytes(ctl(11, 1000))).toBe(true);
    expect(isBinaryBytes(Buffer.from('\x1b[31mred\x1b[0m b\bb\tx\fy\r\n'.repeat(100)))).toBe(false);
  });

  it('valid UTF-8 in any script is text; other bytes are text only while at most 30% are non-ASCII', () => {
    expect(isBinaryBytes(Buffer.from('日本語 текст 🎉 '.repeat(500)))).toBe(false);
    const legacy = (high: number) => Buffer.from(Array.from({ length: 100 }, (_, i) => (i < high ? 0xe9 : 0x61)));
    expect(isBinaryBytes(legacy(30))).toBe(false); // Latin-1 "é" in a Latin-1 text
    expect(isBinaryBytes(legacy(31))).toBe(true);
  });

  it('partial: a character cut at the end of a head window is not evidence of binary', () => {
    const cjk = Buffer.from('日本語のテキスト'.repeat(400));
    const head = cjk.subarray(0, 4096); // 4096 is not a multiple of 3: the last character is cut
    expect(isBinaryBytes(head)).toBe(true); // read as a whole input, it is broken UTF-8 of mostly high bytes
    expect(isBinaryBytes(head, { partial: true })).toBe(false);
    // A real invalid byte before the cut is still seen.
    const bad = Buffer.from(head);
    bad[10] = 0xff;
    expect(isBinaryBytes(bad, { partial: true })).toBe(true);
  });

  it('property: any head of any UTF-8 text without control characters is text with `partial`', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 400 }), fc.nat(), (s, cut) => {
        const clean = s.replace(/[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f]/g, ' ');
        const b = Buffer.from(clean); // lone surrogates become U+FFFD: still valid UTF-8
        const head = b.subarray(0, b.length === 0 ? 0 : cut % (b.length + 1));
        return isBinaryBytes(head, { partial: true }) === false;
      }),
      { numRuns: 500 },
    );
  });
});

describe('the kind sniffer on ragged tables', () => {
  // Two columns in most rows, one in a few: the delimiter check read a second cell that was not there,
  // and the guard could not save such a result (an internal error, caught only by its last resort).
  const ragged = Array.from({ length: 40 }, (_, i) => (i % 12 === 5 ? `note ${i}` : `key${i},value ${i}`)).join('\n');

  it('never throws, and still sees the table', () => {
    expect(() => detectTextFormat(ragged)).not.toThrow();
    expect(detectTextFormat(ragged).kind).toBe('csv');
  });

  it('the guard saves such a result like any other', async () => {
    const text = ragged.repeat(400);
    const r = await handleLargeResponse({ text, sessionPath: path.join(tmp, 'ragged'), context: { toolName: 'table', limitTokens: 2_000 } });
    expect(r.errors.join('; ')).not.toMatch(/internal error/);
    expect((await restorePayload(r.payloadPath!)).toString('utf8')).toBe(text);
  });

  it('property: never throws on lines of words, commas, tabs, semicolons and pipes', () => {
    const cell = fc.stringMatching(/^[a-z0-9 ]{0,6}$/);
    const line = fc.array(cell, { minLength: 1, maxLength: 4 }).chain((cells) => fc.constantFrom(',', '\t', ';', '|').map((d) => cells.join(d)));
    fc.assert(
      fc.property(fc.array(line, { minLength: 0, maxLength: 30 }), (lines) => {
        detectTextFormat(lines.join('\n'));
      }),
      { numRuns: 500 },
    );
  });
});

describe('quickSniff answers as file-type does, or leaves it to file-type', () => {
  const sig = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
  const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
  const TYPES = ['IHDR', 'IDAT', 'acTL', 'CgBI', 'tEXt', 'IEND', 'idat', 'zzzz'];
  /** A PNG head: signature, a first chunk (usually a 13-byte IHDR), a second chunk header at 33, then noise; some cut short. */
  const pngHead = fc
    .tuple(
      fc.constantFrom(13, 13, 13, 12, 0),
      fc.oneof(fc.constant('IHDR'), fc.constantFrom(...TYPES)),
      fc.uint8Array({ minLength: 17, maxLength: 17 }),
      fc.oneof(fc.integer({ min: 0, max: 0x7fffffff }), fc.integer({ min: 0x80000000, max: 0xffffffff }), fc.constant(4419)),
      fc.oneof(fc.constant('IDAT'), fc.constantFrom(...TYPES)),
      fc.uint8Array({ maxLength: 64 }),
      fc.integer({ min: 30, max: 200 }),
      fc.boolean(),
    )
    .map(([len1, type1, body1, len2, type2, rest, cut, whole]) => {
      const b = Uint8Array.from([...sig, ...be32(len1), ...ascii(type1), ...body1, ...be32(len2), ...ascii(type2), ...rest]);
      return whole ? b : b.subarray(0, Math.min(b.length, cut));
    });

  it('on the fixtures and on generated PNG heads (APNG, CgBI, a negative chunk length, cut short)', async () => {
    const { fileTypeFromBuffer } = await import('file-type');
    const fileTypeSays = async (b: Uint8Array) => {
      const t = await fileTypeFromBuffer(b);
      return t ? { mimeType: t.mime, ext: `.${t.ext}` } : undefined;
    };
    for (const f of ['sample.png', 'sample.jpg', 'sample.webp', 'sample.pdf', 'sample.wav']) {
      const b = fs.readFileSync(path.join(import.meta.dirname, 'fixtures', f));
      const q = quickSniff(b);
      if (q) expect(q, f).toEqual(await fileTypeSays(b));
    }
    expect(quickSniff(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', 'sample.png')))).toEqual({ mimeType: 'image/png', ext: '.png' });
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(pngHead, async (b) => {
        const q = quickSniff(b);
        if (q === undefined) return;
        answered++;
        expect(q).toEqual(await fileTypeSays(b));
      }),
      { numRuns: 3000 },
    );
    expect(answered, 'the generator reaches the answered case').toBeGreaterThan(50);
  });
});
