import { describe, expect, it } from 'vitest';
import { decideFaults, faultsEnabled, unitHash } from '../../shared/faults.js';
import { createToolRegistry } from '../../electron/engine/tools/registry.js';
import { memoryContext, testTask } from '../support/tools-fixtures.js';

const settings = (over: Partial<ReturnType<typeof testTask>['faults']>) => ({
  seed: 1,
  permission_error: 0,
  tool_failure: 0,
  ...over,
});

describe('fault decisions', () => {
  it('are a pure function of (seed, step, call index)', () => {
    const f = settings({ permission_error: 0.3, tool_failure: 0.3, latency: { rate: 0.5, seconds: 1 } });
    const run = () => Array.from({ length: 50 }, (_, i) => decideFaults(f, 1 + (i % 7), i % 3));
    expect(run()).toEqual(run());
    const other = Array.from({ length: 50 }, (_, i) => decideFaults({ ...f, seed: 2 }, 1 + (i % 7), i % 3));
    expect(other).not.toEqual(run());
  });

  it('inject each kind at about its rate, independently', () => {
    const f = settings({ permission_error: 0.1, tool_failure: 0.2, latency: { rate: 0.3, seconds: 2 } });
    const counts = { latency: 0, permission_error: 0, tool_failure: 0 };
    for (let step = 1; step <= 500; step++)
      for (let call = 0; call < 4; call++) for (const x of decideFaults(f, step, call)) counts[x.kind]++;
    expect(counts.latency / 2000).toBeCloseTo(0.3, 1);
    expect(counts.permission_error / 2000).toBeCloseTo(0.1, 1);
    // A tool failure is drawn only when no permission error applies: 0.9 × 0.2.
    expect(counts.tool_failure / 2000).toBeCloseTo(0.18, 1);
  });

  it('never inject at rate 0 and always at rate 1', () => {
    expect(faultsEnabled(settings({}))).toBe(false);
    expect(decideFaults(settings({}), 3, 0)).toEqual([]);
    expect(decideFaults(settings({ tool_failure: 1 }), 3, 0)).toEqual([{ kind: 'tool_failure' }]);
    expect(unitHash('1:1:0')).not.toBe(unitHash('1:1:1'));
  });
});

describe('faults through the registry', () => {
  it('a permission error returns permission_denied without running the tool', async () => {
    const task = testTask({ faults: { permission_error: 1 } });
    const ctx = await memoryContext(task, { step: 4, callIndex: 1 });
    const out = await createToolRegistry(task).call('execute_shell', { command: 'echo x > ran' }, ctx);
    expect(out.result.error?.code).toBe('permission_denied');
    expect(out.faults).toEqual([{ kind: 'permission_error', detail: { seed: 1, step: 4, call_index: 1 } }]);
    expect((await ctx.sandbox.readFile('ran')).ok).toBe(false);
  });

  it('a tool failure returns tool_failed without running the tool', async () => {
    const task = testTask({ faults: { tool_failure: 1 } });
    const ctx = await memoryContext(task);
    const out = await createToolRegistry(task).call('memory_write', { key: 'k', value: 1 }, ctx);
    expect(out.result.error?.code).toBe('tool_failed');
    expect(out.faults.map((f) => f.kind)).toEqual(['tool_failure']);
    expect(ctx.memory.has('k')).toBe(false);
  });

  it('latency delays the call and counts against its timeout', async () => {
    const task = testTask({ faults: { latency: { rate: 1, seconds: 0.05 } } });
    const ctx = await memoryContext(task);
    const tools = createToolRegistry(task);
    const started = performance.now();
    const out = await tools.call('execute_shell', { command: 'echo hi' }, ctx);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(out.result).toMatchObject({ ok: true, stdout: 'hi\n' });
    expect(out.result.duration_ms).toBeGreaterThanOrEqual(50);
    expect(out.faults).toEqual([
      { kind: 'latency', detail: { seed: 1, step: 1, call_index: 0, seconds: 0.05 } },
    ]);
    const slow = await tools.call('execute_shell', { command: 'echo hi', timeout: 0.02 }, ctx);
    expect(slow.result.error?.code).toBe('timeout');
  });

  it('replays the same faults for the same step and call index', async () => {
    const task = testTask({ faults: { seed: 7, permission_error: 0.5 } });
    const tools = createToolRegistry(task);
    const codes = async () => {
      const out: (string | undefined)[] = [];
      for (let step = 1; step <= 20; step++) {
        const ctx = await memoryContext(task, { step });
        out.push((await tools.call('execute_shell', { command: 'true' }, ctx)).result.error?.code);
      }
      return out;
    };
    const first = await codes();
    expect(first).toEqual(await codes());
    expect(first).toContain('permission_denied');
    expect(first).toContain(undefined);
  });
});
