/**
 * A real inspector service (real index) behind `spillway serve`'s HTTP server on a loopback port, for
 * one test file: its roots are filled first, then indexed once. Call `httpService` at the top level of
 * the file; the returned object's fields are set once its beforeAll has run, and its afterAll stops
 * the server and the service and removes the folder.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startServer, type RunningServer } from '../../src/server/server.js';
import { createInspectorService, type CreateServiceOptions, type InspectorService } from '../../src/service/service.js';

export interface HttpService {
  /** The file's private folder (its real path). */
  tmp: string;
  /** The service's app data, `<tmp>/home`. */
  home: string;
  /** The one root, `<tmp>/root`. */
  root: string;
  svc: InspectorService;
  srv: RunningServer;
}

export function httpService(prefix: string, fill: (root: string) => Promise<unknown>, options: Partial<CreateServiceOptions> = {}): HttpService {
  const s = {} as HttpService;
  beforeAll(async () => {
    s.tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
    s.home = path.join(s.tmp, 'home');
    s.root = path.join(s.tmp, 'root');
    await fill(s.root);
    s.svc = createInspectorService({ env: process.env, appDataDir: s.home, roots: [s.root], transport: 'http', scanOnStart: false, watch: false, ...options });
    await s.svc.ready;
    await s.svc.reindex({});
    s.srv = await startServer({ service: s.svc, port: 0, staticDir: null });
  }, 120_000);
  afterAll(() => stop(s));
  return s;
}

/** The server first (it answers through the service), then the service, then the folder. */
async function stop(s: Partial<HttpService>): Promise<void> {
  await s.srv?.close();
  await s.svc?.close();
  if (s.tmp) fs.rmSync(s.tmp, { recursive: true, force: true });
}
