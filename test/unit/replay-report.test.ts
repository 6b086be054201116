import { afterEach, describe, expect, it } from 'vitest';
import { summaryLine, verdictLine } from '../../electron/cli/replay.js';
import {
  differenceLabel,
  replayReport,
  type StepVerdict,
} from '../../electron/engine/harness/replay-report.js';
import { replayVerify, withReexecution } from '../../electron/engine/harness/replay-verify.js';
import { call, final, memorySupply, memoryTask, startScripted, tempHome } from '../support/harness.js';

let env: ReturnType<typeof tempHome> | undefined;
afterEach(() => env?.cleanup());

const head = { episode: 'ep-1', branch: 'ep-1', replayed: 'program' as const };
const noVerifier = { verifier_match: null, recorded_verifier: null, replayed_verifier: null };
const recorded: StepVerdict[] = [
  { step: 1, verdict: 'match', workspace_match: true },
  { step: 2, verdict: 'match', workspace_match: true },
  { step: 3, verdict: 'no_calls', workspace_match: true },
];

describe('one replay report for every agent', () => {
  it('an agent re-run: a differing output is tool_result_differs at its step, a differing workspace apart', () => {
    const steps = withReexecution(recorded, {
      drift: [
        {
          step: 1,
          calls: [{ call_id: 'call_1', name: 'shell', recorded: '10:00\n', actual: '10:01\n' }],
          workspace: null,
        },
        { step: 2, calls: [], workspace: { recorded: 'aaa', actual: 'bbb' } },
      ],
      divergence: null,
    });
    expect(steps).toEqual([
      {
        step: 1,
        verdict: 'diverged',
        workspace_match: true,
        diff: [
          {
            kind: 'tool_result_differs',
            call_id: 'call_1',
            name: 'shell',
            field: 'output',
            recorded: '10:00\n',
            replayed: '10:01\n',
          },
        ],
      },
      { step: 2, verdict: 'match', workspace_match: false },
      { step: 3, verdict: 'no_calls', workspace_match: true },
    ]);
    const report = replayReport(head, steps, noVerifier);
    expect(report).toMatchObject({
      verdict: 'diverged',
      diverged_at: 1,
      workspace_diverged_at: 2,
      diff: [{ kind: 'tool_result_differs', name: 'shell' }],
    });
  });

  it('a request the recording cannot answer diverges at its step; one past the recording is added', () => {
    const div = { field: 'messages[0].content', recorded: 'a', actual: 'b' };
    const at2 = withReexecution(recorded, { drift: [], divergence: { step: 2, ...div } });
    expect(at2[1]).toEqual({
      step: 2,
      verdict: 'diverged',
      workspace_match: true,
      diff: [{ kind: 'request_unanswerable', field: 'messages[0].content', recorded: 'a', replayed: 'b' }],
    });
    const past = withReexecution(recorded, { drift: [], divergence: { step: 4, ...div } });
    expect(past.map((v) => [v.step, v.verdict, v.workspace_match])).toEqual([
      [1, 'match', true],
      [2, 'match', true],
      [3, 'no_calls', true],
      [4, 'diverged', null],
    ]);
    expect(replayReport(head, past, noVerifier)).toMatchObject({
      verdict: 'diverged',
      diverged_at: 4,
      workspace_diverged_at: null,
    });
  });

  it('identical needs no diverged step, no differing workspace and no disagreeing verifier', () => {
    expect(replayReport(head, recorded, noVerifier).verdict).toBe('identical');
    expect(
      replayReport(head, recorded, {
        verifier_match: false,
        recorded_verifier: null,
        replayed_verifier: null,
      }).verdict,
    ).toBe('diverged');
  });

  it('names what differed in words, never a path into the result (it read `execute_shell.stdout`)', () => {
    const differs = { kind: 'tool_result_differs', call_id: 'c', recorded: 1, replayed: 2 } as const;
    expect(differenceLabel({ ...differs, name: 'execute_shell', field: 'stdout' })).toBe(
      "execute_shell's stdout",
    );
    expect(differenceLabel({ ...differs, name: 'execute_shell', field: 'exit_code' })).toBe(
      "execute_shell's exit code",
    );
    expect(differenceLabel({ ...differs, name: 'read_file', field: 'error.code' })).toBe("read_file's error");
    expect(differenceLabel({ kind: 'calls_differ', recorded: 1, replayed: 2 })).toBe('number of calls');
  });

  it('the CLI prints every kind one way: a line a step and a summary', () => {
    const steps = withReexecution(recorded, {
      drift: [
        { step: 1, calls: [{ call_id: 'c', name: 'shell', recorded: 'x', actual: 'y' }], workspace: null },
      ],
      divergence: { step: 3, field: 'messages[2].content', recorded: 'p', actual: 'q' },
    });
    expect(steps.map(verdictLine)).toEqual([
      `step 1  diverged  shell's output: "x" → "y"`,
      'step 2  match',
      'step 3  diverged  request messages[2].content: "p" → "q"',
    ]);
    expect(summaryLine(replayReport(head, steps, noVerifier))).toBe(
      "diverged; diverged_at: 1 (tool_result_differs: shell's output); workspace_diverged_at: none; verifier_match: not compared",
    );
  });

  it('a scripted episode replays its actions; --agent is refused for it (its actions are what is replayed)', async () => {
    env = tempHome();
    const c = await startScripted(env, { task: memoryTask() }, [
      call('write_file', { path: 'a.txt', content: 'A' }),
      call('execute_shell', { command: 'cat a.txt' }),
      final('done'),
    ]);
    await c.run();
    await c.dispose();
    const base = { id: c.episode, store: env.store, parts: env.parts, supply: memorySupply };
    const report = await replayVerify(base);
    expect(report).toMatchObject({ replayed: 'actions', verdict: 'identical', diverged_at: null });
    expect(report.steps.map((s) => s.verdict)).toEqual(['match', 'match', 'no_calls']);
    await expect(replayVerify({ ...base, agentSpec: 'exec:python3 agent.py' })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/drop --agent/),
    });
  });
});
