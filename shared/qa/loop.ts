import { canonicalJson } from '../jcs.js';
import { flag, type Flag } from './flag.js';
import { normalizeCall } from './normalize-call.js';
import { agentSteps, type QaInput } from './qa-input.js';

/** Fewest steps before the share test applies. */
export const MIN_SHARE_STEPS = 5;

/**
 * What the calls of a loop had in common, true of what was compared: the normalized arguments
 * (`python3 app.py` and `python3  app.py` are one call, but not "the same arguments" as written).
 */
function sameArguments(written: ReadonlySet<string>): string {
  return written.size === 1 ? 'the same arguments' : 'the same arguments (spacing and quoting aside)';
}

/**
 * `loop`: the same normalized call `qa.loop_repeats` (3) times with no change to the
 * workspace (a snapshot that changed files) or memory (a write that changed a value) in
 * between; or one normalized call in more than `qa.loop_share` (80 %) of the steps (5 or more).
 */
export function checkLoop(input: QaInput): Flag[] {
  const { loop_repeats: repeats, loop_share: share } = input.task.qa;
  const flags: Flag[] = [];
  // `texts`: the arguments as recorded (canonical JSON), to say whether they were written alike.
  const since = new Map<string, { count: number; steps: number[]; texts: Set<string> }>();
  const flagged = new Set<string>();
  const stepsPerCall = new Map<string, Set<number>>();
  for (const e of input.events) {
    if (e.type === 'snapshot' && e.step > 0 && e.changed.length > 0) since.clear();
    else if (e.type === 'memory_write' && canonicalJson(e.before ?? null) !== canonicalJson(e.after ?? null))
      since.clear();
    else if (e.type === 'rollback') since.clear();
    else if (e.type === 'tool_call') {
      const key = normalizeCall(e.name, e.arguments);
      const seen = stepsPerCall.get(key) ?? new Set<number>();
      seen.add(e.step);
      stepsPerCall.set(key, seen);
      const run = since.get(key) ?? { count: 0, steps: [], texts: new Set<string>() };
      run.count++;
      run.steps.push(e.step);
      run.texts.add(canonicalJson(e.arguments ?? {}));
      since.set(key, run);
      if (run.count >= repeats && !flagged.has(key)) {
        flagged.add(key);
        flags.push(
          flag(
            'loop',
            e.step,
            'warning',
            `${e.name} called ${run.count}× with ${sameArguments(run.texts)} and no change to the workspace or memory in between (steps ${run.steps.join(', ')})`,
            { call: e.name, arguments: e.arguments, steps: [...run.steps] },
          ),
        );
      }
    }
  }
  const total = agentSteps(input.events).length;
  // Short episodes say little about shares: three steps of one call with progress in between are fine.
  if (total >= Math.max(MIN_SHARE_STEPS, repeats)) {
    for (const [key, steps] of stepsPerCall) {
      if (steps.size / total > share && !flagged.has(key)) {
        const list = [...steps].sort((a, b) => a - b);
        flags.push(
          flag(
            'loop',
            list[0],
            'warning',
            `one call makes up ${Math.round((100 * steps.size) / total)} % of the episode's ${total} steps`,
            { call: key.slice(0, key.indexOf(':')), steps: list, share: steps.size / total },
          ),
        );
      }
    }
  }
  return flags;
}
