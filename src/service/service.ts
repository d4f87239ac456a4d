/**
 * The inspector service: every method of the contract (src/service/contract.ts), composed from
 * the index (src/index), the guard (src/pipeline) and summaries (src/summarize). Electron's main
 * process and `spillway serve` both wrap one of these; neither holds logic of its own.
 *
 * | concern                 | methods                                                            | file                |
 * | ----------------------- | ------------------------------------------------------------------ | ------------------- |
 * | roots and the app       | getInfo, listRoots, addRoot, removeRoot, reindex                   | methods/roots.ts    |
 * | sessions and payloads   | listSessions, listPayloads, getPayload, readPayload, readAsset, revealPath | methods/payloads.ts |
 * | sizes and decisions     | estimate, analyze, limitTuner, wasteReport, toolEvidence, compareSessions | methods/analysis.ts |
 * | summaries and templates | summarize, listProviders, listTemplates, saveTemplate, deleteTemplate | methods/summaries.ts |
 * | the context timeline    | getTimeline                                                        | methods/timeline.ts |
 * | the guard rules files   | previewConfig, applyConfig                                         | methods/config.ts   |
 *
 * This file only puts them together. Every request is validated once here (validate.ts), before
 * its method runs; every error leaves as a ServiceError. Paths are confined (paths.ts) to the
 * registered roots and files the user dropped; payload content is read in windows (reader.ts).
 * To add a method: the contract (name, types, METHOD_NAMES), its schema in validate.ts, and its
 * handler in the group it belongs to.
 */
import { METHOD_NAMES, ServiceError, type EventName, type InspectorEvents, type MethodName, type MethodRequest, type MethodResponse } from './contract.js';
import type { OpenedAsset } from './assets.js';
import { createContext, toServiceError, type CallOptions, type CreateServiceOptions, type Handler, type Handlers } from './context.js';
import fs from 'node:fs';
import { checkPathText } from './paths.js';
import { checkDroppedFolder, checkDroppedPath } from './shell/policy.js';
import { analysisMethods } from './methods/analysis.js';
import { configMethods } from './methods/config.js';
import { payloadMethods } from './methods/payloads.js';
import { rootMethods } from './methods/roots.js';
import { summaryMethods } from './methods/summaries.js';
import { timelineMethods } from './methods/timeline.js';
import { isMethodName, validateRequest } from './validate.js';

export { estimateText, MAX_WHOLE_READ_BYTES, BINARY_ESTIMATE_SAMPLE_BYTES } from './heavy.js';
export { COMPUTE_INLINE_MAX_BYTES, createComputePool, type ComputePool } from './compute.js';
export { parseRequestBody } from './json-body.js';
export { defaultRootsChoice, NO_DEFAULT_ROOTS_ENV, pruneScratch, SCRATCH_MAX_AGE_DAYS, type CallOptions, type CreateServiceOptions, type Transport } from './context.js';
export { DEFAULT_ASSET_INLINE_BYTES } from './methods/payloads.js';
export { DEFAULT_SUMMARY_PROVIDER, SUMMARY_BACKSTOP_MS } from './methods/summaries.js';
export type { OpenedAsset } from './assets.js';

type Methods = { [M in MethodName]: (req: MethodRequest<M>, call?: CallOptions) => Promise<MethodResponse<M>> };

