/**
 * The base64 of a flat, well-compressed image (a logo, a blank screenshot) is mostly `A`s, so its
 * characters fail the statistics test for bare base64; its decoded PNG signature makes it an asset
 * all the same. Seen with the real Claude Code: `base64 logo.png` (5,357 chars) reached the model as text.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { guardLargeResult } from '../../src/index.js';
import { base64Statistics } from '../../src/pipeline/base64.js';
import { makePngOf } from '../clients/realistic-inputs.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('base64 of a flat image', () => {
  it('fails the character statistics, yet is cut out as an image/png asset, wrapped at 76 as `base64` prints it', async () => {
    const png = makePngOf(640, 360); // the logo of the realistic session, whose base64 leaked
    const b64 = png.toString('base64');
    expect(base64Statistics(b64)).toBe(false); // the case the signature check is for
    const wrapped = b64.replace(/.{76}/g, '$&\n');
    const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-flat-'));
    dirs.push(session);
    const g = await guardLargeResult(wrapped, { sessionPath: session, toolName: 'Bash', summarize: false });
    expect(g).not.toBeNull();
    expect(g!.assets.map((a) => a.mimeType)).toEqual(['image/png']);
    expect(g!.message).not.toContain(b64.slice(0, 76));
    expect(fs.readFileSync(g!.assets[0]!.path)).toEqual(png);
  });

  it('text that merely starts with the same letters is not decoded into an asset', async () => {
    const session = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-flat-'));
    dirs.push(session);
    const text = 'iVBORw0KGgo is how a PNG begins in base64; this line is prose, not an image.\n'.repeat(3);
    expect(await guardLargeResult(text, { sessionPath: session, toolName: 'Bash', summarize: false })).toBeNull();
  });
});
