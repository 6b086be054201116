import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeLongTrace } from '../../electron/bench/ui-trace.js';
import { runCli } from '../support/cli.js';
import { alignKeys } from '../../electron/engine/compare/align.js';
import { stepFactsOf } from '../../electron/engine/compare/step-facts.js';
import { alignSteps } from '../../electron/engine/compare/step-alignment.js';
import { isReadOnlyCommand } from '../../electron/engine/export/person-correction.js';
import { parseBreakFlags } from '../../electron/cli/breakpoint-flags.js';
import { UsageError } from '../../electron/cli/command.js';
import { liveFlagsAt } from '../../shared/qa/live.js';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import { Task } from '../../shared/task.js';
import { parseTyped } from '../../renderer/src/stores/candidates/candidates-store.js';
import { QaTrace } from '../support/qa-traces.js';
import { differingFields, resultDifference, toolFailure, type ToolResult } from '../../shared/tool-result.js';
import { answerAdmitsFailure, verdictText, workspaceText } from '../../renderer/src/model/compare-verdict.js';
import {
  compareVerdict,
  firstDifference,
  notReached,
  notReachedText,
} from '../../shared/first-difference.js';
import type { PairVerdict } from '../../shared/contract/models.js';

const sh = (command: string, stdout = '') => ({
  name: 'execute_shell',
  args: { command },
  result: { stdout },
});

describe('step alignment', () => {
  it('pairs an inserted or a dropped element as a gap, not a shift of the rest', () => {
    expect(alignKeys(['a', 'b', 'c', 'd'], ['a', 'x', 'b', 'c', 'd'])).toEqual([
      { a: 0, b: 0 },
      { a: null, b: 1 },
      { a: 1, b: 2 },
      { a: 2, b: 3 },
      { a: 3, b: 4 },
    ]);
    expect(alignKeys(['a', 'b', 'c', 'd'], ['a', 'c', 'd'])).toEqual([
      { a: 0, b: 0 },
      { a: 1, b: null },
      { a: 2, b: 1 },
      { a: 3, b: 2 },
    ]);
    // A substitution in the middle stays a pair.
    expect(alignKeys(['a', 'b', 'c'], ['a', 'y', 'c'])).toEqual([
      { a: 0, b: 0 },
      { a: 1, b: 1 },
      { a: 2, b: 2 },
    ]);
  });

  it('pairs the first steps after a fork with each other; the steps one branch has more of come last', () => {
    // The Compare of a fork that took write_file at step 3 (then two more steps) against the
    // branch it left, which took execute_shell at step 3 and was interrupted: 3 pairs with 3.
    // It paired this branch's final answer (5) with the other's step 3 and read "First
    // difference at step 3: the other has no step there", beside the other's step 3.
    expect(alignKeys(['ls', 'run', 'write', 'run2', 'final'], ['ls', 'run', 'run'])).toEqual([
      { a: 0, b: 0 },
      { a: 1, b: 1 },
      { a: 2, b: 2 },
      { a: 3, b: null },
      { a: 4, b: null },
    ]);
    expect(alignKeys(['ls', 'x'], ['ls', 'y', 'z', 'w'])).toEqual([
      { a: 0, b: 0 },
      { a: 1, b: 1 },
      { a: null, b: 2 },
      { a: null, b: 3 },
    ]);
  });

  it('marks verdicts and the first divergence in A’s numbering, counting what the agent saw', () => {
    const a = new QaTrace()
      .step({ calls: [sh('ls', 'x')] })
      .step({ calls: [sh('cat x', 'one')] })
      .step({ final: 'ok' });
    const same = new QaTrace()
      .step({ calls: [sh('ls', 'x')] })
      .step({ calls: [sh('cat x', 'one')] })
      .step({ final: 'ok' });
    const facts = (t: QaTrace) => stepFactsOf(t.events());
    expect(alignSteps(facts(a), facts(same))).toEqual({
      pairs: [1, 2, 3].map((s) => ({
        a_step: s,
        b_step: s,
        verdict: 'same',
        differs: [],
        workspace_verdict: 'same',
      })),
      diverged_at: null,
      diverged_pair: null,
    });
    const otherResult = new QaTrace()
      .step({ calls: [sh('ls', 'x')] })
      .step({ calls: [sh('cat x', 'two')] })
      .step({ final: 'ok' });
    expect(alignSteps(facts(a), facts(otherResult))).toMatchObject({
      pairs: [
        { verdict: 'same' },
        // The verdict names what differs: both sides ran `cat x`, only its output differs.
        { verdict: 'different_result', differs: ['stdout differs'] },
        { verdict: 'same' },
      ],
      diverged_at: 2,
    });
    const otherExit = new QaTrace()
      .step({ calls: [{ ...sh('ls', 'x'), result: { stdout: 'x', exit_code: 1 } }] })
      .step({ calls: [sh('cat x', 'one')] })
      .step({ final: 'ok' });
    expect(alignSteps(facts(a), facts(otherExit)).pairs[0].differs).toEqual([
      `exit ${String(facts(a)[0].seenResults[0][1].exit_code ?? 'none')} vs 1`,
    ]);
    // An injection at step 1 is seen by decision 2: step 1 differs in what the agent saw.
    const injected = new QaTrace().step({ calls: [sh('ls', 'x')] });
    injected.push({ type: 'injected', step: 1, source: 'injected', role: 'user', content: 'hurry' });
    injected.step({ calls: [sh('cat x', 'one')] }).step({ final: 'ok' });
    expect(alignSteps(facts(a), facts(injected)).diverged_at).toBe(1);
    expect(alignSteps(facts(a), facts(injected)).pairs[0].differs).toEqual([
      'what the agent was shown differs (an injection or a parse error)',
    ]);
  });
});

