import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  EVENT_NAMES,
  METHOD_NAMES,
  type EventName,
  type InspectorEvents,
  type InspectorMethods,
  type MethodName,
} from '../src/service/contract.js';
import { METHOD_SCHEMAS } from '../src/service/validate.js';
import { createInspectorService } from '../src/service/service.js';

/**
 * The contract's method list is pinned: adding or renaming a channel is a deliberate change that
 * must touch this file. The runtime lists must equal the interfaces' keys (read from the source,
 * since types vanish at run time), and every implementation must expose exactly them.
 */

const PINNED_METHODS = [
  'getInfo',
  'listRoots',
  'addRoot',
  'removeRoot',
  'reindex',
  'listSessions',
  'listPayloads',
  'getPayload',
  'readPayload',
  'readAsset',
  'revealPath',
  'estimate',
  'analyze',
  'summarize',
  'scoreSummaries',
  'listProviders',
  'listTemplates',
  'saveTemplate',
  'deleteTemplate',
  'limitTuner',
  'wasteReport',
  'toolEvidence',
  'compareSessions',
  'getTimeline',
  'previewConfig',
  'applyConfig',
];
const PINNED_EVENTS = ['onDidIndex', 'onIndexProgress', 'onDidSummarize'];

const contractSource = fs.readFileSync(path.resolve(import.meta.dirname, '..', 'src', 'service', 'contract.ts'), 'utf8');

/** Member names of an `export interface NAME { ... }` block, in order. */
function interfaceKeys(name: string): string[] {
  const start = contractSource.indexOf(`export interface ${name} {`);
  expect(start, name).toBeGreaterThan(-1);
  let depth = 0;
  let i = contractSource.indexOf('{', start);
  const bodyStart = i + 1;
  for (; i < contractSource.length; i++) {
    if (contractSource[i] === '{') depth++;
    else if (contractSource[i] === '}' && --depth === 0) break;
  }
  const body = contractSource.slice(bodyStart, i);
  const keys: string[] = [];
  let d = 0;
  for (const line of body.split('\n')) {
    if (d === 0) {
      const m = /^\s{2}([A-Za-z_$][\w$]*)\??\s*[(:]/.exec(line);
      if (m) keys.push(m[1]!);
    }
    for (const ch of line) {
      if (ch === '{' || ch === '(') d++;
      else if (ch === '}' || ch === ')') d--;
    }
  }
  return keys;
}

describe('the contract', () => {
  it('METHOD_NAMES is pinned and equals the keys of InspectorMethods, in order', () => {
    expect([...METHOD_NAMES]).toEqual(PINNED_METHODS);
    expect(interfaceKeys('InspectorMethods')).toEqual(PINNED_METHODS);
    expect(new Set(METHOD_NAMES).size).toBe(METHOD_NAMES.length);
    // Compile time: every key is listed and nothing else.
    expectTypeOf<(typeof METHOD_NAMES)[number]>().toEqualTypeOf<MethodName>();
    expectTypeOf<keyof InspectorMethods>().toEqualTypeOf<(typeof METHOD_NAMES)[number]>();
  });

  it('EVENT_NAMES is pinned and equals the keys of InspectorEvents', () => {
    expect([...EVENT_NAMES]).toEqual(PINNED_EVENTS);
    expect(interfaceKeys('InspectorEvents')).toEqual(PINNED_EVENTS);
    expectTypeOf<(typeof EVENT_NAMES)[number]>().toEqualTypeOf<EventName>();
    expectTypeOf<keyof InspectorEvents>().toEqualTypeOf<EventName>();
  });

  it('every method has a run-time validator, and no validator exists for anything else', () => {
    expect(Object.keys(METHOD_SCHEMAS).sort()).toEqual([...METHOD_NAMES].sort());
  });

  it('the service implements every method (and the server, in test/server, exposes exactly these)', async () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-contract-'));
    const svc = createInspectorService({ env: process.env, appDataDir: home, transport: 'http', watch: false, scanOnStart: false });
    try {
      await svc.ready;
      for (const m of METHOD_NAMES) expect(typeof svc[m], m).toBe('function');
      expect((await svc.getInfo({})).transport).toBe('http');
    } finally {
      await svc.close();
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
