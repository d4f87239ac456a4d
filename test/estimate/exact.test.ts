import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countExact, countExactDetailed, EXACT_CHUNK_CHARS, nextCut } from '../../src/pipeline/estimate/internal.js';
import { PROFILES } from '../../src/pipeline/types.js';
import { readExtraCorpus } from '../../scripts/build-script-fixtures.js';

const NM = path.resolve(import.meta.dirname, '../../node_modules');

describe('countExact', () => {
  it('counts big inputs in chunks to exactly the one-shot count (o200k, cl100k, claude)', async () => {
    const text = [
      fs.readFileSync(path.join(NM, 'typescript/lib/lib.es5.d.ts'), 'utf8'),
      fs.readFileSync(path.join(NM, 'monaco-editor/esm/vs/nls/lang/ja.js'), 'utf8'),
      fs.readFileSync(path.join(NM, 'app-builder-lib/templates/icons/proton-native/linux/512x512.png')).toString('base64'),
      fs.readFileSync(path.join(NM, 'monaco-editor/esm/vs/nls/lang/ru.js'), 'utf8'),
    ].join('\n');
    expect(text.length).toBeGreaterThan(3 * EXACT_CHUNK_CHARS);
    const o = await import('gpt-tokenizer/encoding/o200k_base');
    const c = await import('gpt-tokenizer/encoding/cl100k_base');
    const claude = (await import('@anthropic-ai/tokenizer')) as unknown as { countTokens: (t: string) => number };
    expect(await countExact(text, 'o200k')).toBe(o.countTokens(text, { disallowedSpecial: new Set() }));
    expect(await countExact(text, 'cl100k')).toBe(c.countTokens(text, { disallowedSpecial: new Set() }));
    expect(await countExact(text, 'claude')).toBe(claude.countTokens(text));
  });

  it('small chunks (cut at letter+punctuation and at letter, space, letter) sum to the one-shot count on every kind of corpus text', async () => {
    // prose, man pages in 16 languages, catalogues in 40, emoji tables, tool output: what the decision counts in pieces
    const texts = readExtraCorpus().filter((_, i) => i % 3 === 0).map((s) => s.text);
    texts.push(fs.readFileSync(path.join(NM, 'commander/Readme.md'), 'utf8'), fs.readFileSync(path.join(NM, 'typescript/lib/lib.es5.d.ts'), 'utf8').slice(0, 200_000));
    const big = texts.join('\n');
    for (const p of PROFILES) {
      const whole = await countExact(big, p, { chunkChars: 1 << 30 });
      const small = await countExactDetailed(big, p, { chunkChars: 600, stop: () => false });
      expect({ p, small: small.tokens, hardCuts: small.hardCuts }).toEqual({ p, small: whole, hardCuts: 0 });
    }
  }, 120_000);

  it('treats special-token text in a tool result as plain text', async () => {
    expect(await countExact('a <|endoftext|> b', 'o200k')).toBeGreaterThan(3);
    expect(await countExact('a <|endoftext|> b', 'cl100k')).toBeGreaterThan(3);
  });

  it('lets the event loop run while counting a big input', async () => {
    const text = fs.readFileSync(path.join(NM, 'typescript/lib/lib.dom.d.ts'), 'utf8').slice(0, 3_000_000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    await countExact(text, 'o200k');
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(3);
  });

  it('stops when aborted', async () => {
    const text = 'word, '.repeat(300_000);
    const ac = new AbortController();
    const p = countExact(text, 'cl100k', { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toThrow();
  });

  it('cuts only between a letter and safe punctuation, and never inside a surrogate pair', () => {
    const text = ('word' + '😀'.repeat(10) + 'abc.').repeat(100_000);
    for (let start = 0; start < text.length; ) {
      const end = nextCut(text, start);
      expect(end).toBeGreaterThan(start);
      if (end < text.length) {
        expect(/[A-Za-z]/.test(text[end - 1]!)).toBe(true);
        expect(text[end]).toBe('.');
      }
      start = end;
    }
    // no safe cut at all: still progresses and keeps pairs whole
    const emoji = '😀'.repeat(400_000);
    const end = nextCut(emoji, 0);
    expect(end % 2).toBe(0);
  });
});