describe('a branch that ends before the other (rolled back to 1, stepped once, compared with a fork that went on)', () => {
  const facts = (t: QaTrace) => stepFactsOf(t.events());
  const shorter = new QaTrace().step({ calls: [sh('ls', 'x')] });
  const longer = new QaTrace()
    .step({ calls: [sh('ls', 'x')] })
    .step({ calls: [{ name: 'write_file', args: { path: 'greet.py', content: 'x' }, result: {} }] });
  const aligned = alignSteps(facts(shorter), facts(longer));
  const rows = aligned.pairs.map((p) => ({ ...p, differs: [...p.differs], workspace: [] }));

  it('marks the workspace of a step only one side has as that side\'s, never "same"', () => {
    expect(aligned.pairs.map((p) => p.workspace_verdict)).toEqual(['same', 'only_b']);
    expect(rows.map((r) => workspaceText(r))).toEqual(['same', '— only the other has this step']);
    const reversed = alignSteps(facts(longer), facts(shorter));
    expect(reversed.pairs[1].workspace_verdict).toBe('only_a');
    // The same decision with other files after it: differs.
    const otherFiles = facts(longer).map((f) => ({ ...f, treeHash: `${f.treeHash ?? ''}x` }));
    expect(alignSteps(facts(longer), otherFiles).pairs.map((p) => p.workspace_verdict)).toEqual([
      'differs',
      'differs',
    ]);
    // A step that never completed has no workspace to compare.
    const torn = facts(shorter).map((f) => ({ ...f, treeHash: null }));
    expect(workspaceText(alignSteps(torn, facts(shorter)).pairs[0])).toBe('— no snapshot to compare');
  });

  it('says the first difference truthfully and offers no step this branch does not have', () => {
    // diverged_at keeps A's numbering (step 2); the pair says A has no step 2.
    expect(aligned).toMatchObject({ diverged_at: 2, diverged_pair: 1 });
    expect(firstDifference({ rows, diverged_row: aligned.diverged_pair })).toEqual({
      text: 'This branch ends at step 1; the other goes on to step 2.',
      show: null,
    });
    // Live (paused there), a side has not ended: its last step is where it is so far.
    const live = { a: 'this branch', b: 'the other', live: { a: true, b: true } };
    expect(firstDifference({ rows, diverged_row: aligned.diverged_pair }, live)?.text).toBe(
      'This branch has taken 1 step so far; the other goes on to step 2.',
    );
    // Seen from the longer one: its step 2 is there to show.
    const back = alignSteps(facts(longer), facts(shorter));
    expect(firstDifference({ rows: back.pairs, diverged_row: back.diverged_pair })).toEqual({
      text: 'First difference at step 2 of this branch: the other ends at step 1.',
      show: 2,
    });
    // A step the other took in between: after A's step 1, and no button for A's next step.
    const between = new QaTrace()
      .step({ calls: [sh('ls', 'x')] })
      .step({ calls: [sh('pwd')] })
      .step({ calls: [sh('cat x', 'one')] });
    const withEnd = new QaTrace().step({ calls: [sh('ls', 'x')] }).step({ calls: [sh('cat x', 'one')] });
    const mid = alignSteps(facts(withEnd), facts(between));
    expect(
      firstDifference(
        { rows: mid.pairs, diverged_row: mid.diverged_pair },
        { a: 'broken run', b: 'fixed run' },
      ),
    ).toEqual({
      text: 'First difference after step 1 of broken run: fixed run took a step there (its step 2) that broken run has no match for.',
      show: null,
    });
    // Both have the step: shown, with the other's number where it differs.
    expect(
      firstDifference({
        rows: [
          { a_step: 1, b_step: 1 },
          { a_step: 2, b_step: 3 },
        ],
        diverged_row: 1,
      }),
    ).toEqual({
      text: 'First difference at step 2 of this branch, step 3 of the other (what the agent did or saw).',
      show: 2,
    });
    expect(firstDifference({ rows, diverged_row: null })).toBeNull();
  });

  it('a success whose final answer admits it did not finish is said on its card (compare-aligned showed none)', () => {
    const final = (step: number, summary: string) => ({ step, tools: [], summary, status: 'final' }) as never;
    const rows = [
      { a: final(5, "I could not start the app: it keeps failing with 'something went wrong'."), b: null },
    ];
    expect(answerAdmitsFailure('succeeded', rows, 'a')).toBe(
      'The verifier passed, but the final answer (step 5) says it did not finish.',
    );
    // Not a success, or an answer that claims completion: nothing to say.
    expect(answerAdmitsFailure('failed', rows, 'a')).toBeNull();
    expect(
      answerAdmitsFailure('succeeded', [{ a: final(3, 'Fixed add() in calc.py.'), b: null }], 'a'),
    ).toBeNull();
    expect(answerAdmitsFailure('succeeded', rows, 'b')).toBeNull();
  });

  it('a step one side has not reached is no difference: said "… did not reach this step", left out of the count of compared steps', () => {
    // This (shorter) side has no step 2 nor any after it: it has not reached that pair.
    expect(notReached(rows)).toEqual([null, 'a']);
    // A sentence with the side its subject (it read "not reached in broken run" beside the runs' column headers).
    expect(notReachedText('a')).toBe('This branch did not reach this step');
    expect(notReachedText('b', { a: 'broken run', b: 'fixed run' })).toBe(
      'Fixed run did not reach this step',
    );
    expect(notReachedText('b', { a: 'this branch', b: 'the other', live: { a: false, b: true } })).toBe(
      'The other has not reached this step yet',
    );
    const live = { a: 'this branch', b: 'the other', live: { a: true, b: true } };
    // A live fork one step behind its parent: nothing differs so far (it read "1 of 2 aligned steps differs").
    expect(compareVerdict({ rows, diverged_row: aligned.diverged_pair }, live)).toEqual({
      text: 'This branch has taken 1 step so far; the other goes on to step 2. The 1 compared step is the same.',
      show: null,
      diverged: false,
    });
    // Ended there, it stopped where the other went on: a divergence, still counted over step 1 only.
    expect(compareVerdict({ rows, diverged_row: aligned.diverged_pair })).toMatchObject({
      text: 'This branch ends at step 1; the other goes on to step 2. The 1 compared step is the same.',
      diverged: true,
    });
    // Seen from the longer side, the live other has not reached step 2 yet: said so, step 2 shown.
    const back = alignSteps(facts(longer), facts(shorter));
    expect(compareVerdict({ rows: back.pairs, diverged_row: back.diverged_pair }, live)).toEqual({
      text: 'The other has taken 1 step so far; this branch goes on to step 2. The 1 compared step is the same.',
      show: 2,
      diverged: false,
    });
    // A step the other took in between IS a difference (not a step past one side's end).
    const between = alignSteps(
      facts(new QaTrace().step({ calls: [sh('ls', 'x')] }).step({ calls: [sh('cat x', 'one')] })),
      facts(
        new QaTrace()
          .step({ calls: [sh('ls', 'x')] })
          .step({ calls: [sh('pwd')] })
          .step({ calls: [sh('cat x', 'one')] })
          .step({ calls: [sh('echo more')] }),
      ),
    );
    expect(notReached(between.pairs)).toEqual([null, null, null, 'a']);
    expect(compareVerdict({ rows: between.pairs, diverged_row: between.diverged_pair }).text).toMatch(
      / 2 of 3 compared steps differ\.$/,
    );
  });
});

