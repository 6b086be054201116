import { afterEach, describe, expect, it } from 'vitest';
import { replayVerify } from '../../electron/engine/harness/index.js';
import {
  call,
  final,
  memorySupply,
  memoryTask,
  ofType,
  tempHome,
  startScripted,
} from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

// Faults are a pure function of (seed, step, call index): the trace records them as
// `fault` events, and re-execution replay draws the same ones at the same calls.
describe('fault injection (memory sandbox)', () => {
  it('records injected faults and re-execution replay reproduces them exactly', async () => {
    env = tempHome();
    const calls = Array.from({ length: 8 }, (_, i) => call('execute_shell', { command: `echo ${i}` }));
    const c = await startScripted(
      env,
      {
        task: memoryTask({ max_steps: 20, faults: { seed: 7, permission_error: 0.25, tool_failure: 0.25 } }),
      },
      [...calls, call('write_file', { path: 'done.txt', content: 'ok' }), final('done')],
    );
    await c.run();
    await c.dispose();
    const trace = env.store.readTrace(env.store.resolve(c.branch));
    const faults = ofType(trace.events, 'fault');
    expect(faults.length).toBeGreaterThan(0);
    expect(faults.some((f) => f.kind !== 'latency')).toBe(true);
    const failed = ofType(trace.events, 'tool_result').filter(
      (r) => r.result.error?.code === 'permission_denied' || r.result.error?.code === 'tool_failed',
    );
    // Every injected failure shows in the result of the call it hit, and nothing else fails.
    expect(failed.map((r) => r.call_id).sort()).toEqual(
      faults
        .filter((f) => f.kind !== 'latency')
        .map((f) => f.call_id)
        .sort(),
    );

    const report = await replayVerify({
      id: c.branch,
      store: env.store,
      parts: env.parts,
      supply: memorySupply,
    });
    expect(report.diverged_at).toBeNull();
  });
});