export interface InspectorService extends Methods {
  /** Resolves when the index is open and the roots are registered (methods wait for it themselves). */
  readonly ready: Promise<void>;
  readonly dbPath: string;
  readonly appDataDir: string;
  on<E extends EventName>(event: E, listener: (payload: InspectorEvents[E]) => void): () => void;
  /** Validate a method name and run it: what transports call with untrusted input. */
  invoke(method: string, req: unknown, call?: CallOptions): Promise<unknown>;
  /**
   * One asset, checked (its own session's assets folder, no link, sha256 verified; an object of an
   * S3 root likewise) and open for streaming (`GET /api/asset/...`, app://). The caller streams,
   * reads or closes it.
   */
  openAsset(req: { payloadId: string; sha256: string }): Promise<OpenedAsset>;
  /** Allow reading one file the user dropped or picked, as proven by the desktop shell's main process. */
  allowDroppedFile(p: string): void;
  /**
   * What the desktop shell's main process calls with a path it has proof the user dropped
   * (`webUtils.getPathForFile`): a regular file becomes readable (analyze), a folder may become a
   * root through the window's `addRoot`. Anything else is refused (null).
   */
  allowDropped(p: unknown): 'file' | 'folder' | null;
  /** Add a root the user picked in a trusted place (the desktop's Open Folder dialog): hard limits only. */
  addTrustedRoot(p: string): Promise<MethodResponse<'addRoot'>>;
  /** Whether the compute worker is running a summary or an analysis now (diagnostics, tests). */
  readonly computeBusy: boolean;
  /** Stop watching, wait for the running scan, close the database. */
  close(): Promise<void>;
}

export function createInspectorService(opts: CreateServiceOptions): InspectorService {
  const ctx = createContext(opts);
  const roots = rootMethods(ctx);
  const groups = [roots.methods, payloadMethods(ctx), analysisMethods(ctx), summaryMethods(ctx), timelineMethods(ctx), configMethods(ctx)];

  // The groups must cover the contract exactly once: a missing or doubled method is a bug here, not at run time later.
  const table = {} as Handlers<MethodName>;
  for (const g of groups) {
    for (const [name, fn] of Object.entries(g)) {
      if (name in table) throw new Error(`service method ${name} is defined twice`);
      (table as Record<string, unknown>)[name] = fn;
    }
  }
  const missing = METHOD_NAMES.filter((m) => !(m in table));
  if (missing.length || Object.keys(table).length !== METHOD_NAMES.length) throw new Error(`service methods do not match the contract: ${missing.join(', ')}`);

  const methods = {} as Methods;
  for (const name of METHOD_NAMES) {
    const fn = table[name] as Handler<MethodName>;
    (methods as Record<string, unknown>)[name] = async (req: unknown, call?: CallOptions) => {
      try {
        return await fn(validateRequest(name, req) as never, call);
      } catch (err) {
        throw toServiceError(err);
      }
    };
  }

  return {
    ...methods,
    ready: ctx.ready,
    dbPath: ctx.dbPath,
    appDataDir: ctx.paths.root,
    on: (event, listener) => ctx.emitter.on(event, listener),
    async invoke(method, req, call) {
      if (!isMethodName(method)) throw new ServiceError('NOT_FOUND', `no such method: ${JSON.stringify(method)}`);
      return (methods[method] as (r: unknown, c?: CallOptions) => Promise<unknown>)(req, call);
    },
    async openAsset(req) {
      try {
        const r = validateRequest('readAsset', { payloadId: req?.payloadId, sha256: req?.sha256 });
        return await ctx.openAsset(r.payloadId, r.sha256);
      } catch (err) {
        throw toServiceError(err);
      }
    },
    allowDroppedFile(p: string) {
      checkPathText(p);
      ctx.guard.allowFile(p, 'dropped file');
    },
    allowDropped(p: unknown) {
      if (checkDroppedPath(p) === null) {
        ctx.guard.allowFile(p as string, 'dropped file');
        return 'file';
      }
      if (checkDroppedFolder(p) === null) {
        ctx.consentToFolder(fs.realpathSync.native(p as string));
        return 'folder';
      }
      return null;
    },
    async addTrustedRoot(p: string) {
      try {
        return await roots.addRootFrom(p, 'trusted');
      } catch (err) {
        throw toServiceError(err);
      }
    },
    get computeBusy() {
      return ctx.compute.busy;
    },
    close: () => ctx.close(),
  };
}