describe('what differs between two different actions (tool vs arguments)', () => {
  const facts = (t: QaTrace) => stepFactsOf(t.events());
  it('names the tool when it differs, the arguments when only they do, and a final answer apart', () => {
    const a = new QaTrace().step({ calls: [sh('ls -la')] });
    const args = new QaTrace().step({ calls: [sh('ls')] });
    const tool = new QaTrace().step({
      calls: [{ name: 'read_file', args: { path: 'x' }, result: { stdout: '' } }],
    });
    const answer = new QaTrace().step({ final: 'done' });
    const verdict = (b: QaTrace) => alignSteps(facts(a), facts(b)).pairs[0];
    expect(verdict(args)).toMatchObject({
      verdict: 'different_action',
      differs: ['execute_shell arguments: command differs'],
    });
    expect(verdict(tool).differs).toEqual(['tool: execute_shell vs read_file']);
    expect(verdict(answer).differs).toEqual(['execute_shell vs final answer']);
    // The window's words come from the same list.
    expect(verdictText({ ...verdict(args), differs: [...verdict(args).differs], workspace: [] })).toBe(
      'different action: execute_shell arguments: command differs',
    );
  });
});

describe('what differs between two tool results (the one definition of the same result)', () => {
  const base: ToolResult = { ok: true, exit_code: 0, stdout: 'a', stderr: '', duration_ms: 5, bytes: 1 };
  it('names the compared fields that differ, and nothing for durations or byte counts', () => {
    expect(differingFields(base, { ...base, duration_ms: 99, bytes: 7 })).toEqual([]);
    expect(resultDifference(base, { ...base, duration_ms: 99 })).toEqual([]);
    expect(differingFields(base, { ...base, stdout: 'b', exit_code: 1 })).toEqual(['exit_code', 'stdout']);
    expect(resultDifference(base, { ...base, stdout: 'b', exit_code: 1 })).toEqual([
      'exit 0 vs 1',
      'stdout differs',
    ]);
    const failed = toolFailure('timeout', 't/o', 5);
    // `ok` false is said by the error code.
    expect(resultDifference(base, failed)).toEqual([
      'exit 0 vs none',
      'stdout differs',
      'stderr differs',
      'error none vs timeout',
    ]);
  });
  it('the compare row says it: verdict, then what differs (results or files)', () => {
    expect(verdictText({ verdict: 'different_result', differs: ['stdout differs'], workspace: [] })).toBe(
      'different result: stdout differs',
    );
    expect(
      verdictText({
        verdict: 'different_files',
        workspace: [{ path: 'a.txt', status: 'differ', a: null, b: null }],
      }),
    ).toBe('different files: a.txt');
    expect(verdictText({ verdict: 'same', workspace: [] })).toBe('same');
    // An older engine without `differs` still reads.
    expect(verdictText({ verdict: 'different_result', workspace: [] })).toBe('different result');
  });
});

