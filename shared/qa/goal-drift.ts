import { flag, type Flag } from './flag.js';
import { agentSteps, eventsOf, type QaInput } from './qa-input.js';
import { shellWords } from './shell-words.js';
import { taskNames, touchesNamedFile, type TaskNames } from './task-names.js';

function callTouches(name: string, args: Record<string, unknown>, names: TaskNames): boolean {
  if (names.tools.has(name)) return true;
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== 'string') continue;
    if (key === 'key' && names.memoryKeys.has(value)) return true;
    if (key === 'command') {
      const words = shellWords(value) ?? value.split(/\s+/);
      if (words.some((w) => w.length > 0 && touchesNamedFile(w, names))) return true;
    } else if (touchesNamedFile(value, names)) return true;
  }
  return false;
}

/**
 * `goal_drift`: `qa.drift_steps` (5) or more consecutive steps whose calls touch no file,
 * tool or memory key that the task's goal, workspace or verifier names. A final answer
 * ends a run; a task that names nothing cannot drift.
 */
export function checkGoalDrift(input: QaInput): Flag[] {
  const names = taskNames(input.task);
  if (names.files.size + names.tools.size + names.memoryKeys.size === 0) return [];
  const limit = input.task.qa.drift_steps;
  const calls = eventsOf(input.events, 'tool_call');
  const finals = new Set(
    eventsOf(input.events, 'action')
      .filter((a) => a.final !== null)
      .map((a) => a.step),
  );
  const flags: Flag[] = [];
  let run: number[] = [];
  const close = () => {
    if (run.length >= limit) {
      flags.push(
        flag(
          'goal_drift',
          run[0],
          'warning',
          `${run.length} consecutive steps (${run[0]}–${run[run.length - 1]}) touch nothing the task names`,
          {
            steps: [...run],
            named: { files: [...names.files], tools: [...names.tools], memory: [...names.memoryKeys] },
          },
        ),
      );
    }
    run = [];
  };
  for (const step of agentSteps(input.events)) {
    const stepCalls = calls.filter((c) => c.step === step);
    const onGoal = finals.has(step) || stepCalls.some((c) => callTouches(c.name, c.arguments, names));
    if (onGoal) close();
    else run.push(step);
  }
  close();
  return flags;
}
