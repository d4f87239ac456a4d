/**
 * Inputs for the realistic sessions and the client-rule observations, built in the test (no binary
 * fixtures checked in): text of an exact length, text of a given token count, a large JSON, a grep
 * tree, a real PNG of a given size.
 */
import fs from 'node:fs';
import path from 'node:path';
import { countTokens } from '@anthropic-ai/tokenizer';
import { encodePng } from '../helpers/png.js';

/**
 * A real PNG of width × height (RGB, 8 bits): flat 64-px tiles of colour, so that a 3013×1561 image
 * (4.7 MP, what the providers price) is a few KB on disk and a client's downscaled copy, kept in its
 * transcript, stays small too.
 */
export function makePngOf(width: number, height: number): Buffer {
  const row = width * 3 + 1;
  const raw = Buffer.alloc(height * row);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = y * row + 1 + x * 3;
      raw[i] = ((x >> 6) * 37) & 255;
      raw[i + 1] = ((y >> 6) * 53) & 255;
      raw[i + 2] = (((x >> 6) + (y >> 6)) * 29) & 255;
    }
  }
  return encodePng(width, height, raw, { deflate: { level: 9 } });
}

/** ASCII text of exactly `chars` characters in 100-char lines, its last character 'Z' (no final newline to trim). */
export function exactText(chars: number, tag = 'L'): string {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += `${tag}${String(i).padStart(5, '0')} ${'abcdefghij'.repeat(10).slice(0, 92 - tag.length)}\n`;
  return `${s.slice(0, chars - 1)}Z`;
}

/** Report-like lines. */
export function reportLines(count: number, word = 'report'): string[] {
  return Array.from({ length: count }, (_, i) => `line ${i}: the quarterly ${word} lists revenue ${i * 13} for region ${i % 17}`);
}

/** The shortest run of report lines (each ended by a newline) whose text is at least `tokens` tokens for `count`. */
export function textOfTokens(tokens: number, count: (s: string) => number = countTokens): string {
  const lines = reportLines(Math.ceil(tokens / 9) + 200).map((l) => `${l}\n`);
  let lo = 1;
  let hi = lines.length;
  const text = (k: number) => lines.slice(0, k).join('');
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (count(text(mid)) >= tokens) hi = mid;
    else lo = mid + 1;
  }
  return text(lo);
}

/**
 * A content string whose JSON form `{"content":"…"}` (what server-filesystem's read_text_file hands
 * Claude Code) is at least `tokens` tokens: the shortest run of report lines that gets there.
 */
export function mcpTextOfTokens(tokens: number): string {
  return textOfTokens(tokens, (s) => countTokens(JSON.stringify({ content: s })));
}

/** Plain text (no newline, so its JSON adds exactly 14 characters) for a `{"content":"…"}` of `jsonChars` characters. */
export function mcpTextOfJsonChars(jsonChars: number): string {
  let t = '';
  for (let i = 0; t.length < jsonChars - 14; i++) t += `word${i} `;
  return t.slice(0, jsonChars - 14);
}

/**
 * A folder for a Grep run with `-n: false` whose output (`<dir>/f.txt:<line>` per match, joined by
 * newlines, as Claude Code's Grep prints it relative to its cwd) is exactly `chars` characters.
 */
export function grepTreeOfChars(root: string, rel: string, chars: number): void {
  const prefix = `${rel}/f.txt:`;
  const lines: string[] = [];
  let total = 0;
  for (let i = 0; ; i++) {
    const content = `MATCH ${String(i).padStart(6, '0')} ${'q'.repeat(40)}`;
    const add = (lines.length ? 1 : 0) + prefix.length + content.length;
    if (total + add > chars) break;
    lines.push(content);
    total += add;
  }
  const rest = chars - total - 1 - prefix.length;
  if (rest >= 5) {
    lines.push(`MATCH ${'r'.repeat(rest - 6)}`);
    total += 1 + prefix.length + rest;
  }
  if (total !== chars) throw new Error(`grep output would be ${total} characters, not ${chars}`);
  fs.mkdirSync(path.join(root, rel), { recursive: true });
  fs.writeFileSync(path.join(root, rel, 'f.txt'), `${lines.join('\n')}\n`);
}

/** A lockfile-like JSON of about `bytes` bytes (pretty-printed, as package-lock.json is). */
export function bigJson(bytes: number): string {
  const packages: Record<string, unknown> = {};
  for (let i = 0; JSON.stringify(packages, null, 2).length < bytes; i += 1) {
    for (let j = 0; j < 50; j++, i++) {
      packages[`node_modules/pkg-${i}`] = {
        version: `${i % 9}.${i % 13}.${i % 7}`,
        resolved: `https://registry.example.org/pkg-${i}/-/pkg-${i}-${i % 9}.${i % 13}.${i % 7}.tgz`,
        integrity: `sha512-${Buffer.from(`pkg-${i}-integrity`).toString('base64')}`,
        license: i % 3 ? 'MIT' : 'ISC',
        dependencies: i % 4 ? { [`pkg-${i + 1}`]: `^${(i + 1) % 9}.0.0` } : undefined,
      };
    }
  }
  return JSON.stringify({ name: 'realistic', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2);
}

/** A source tree to grep: `files` files of `lines` lines, one line in `every` carrying the needle. */
export function sourceTree(root: string, files: number, lines: number, needle: string, every = 5): void {
  for (let f = 0; f < files; f++) {
    const dir = path.join(root, `mod${f % 8}`);
    fs.mkdirSync(dir, { recursive: true });
    const body = Array.from({ length: lines }, (_, i) => (i % every === 0 ? `  // ${needle}: handle case ${f}.${i} before the retry loop` : `  const v${i} = compute(${f}, ${i}); // step ${i}`)).join('\n');
    fs.writeFileSync(path.join(dir, `file${f}.ts`), `export function f${f}() {\n${body}\n}\n`);
  }
}
