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
 * A loop flag at `step` (where the run became a loop) over the whole run so far: how many
 * calls, at which steps, and whether they were written alike.
 */
function loopFlag(
  step: number,
  name: string,
  args: unknown,
  run: { readonly count: number; readonly steps: readonly number[]; readonly texts: ReadonlySet<string> },
): Flag {
  return flag(
    'loop',
    step,
    'warning',
    `${name} called ${run.count}× with ${sameArguments(run.texts)} and no change to the workspace or memory in between (steps ${run.steps.join(', ')})`,
    { call: name, arguments: args, steps: [...run.steps] },
  );
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
  // The flag of each call's run so far, by its index in `flags`: a call again in the same run
  // (nothing changed in between) joins it, so the flag counts every repeat, not the first 3
  // ("called 3× (steps 1, 2, 3)" beside a 4th identical call at step 4).
  const open = new Map<string, number>();
  const stepsPerCall = new Map<string, Set<number>>();
  for (const e of input.events) {
    const change =
      (e.type === 'snapshot' && e.step > 0 && e.changed.length > 0) ||
      (e.type === 'memory_write' && canonicalJson(e.before ?? null) !== canonicalJson(e.after ?? null)) ||
      e.type === 'rollback';
    if (change) {
      since.clear();
      open.clear();
    } else if (e.type === 'tool_call') {
      const key = normalizeCall(e.name, e.arguments);
      const seen = stepsPerCall.get(key) ?? new Set<number>();
      seen.add(e.step);
      stepsPerCall.set(key, seen);
      const run = since.get(key) ?? { count: 0, steps: [], texts: new Set<string>() };
      run.count++;
      run.steps.push(e.step);
      run.texts.add(canonicalJson(e.arguments ?? {}));
      since.set(key, run);
      const at = open.get(key);
      if (at !== undefined) flags[at] = loopFlag(flags[at].step, e.name, flags[at].evidence.arguments, run);
      else if (run.count >= repeats && !flagged.has(key)) {
        flagged.add(key);
        open.set(key, flags.length);
        flags.push(loopFlag(e.step, e.name, e.arguments, run));
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
