/**
 * The service is a table of methods (issue 15, item 4): four groups that together are exactly the
 * contract, assembled in service.ts, with every request validated once, in the wrapper.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHOD_NAMES, ServiceError } from '../../src/service/contract.js';
import { createContext } from '../../src/service/context.js';
import { analysisMethods } from '../../src/service/methods/analysis.js';
import { configMethods } from '../../src/service/methods/config.js';
import { payloadMethods } from '../../src/service/methods/payloads.js';
import { rootMethods } from '../../src/service/methods/roots.js';
import { summaryMethods } from '../../src/service/methods/summaries.js';
import { timelineMethods } from '../../src/service/methods/timeline.js';
import { createInspectorService, type InspectorService } from '../../src/service/service.js';

const METHODS_DIR = path.resolve(import.meta.dirname, '..', '..', 'src', 'service', 'methods');
let tmp: string;
let svc: InspectorService;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-table-'));
  svc = createInspectorService({ env: process.env, appDataDir: path.join(tmp, 'home'), transport: 'http', scanOnStart: false, watch: false });
  await svc.ready;
});

afterAll(async () => {
  await svc?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the service as a table of methods', () => {
  it('exposes exactly the contract methods, plus its named host-side members', () => {
    const own = Object.keys(svc).filter((k) => typeof (svc as unknown as Record<string, unknown>)[k] === 'function');
    const host = ['on', 'invoke', 'openAsset', 'allowDroppedFile', 'allowDropped', 'addTrustedRoot', 'close'];
    expect(own.filter((k) => !host.includes(k)).sort()).toEqual([...METHOD_NAMES].sort());
    expect(own.filter((k) => host.includes(k)).sort()).toEqual([...host].sort());
  });

  it('the six groups are disjoint and together are the contract', async () => {
    const ctx = createContext({ env: process.env, appDataDir: path.join(tmp, 'home-groups'), transport: 'http', scanOnStart: false, watch: false });
    try {
      const groups = { roots: rootMethods(ctx).methods, payloads: payloadMethods(ctx), analysis: analysisMethods(ctx), summaries: summaryMethods(ctx), timeline: timelineMethods(ctx), config: configMethods(ctx) };
      const names = Object.values(groups).flatMap((g) => Object.keys(g));
      expect(new Set(names).size).toBe(names.length);
      expect([...names].sort()).toEqual([...METHOD_NAMES].sort());
    } finally {
      await ctx.close();
    }
  });

  it('validates every request before its method runs; no method validates again', async () => {
    for (const m of METHOD_NAMES) {
      const err = await (svc[m] as (r: unknown) => Promise<unknown>)({ notAField: 1 }).catch((e: unknown) => e);
      expect(err, m).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code, m).toBe('BAD_REQUEST');
      expect((err as ServiceError).message, m).toMatch(new RegExp(`^${m}: `));
    }
    for (const f of fs.readdirSync(METHODS_DIR)) {
      expect(fs.readFileSync(path.join(METHODS_DIR, f), 'utf8'), f).not.toMatch(/validateRequest\(/);
    }
  });
});
