/** The context timeline of a session: getTimeline (docs/timeline.md). */
import { ServiceError } from '../contract.js';
import type { Handlers, ServiceContext } from '../context.js';

export type TimelineMethodName = 'getTimeline';

export function timelineMethods(ctx: ServiceContext): Handlers<TimelineMethodName> {
  return {
    async getTimeline(r) {
      const idx = await ctx.idx();
      const t = await (await ctx.timelines()).timeline(r);
      if (!t) throw new ServiceError('NOT_FOUND', `no such session: ${r.sessionId}`);
      // The calls that read a spill back, as `spillway context --json` lists them; a slider move asks for the replays alone.
      return r.replayOnly ? t : { ...t, readBacks: idx.readBacks([r.sessionId]) };
    },
  };
}
