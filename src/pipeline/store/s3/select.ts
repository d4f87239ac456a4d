import { LocalSpillStore } from '../local.js';
import { SpillStoreError, type SpillStore } from '../seam.js';
import { isS3Url } from './location.js';
import { redactSecrets, type S3StoreOptions } from './config.js';
import { S3SpillStore } from './spill-store.js';

/**
 * Which stores a spill goes to, from the `store` option or `env.SPILLWAY_STORE` (the caller's
 * variables, passed down from the edge that read them): an `s3://bucket/prefix`
 * URL gives the bucket first and the local session folder as the fallback (queued for
 * `spillway sync`). Undefined: neither is set, the guard's default (the session folder) applies.
 * SDK-free: the SDK loads on the first store call, so a result that passes through never loads it.
 */
export function configuredStores(
  o: { store?: unknown; sessionPath?: string; fallbackStore?: SpillStore },
  /** The caller's variables; none: SPILLWAY_STORE does not apply (the S3 settings then come from the SDK's own variables, config.ts). */
  env: NodeJS.ProcessEnv | undefined,
  s3?: S3StoreOptions,
): SpillStore[] | undefined {
  const setting = typeof o.store === 'string' ? o.store : o.store === undefined ? env?.SPILLWAY_STORE : undefined;
  if (setting === undefined || setting.trim() === '') return undefined;
  const local = new LocalSpillStore(o.sessionPath ?? '.');
  let primary: SpillStore;
  try {
    if (!isS3Url(setting)) throw new Error(`the store must be an s3://bucket/prefix URL, not ${JSON.stringify(String(setting).slice(0, 200))}`);
    const s = S3SpillStore.forSession(setting, o.sessionPath ?? '.', { ...(env ? { env } : {}), ...s3 });
    return [s, o.fallbackStore ?? s.fallback(local, env)];
  } catch (err) {
    // A setting that cannot work must not lose the spill: every call is UNAVAILABLE (with why),
    // so the guard saves locally and the message says so.
    const why = redactSecrets(`the store setting is not usable: ${(err as Error).message}`);
    primary = unusableStore(why);
  }
  return [primary, o.fallbackStore ?? local];
}

function unusableStore(why: string): SpillStore {
  const fail = async (): Promise<never> => {
    throw new SpillStoreError('UNAVAILABLE', why);
  };
  return { location: '(no usable store)', describe: (k) => k, putPayload: fail, putSidecar: fail, movePayload: fail, putAsset: fail, read: fail, stat: fail };
}
