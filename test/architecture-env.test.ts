import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Environment variables are read at the edges (src/cli, src/integrations, src/server, electron/ and
 * the package root src/index.ts) and passed down as values. The layers below take an `env` value
 * or a setting; a read of the process's own variables in them is a finding, unless it is listed
 * here with its reason.
 */
const ROOT = path.resolve(__dirname, '..');
const INNER = ['src/pipeline', 'src/index', 'src/service', 'src/summarize', 'src/compress'];

const ALLOWED: Record<string, string> = {
  'src/pipeline/store/s3/client.ts':
    "the AWS SDK's own switch: set around the SDK's load (and restored) so it prints no Node-version warning into a hook's or proxy's output; a write, not a setting read",
  'src/pipeline/store/s3/config.ts':
    "a bucket store's variables when its caller gives none (s3EnvOf): the AWS SDK's own chain reads the standard AWS variables (endpoint, region, credentials, profile) from the process whatever we pass, so the pool key, the redacted secrets, the store deadline and the sync queue a fallen-back spill goes to are resolved from the same variables the SDK will use; callers that read the environment pass `env`",
};

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(rel));
    else if (/\.tsx?$/.test(e.name)) out.push(rel);
  }
  return out;
}

/** Lines of code (not comments) that touch process.env. */
function envReads(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  return text
    .split('\n')
    .map((line, i) => ({ line: line.replace(/\/\/.*$/, ''), n: i + 1 }))
    .filter(({ line }) => /\bprocess\s*\.\s*env\b|\bprocess\s*\[\s*['"]env['"]\s*\]/.test(line))
    .map(({ line, n }) => `${file}:${n}: ${line.trim()}`);
}

describe('environment variables are read at the edges only', () => {
  const files = INNER.flatMap(filesUnder);

  it('reads the layers it checks', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files).toContain('src/pipeline/guard.ts');
  });

  it('no inner layer reads process.env, except the listed files', () => {
    const found = files.filter((f) => !(f in ALLOWED)).flatMap(envReads);
    expect(found).toEqual([]);
  });

  it('every listed exception still reads it and says why (the list stays true)', () => {
    for (const [file, why] of Object.entries(ALLOWED)) {
      expect(why.length, file).toBeGreaterThan(40);
      expect(envReads(file).length, `${file} no longer reads process.env: drop it from the list`).toBeGreaterThan(0);
    }
  });
});
