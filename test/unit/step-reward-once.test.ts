import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import type { EpisodeView, StepDetail } from '../../shared/contract/models.js';
import { writeSampleEpisode } from '../support/traces.js';
import { stepFactsOf } from '../../electron/engine/compare/step-facts.js';
import { stepRewards } from '../../shared/rewards.js';
import { summarizeSteps } from '../../shared/step-summary.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import { QaTrace, sh } from '../support/qa-traces.js';

// A step's reward was summed by the rows, last-taken by the diff and first-taken by candidates:
// three numbers for one step once a step recorded two reward events (issue 34.5).
describe("a step's reward is one number in every view", () => {
  /** Step 1 with two step rewards (0.5 and -0.2), then a final answer with a final reward of 1. */
  function twoRewards(): TraceEvent[] {
    const events = new QaTrace()
      .step({ calls: [sh('ls', { stdout: 'x' })], reward: 0.5 })
      .step({ final: 'done' })
      .end('succeeded', { success: true, exit_code: 0 }, { reward: 1 })
      .events();
    const first = events.findIndex((e) => e.type === 'reward' && e.step === 1);
    const extra = { ...events[first], seq: 0, components: { r: -0.2 }, total: -0.2 } as TraceEvent;
    events.splice(first + 1, 0, extra);
    return events.map((e, seq) => ({ ...e, seq }) as TraceEvent);
  }

  it('sums the step rewards and keeps the final one apart', () => {
    const events = twoRewards();
    expect(stepRewards(events.filter((e) => e.step === 1))).toEqual({ step: 0.3, final: null });
    expect(stepRewards(events.filter((e) => e.step === 2)).final).toBe(1);
    expect(stepRewards([])).toEqual({ step: null, final: null });
  });

  it('the step rows and the step-aligned diff say the same', () => {
    const events = twoRewards();
    const row = summarizeSteps(events).find((s) => s.step === 1);
    const fact = stepFactsOf(events).find((f) => f.step === 1);
    expect(row?.reward).toBeCloseTo(0.3);
    expect(fact?.reward).toBeCloseTo(0.3);
  });

  it("the inspector's step detail sums them too: each component and the total (it showed the last event's)", async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-step-reward-'));
    const services = createAppServices(engineServicesPorts({ home }));
    try {
      const ep = await writeSampleEpisode(openEpisodeStore(home), {
        script: [
          { reward: [{ format_valid: 0.1 }, { format_valid: 0.1, tool_error: -0.1 }] },
          { final: 'done' },
        ],
      });
      const view = await services.handle('episode.open', { id: ep.branch, last_rows: 10 });
      const detail = await services.handle('episode.stepDetail', { id: ep.branch, step: 1 });
      if (!view.ok || !detail.ok) throw new Error('not opened');
      const row = (view.value as EpisodeView).rows.find((r) => r.step === 1);
      const rewards = (detail.value as StepDetail).rewards;
      expect(rewards?.total).toBeCloseTo(0.1);
      expect(rewards?.components.format_valid).toBeCloseTo(0.2);
      expect(rewards?.components.tool_error).toBeCloseTo(-0.1);
      expect(rewards?.total).toBeCloseTo(row?.reward ?? NaN);
    } finally {
      await services.dispose();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