describe('a person’s terminal command', () => {
  it('only looking is no correction; anything that may write is', () => {
    for (const c of [
      'ls -la',
      'cat a.txt | head -3',
      'git status && git diff',
      'grep -r x . > /dev/null',
      'find . -name "*.py"',
      'sed -n 1,3p x.py',
    ])
      expect(isReadOnlyCommand(c), c).toBe(true);
    for (const c of [
      'echo x > a.txt',
      'sed -i s/a/b/ x.py',
      'rm -rf data',
      'cat a | tee b',
      'find . -delete',
      'ls; touch y',
      'echo $(rm x)',
      'git checkout .',
      'python3 fix.py',
      'ls "unbalanced',
    ])
      expect(isReadOnlyCommand(c), c).toBe(false);
  });
});

describe('live QA rules', () => {
  it('flag a loop at the same step on the prefix as on the whole episode', () => {
    const t = new QaTrace()
      .step({ calls: [sh('python3 app.py')] })
      .repeat(3, { calls: [sh('python3 app.py')] })
      .step({ final: 'no' })
      .end();
    const events = t.events();
    const whole = checkEpisode({ events, torn: false }).flags.find((f) => f.rule === 'loop');
    expect(whole?.step).toBe(3);
    const task = Task.parse(t.task);
    const prefix = (k: number) => events.filter((e) => e.type !== 'end' && e.step <= k);
    expect(liveFlagsAt(task, prefix(2), 2)).toEqual([]);
    // Live, the flag counts the calls so far; the whole episode's counts the run's later calls too.
    expect(liveFlagsAt(task, prefix(3), 3, 'loop').map((f) => [f.rule, f.step, f.message])).toEqual([
      ['loop', 3, whole?.message.replace('4×', '3×').replace(', 4)', ')')],
    ]);
    expect(whole?.message).toMatch(/called 4× .* \(steps 1, 2, 3, 4\)$/);
    expect(liveFlagsAt(task, prefix(3), 3, 'memory_corruption')).toEqual([]);
  });

  it('--break qa and qa=RULE parse; a rule that cannot run live is a usage error naming the live ones', () => {
    expect(parseBreakFlags(['qa', 'qa=loop'])).toEqual([{ kind: 'qa' }, { kind: 'qa', rule: 'loop' }]);
    expect(() => parseBreakFlags(['qa=goal_drift'])).toThrow(UsageError);
    expect(() => parseBreakFlags(['qa=goal_drift'])).toThrow(/loop, reward_hacking, memory_corruption/);
  });
});

