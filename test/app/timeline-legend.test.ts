import { describe, expect, it } from 'vitest';
import type { TimelineTurn } from '../../src/service/contract.js';
import { legendCall, ownShares, peakCall } from '../../app/lib/timeline-legend.js';

const turn = (context: number | null, stack: Record<string, number>) => ({ context, stack }) as unknown as TimelineTurn;

// Issue 29: the legend showed the stacked band's running total ("tool:Bash: 95,665" where Bash's
// own share was a few thousand) and "--" until hovered.
describe('the Timeline legend', () => {
  const t = {
    turns: [turn(10_000, { system: 8_000, 'tool:Bash': 2_000 }), turn(95_665, { system: 8_000, 'tool:Read': 84_000, 'tool:Bash': 3_665 }), turn(40_000, { system: 8_000, 'tool:Bash': 2_000, 'mcp:fs': 30_000 })],
  };

  it("gives each part its own tokens per call, and `rest` the parts not drawn on their own", () => {
    const own = ownShares(t, ['tool:Read', 'system', 'tool:Bash', 'rest']);
    expect(own.get('tool:Bash')).toEqual([2_000, 3_665, 2_000]);
    expect(own.get('tool:Read')).toEqual([0, 84_000, 0]);
    expect(own.get('rest')).toEqual([0, 0, 30_000]);
    // The parts add up to the stack, each once.
    for (let i = 0; i < t.turns.length; i++) {
      const sum = [...own.values()].reduce((a, v) => a + v[i]!, 0);
      expect(sum).toBe(Object.values(t.turns[i]!.stack).reduce((a, b) => a + b, 0));
    }
  });

  it('away from the chart it describes the peak call, and says so', () => {
    expect(peakCall(t)).toBe(1);
    expect(legendCall(t, null)).toEqual({ call: 1, atPeak: true });
    expect(legendCall(t, 2)).toEqual({ call: 2, atPeak: false });
    expect(peakCall({ turns: [turn(null, {}), turn(null, {})] })).toBe(0);
  });
});
