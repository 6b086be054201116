import { describe, expect, it } from 'vitest';
import { checkGoalDrift } from '../../shared/qa/goal-drift.js';
import type { TaskInput } from '../../shared/task.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const task: TaskInput = {
  name: 'fix',
  goal: 'Make python3 test_x.py print ok by fixing calc.py; the lookup tool knows the formula',
  workspace: { files: { 'calc.py': 'x', 'test_x.py': 'y', 'src/util.py': 'z' } },
  tools: ['execute_shell', 'read_file', { name: 'lookup', command: 'echo {q}' }],
  verifier: { command: 'python3 test_x.py' },
};
const run = (t: QaTrace) => checkGoalDrift({ events: t.events(), torn: false, task: qaTask(t.task) });

describe('goal_drift rule', () => {
  it('flags 5 consecutive steps touching nothing the task names', () => {
    const t = new QaTrace(task)
      .step({ calls: [{ name: 'read_file', args: { path: 'calc.py' } }] })
      .step({ calls: [sh('uname -a')] })
      .step({ calls: [sh('cat /etc/os-release')] })
      .step({ calls: [sh('ps aux')] })
      .step({ calls: [sh('df -h')] })
      .step({ calls: [{ name: 'read_file', args: { path: '/etc/hosts' } }] })
      .step({ final: 'done' })
      .end();
    const flags = run(t);
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ rule: 'goal_drift', step: 2, severity: 'warning' });
    expect(flags[0].evidence.steps).toEqual([2, 3, 4, 5, 6]);
  });
  it('near miss: 4 off-goal steps, then the named file, then 4 more is not drift', () => {
    const t = new QaTrace(task)
      .repeat(4, { calls: [sh('uname -a')] })
      .step({ calls: [sh('cat /workspace/src/util.py')] })
      .repeat(4, { calls: [sh('date')] })
      .end();
    expect(run(t)).toEqual([]);
  });
  it('near miss: a tool or memory key the goal names, or a directory holding a named file, is on goal', () => {
    const t = new QaTrace(task)
      .step({ calls: [sh('whoami')] })
      .step({ calls: [sh('id')] })
      .step({ calls: [{ name: 'lookup', args: { q: 'formula' } }] })
      .step({ calls: [sh('hostname')] })
      .step({ calls: [{ name: 'list_dir', args: { path: 'src' } }] })
      .step({ calls: [sh('env')] })
      .end();
    expect(run(t)).toEqual([]);
  });
  it('the root `/` is not the workspace: `df -h /`, `ls /` and list_dir / are off the goal; `.` and /workspace are on it', () => {
    const t = new QaTrace(task)
      .step({ calls: [{ name: 'read_file', args: { path: 'calc.py' } }] })
      .step({ calls: [sh('df -h /')] })
      .step({ calls: [sh('ls -la /')] })
      .step({ calls: [{ name: 'list_dir', args: { path: '/' } }] })
      .step({ calls: [sh('du -sh //')] })
      .step({ calls: [sh('find / -maxdepth 1')] })
      .step({ calls: [sh('ls /workspace')] })
      .step({ calls: [sh('df -h /')] })
      .step({ calls: [sh('ls .')] })
      .end();
    const flags = run(t);
    expect(flags).toHaveLength(1);
    expect(flags[0].evidence.steps).toEqual([2, 3, 4, 5, 6]);
  });
});
