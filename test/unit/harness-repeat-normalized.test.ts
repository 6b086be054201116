// `--break repeat=N` and QA's loop rule share one normalisation of calls: a call spelled
// differently (whitespace, quoting, key order) is still "the same call" for both.
import { afterEach, describe, expect, it } from 'vitest';
import { checkLoop } from '../../shared/qa/loop.js';
import { actionSignature } from '../../shared/rewards.js';
import { normalizeCall } from '../../shared/qa/normalize-call.js';
import { call, final, memoryTask, tempHome, startScripted } from '../support/harness.js';

let env: ReturnType<typeof tempHome>;
afterEach(() => env?.cleanup());

/** One call, three spellings QA counts as the same. */
const SPELLINGS = [
  { command: 'grep  -n foo   notes.txt', timeout: 5 },
  { timeout: 5, command: "grep -n 'foo' notes.txt" },
  { command: 'grep -n "foo" notes.txt ', timeout: 5 },
];

describe('one normalisation of calls', () => {
  it('signatures of differently spelled equal calls are equal, and differ for another call', () => {
    const sigs = SPELLINGS.map((args) => actionSignature([{ name: 'execute_shell', arguments: args }]));
    expect(new Set(sigs).size).toBe(1);
    expect(sigs[0]).toBe(JSON.stringify([normalizeCall('execute_shell', SPELLINGS[0])]));
    expect(
      actionSignature([
        { name: 'execute_shell', arguments: { command: 'grep -n bar notes.txt', timeout: 5 } },
      ]),
    ).not.toBe(sigs[0]);
  });

  it('a repeat=3 breakpoint fires where the loop rule flags', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      ...SPELLINGS.map((args) => call('execute_shell', args)),
      final('done'),
    ]);
    c.setBreakpoints([{ kind: 'repeat', count: 3 }]);
    expect(await c.run()).toMatchObject({ kind: 'breakpoint', breakpoint: { kind: 'repeat' } });
    expect(c.currentStep()).toBe(3);
    const flags = checkLoop({
      events: c.history(),
      torn: false,
      task: { qa: { loop_repeats: 3, loop_share: 0.8 } },
    } as unknown as Parameters<typeof checkLoop>[0]);
    expect(flags.map((f) => [f.rule, f.step])).toEqual([['loop', 3]]);
    await c.dispose();
  });
});