describe('typed candidates in the window', () => {
  it('accept a tool call as `name {json}` or a message as JSON, and name the bad line', () => {
    const ok = parseTyped('write_file {"path": "a", "content": "b"}\n\n{"content": "done"}');
    expect(ok).toEqual({
      ok: true,
      value: [
        {
          content: null,
          tool_calls: [
            { type: 'function', function: { name: 'write_file', arguments: '{"path":"a","content":"b"}' } },
          ],
        },
        { content: 'done' },
      ],
    });
    const bad = parseTyped('read_file {"path": "a"}\nread_file {path}');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/line 2/);
    expect(parseTyped('write_file ["x"]').ok).toBe(false);
  });
});

describe('stepbox diff in words', () => {
  it("says where two branches first differ in the window's Compare sentence (one source), not 'A's numbering'", async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-diff-words-'));
    try {
      // Two recorded episodes: A ends with its answer at step 3, B already at step 2.
      const a = await writeLongTrace(home, 3);
      const b = await writeLongTrace(home, 2);
      const env = { env: { STEPBOX_HOME: home } };
      const json = await runCli(['diff', a.branch, b.branch, '--json'], env);
      const c = JSON.parse(json.stdout) as {
        pairs: { a_step: number | null; b_step: number | null; verdict: PairVerdict }[];
        diverged_pair: number | null;
      };
      const words = compareVerdict({ rows: c.pairs, diverged_row: c.diverged_pair }, { a: 'A', b: 'B' });
      expect(words.text).toBe(
        'First difference at step 2 of A: B has no step there. 1 of 3 compared steps differs.',
      );
      const plain = await runCli(['diff', a.branch, b.branch], env);
      expect(plain.code).toBe(1);
      // After the lines naming A and B: the sentence the window's Compare heads its view with.
      expect(plain.stdout.split('\n')[2]).toBe(words.text);
      expect(plain.stdout).not.toMatch(/numbering/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
