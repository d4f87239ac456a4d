/** Roots and the app: getInfo, listRoots, addRoot, removeRoot, reindex. */
import path from 'node:path';
import { ALL_STRATEGIES, DEFAULT_LIMIT_TOKENS, DEFAULT_PRICE_PER_MTOK_USD, DEFAULT_PROFILE, DEFAULT_STRATEGY, PROFILES } from '../../pipeline/index.js';
import { VERSION } from '../../version.js';
import { ServiceError, type IndexStats, type RootInfo } from '../contract.js';
import { toServiceError, type Handlers, type ServiceContext } from '../context.js';
import { checkPathText } from '../paths.js';
import { checkRoot, type RootSource } from '../roots-policy.js';
import { isS3Path } from '../s3-read.js';

export type RootMethodName = 'getInfo' | 'listRoots' | 'addRoot' | 'removeRoot' | 'reindex';

export function rootMethods(ctx: ServiceContext) {
  /** Register a root after the policy for `source` (roots-policy.ts), make it readable, scan it in the background. */
  const addRootFrom = async (p: string, source: RootSource): Promise<RootInfo> => {
    checkPathText(p);
    // A bucket prefix (s3://bucket/prefix) is a URL, not a path; the policy decides who may add one.
    if (!isS3Path(p) && !path.isAbsolute(p)) throw new ServiceError('BAD_REQUEST', `root must be an absolute path: ${JSON.stringify(p)}`);
    const index = await ctx.idx();
    const real = checkRoot(p, source, ctx.rootPolicy, ctx.hasConsent);
    let root: RootInfo;
    try {
      root = index.addRoot(real);
    } catch (err) {
      throw toServiceError(err);
    }
    // The user's word for it, kept for the next start: the CLI's, a dialog's, or a drop's (checkRoot proved it).
    ctx.recordConsent(root.path, source === 'trusted' ? 'dialog' : 'drop');
    ctx.allowRootArea(root);
    void index.scan({ rootId: root.id }).catch((err: unknown) => ctx.warn(`scan of ${root.path} failed: ${(err as Error).message}`));
    return root;
  };

  const methods: Handlers<RootMethodName> = {
    async getInfo() {
      return {
        version: VERSION,
        appDataDir: ctx.paths.root,
        dbPath: ctx.dbPath,
        defaults: { limitTokens: DEFAULT_LIMIT_TOKENS, profile: DEFAULT_PROFILE, strategy: DEFAULT_STRATEGY, pricePerMTok: DEFAULT_PRICE_PER_MTOK_USD },
        strategies: [...ALL_STRATEGIES],
        profiles: [...PROFILES],
        transport: ctx.transport,
      };
    },

    async listRoots() {
      return ctx.syncRootAreas(await ctx.idx());
    },

    async addRoot({ path: p }) {
      return addRootFrom(p, ctx.transport === 'http' ? 'http' : 'window');
    },

    async removeRoot({ id }) {
      const index = await ctx.idx();
      const root = index.listRoots().find((r) => r.id === id);
      if (!root) throw new ServiceError('NOT_FOUND', `no root with id ${JSON.stringify(id)}`);
      if (ctx.isScratch(root.path)) throw new ServiceError('BAD_REQUEST', 'the scratch root holds dropped-file analyses and stays registered');
      index.removeRoot(id);
      ctx.forgetRootArea(root);
      ctx.forgetConsent(root.path);
      return { ok: true as const };
    },

    async reindex({ rootId }) {
      const index = await ctx.idx();
      ctx.syncRootAreas(index);
      // Asked for: a bucket is listed whole, which finds what its journal missed and what was deleted.
      const r = await index.scan({ rootId, full: true });
      await ctx.restoreImportedRuns(index);
      const stats: IndexStats = { sessions: r.sessions, payloads: r.payloads, assets: r.assets, bytes: r.bytes, seconds: r.seconds };
      return stats;
    },
  };
  return { methods, addRootFrom };
}
