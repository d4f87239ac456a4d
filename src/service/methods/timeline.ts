/** The context timeline of a session: getTimeline (docs/timeline.md). */
import { ServiceError } from '../contract.js';
import type { Handlers, ServiceContext } from '../context.js';

export type TimelineMethodName = 'getTimeline';

export function timelineMethods(ctx: ServiceContext): Handlers<TimelineMethodName> {
  return {
    async getTimeline(r) {
      const t = await (await ctx.idx()).timeline(r);
      if (!t) throw new ServiceError('NOT_FOUND', `no such session: ${r.sessionId}`);
      return t;
    },
  };
}
