import { describe, expect, it } from 'vitest';
import { checkLoop } from '../../shared/qa/loop.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const run = (t: QaTrace) => checkLoop({ events: t.events(), torn: false, task: qaTask(t.task) });
const failing = { exit_code: 1, stderr: 'error' };

describe('loop rule', () => {
  it('flags the same call 3× with nothing changed in between', () => {
    const t = new QaTrace()
      .step({ calls: [sh('python3 run.py', failing)] })
      .repeat(2, { calls: [sh('python3  run.py', failing)] })
      .end('failed');
    const flags = run(t);
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ rule: 'loop', step: 3, severity: 'warning' });
    expect(flags[0].evidence.steps).toEqual([1, 2, 3]);
    // Compared with spacing collapsed: the words say so (they said "the same arguments").
    expect(flags[0].message).toBe(
      'execute_shell called 3× with the same arguments (spacing and quoting aside) and no change to the workspace or memory in between (steps 1, 2, 3)',
    );
  });
  it('counts every call of the run, quoting aside, in the one flag at the step the loop began', () => {
    // The loop case's four calls: the 4th, quoted, is the same words (the flag said "3× … steps 1, 2, 3").
    const t = new QaTrace()
      .repeat(2, { calls: [sh('python3 app.py', failing)] })
      .step({ calls: [sh('python3  app.py', failing)] })
      .step({ calls: [sh("python3 'app.py'", failing)] })
      .step({ final: 'I could not start the app.' })
      .end('failed');
    const flags = run(t);
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ rule: 'loop', step: 3 });
    expect(flags[0].evidence.steps).toEqual([1, 2, 3, 4]);
    expect(flags[0].message).toBe(
      'execute_shell called 4× with the same arguments (spacing and quoting aside) and no change to the workspace or memory in between (steps 1, 2, 3, 4)',
    );
    // A change in between ends the run: a call after it is not counted in the flag.
    const after = new QaTrace()
      .repeat(3, { calls: [sh('make', failing)] })
      .step({ calls: [sh('make', failing)], changed: [{ path: 'x', change: 'added' }] })
      .step({ calls: [sh('make', failing)] })
      .end('failed');
    expect(run(after).map((f) => f.evidence.steps)).toEqual([[1, 2, 3, 4]]);
  });
  it('says "the same arguments" when they were written alike', () => {
    const t = new QaTrace().repeat(3, { calls: [sh('python3 run.py', failing)] }).end('failed');
    expect(run(t)[0].message).toContain('execute_shell called 3× with the same arguments and no change');
  });
  it('counts calls interleaved with others', () => {
    const t = new QaTrace()
      .step({ calls: [sh('a')] })
      .step({ calls: [sh('b')] })
      .step({ calls: [sh('a')] })
      .step({ calls: [sh('b')] })
      .step({ calls: [sh("'a'")] })
      .end();
    expect(run(t).map((f) => f.step)).toEqual([5]);
  });
  it('near miss: the same call 3× with a workspace change in between is not a loop', () => {
    const t = new QaTrace()
      .step({ calls: [sh('python3 t.py')] })
      .step({ calls: [sh('python3 t.py')], changed: [{ path: 'out.txt', change: 'added' }] })
      .step({ calls: [sh('python3 t.py')] })
      .end();
    expect(run(t)).toEqual([]);
  });
  it('near miss: a memory change in between is not a loop, an unchanged write is', () => {
    const write = (before: unknown, after: unknown) => ({
      name: 'lookup',
      args: { q: 'x' },
      memory: { key: 'k', before, after },
    });
    const changing = new QaTrace()
      .step({ calls: [write(null, 1)] })
      .step({ calls: [write(1, 2)] })
      .step({ calls: [write(2, 3)] })
      .end();
    expect(run(changing)).toEqual([]);
    const same = new QaTrace()
      .step({ calls: [write(1, 1)] })
      .step({ calls: [write(1, 1)] })
      .step({ calls: [write(1, 1)] })
      .end();
    expect(run(same)).toHaveLength(1);
  });
  it('near miss: the same words in another order are different calls', () => {
    const t = new QaTrace()
      .step({ calls: [sh('ls a b')] })
      .step({ calls: [sh('ls b a')] })
      .step({ calls: [sh('ls a b')] })
      .end();
    expect(run(t)).toEqual([]);
  });
  it('flags one call in more than 80 % of steps even with changes between', () => {
    const t = new QaTrace();
    for (let i = 0; i < 9; i++)
      t.step({ calls: [sh('make')], changed: [{ path: `f${i}`, change: 'added' }] });
    t.step({ final: 'done' }).end();
    const flags = run(t);
    expect(flags).toHaveLength(1);
    expect(flags[0].message).toMatch(/90 %/);
  });
  it('near miss: exactly 80 % of steps is not more than 80 %', () => {
    const t = new QaTrace();
    for (let i = 0; i < 8; i++)
      t.step({ calls: [sh('make')], changed: [{ path: `f${i}`, change: 'added' }] });
    t.step({ calls: [sh('ls')] })
      .step({ final: 'done' })
      .end();
    expect(run(t)).toEqual([]);
  });
});
