import { parseTask, Task } from '../task.js';
import type { TraceEvent } from '../trace-events.js';
import { checkEarlyTermination } from './early-termination.js';
import { checkEfficiency } from './efficiency.js';
import { checkFallbackAbuse } from './fallback-abuse.js';
import { flag, type Flag, type QaRuleId } from './flag.js';
import { checkGoalDrift } from './goal-drift.js';
import { checkLoop } from './loop.js';
import { checkMemoryCorruption } from './memory-corruption.js';
import { endOf, type QaInput, type QaReference } from './qa-input.js';
import { qualityScore } from './quality.js';
import { checkRewardHacking } from './reward-hacking.js';
import { checkStateLeak } from './state-leak.js';
import { checkStructure } from './structure.js';
import { checkUnverifiedSuccess } from './unverified-success.js';
import { checkUnknownTool } from './unknown-tool.js';
import { checkDestructiveAction } from './destructive-action.js';
import { checkNetworkAssumption } from './network-assumption.js';
import { checkContextOverflow } from './context-overflow.js';
import { checkGaveUp } from './gave-up.js';
import { checkOutputFlood } from './output-flood.js';

/** Every rule, by id, in report order. */
export const QA_RULES: Readonly<Record<QaRuleId, (input: QaInput) => Flag[]>> = {
  structure: checkStructure,
  loop: checkLoop,
  early_termination: checkEarlyTermination,
  unverified_success: checkUnverifiedSuccess,
  goal_drift: checkGoalDrift,
  reward_hacking: checkRewardHacking,
  memory_corruption: checkMemoryCorruption,
  fallback_abuse: checkFallbackAbuse,
  state_leak: checkStateLeak,
  efficiency: checkEfficiency,
  unknown_tool: checkUnknownTool,
  destructive_action: checkDestructiveAction,
  network_assumption: checkNetworkAssumption,
  context_overflow: checkContextOverflow,
  gave_up: checkGaveUp,
  output_flood: checkOutputFlood,
};

/** One episode's QA verdict. */
export interface EpisodeCheck {
  readonly quality: number;
  readonly flags: Flag[];
}

/** A trace to check: its events (header first), whether its tail was torn, and whether it is still being written. */
export interface CheckableTrace {
  readonly events: readonly TraceEvent[];
  readonly torn: boolean;
  readonly open?: boolean;
  /** A fork's inherited history (QaInput.inherited). */
  readonly inherited?: readonly TraceEvent[];
}

/**
 * Runs every QA rule over one branch with the task's `qa` thresholds (the task from the
 * header, defaults filled) and scores it. A header task that no longer parses is itself
 * a structure error, and the rules then run with default thresholds.
 */
export function checkEpisode(trace: CheckableTrace, reference?: QaReference): EpisodeCheck {
  const header = trace.events[0];
  const extra: Flag[] = [];
  let task: Task;
  const raw = header?.type === 'header' ? header.task : null;
  const parsed = raw ? parseTask(raw, 'the header task') : null;
  if (parsed?.ok) task = parsed.value;
  else {
    if (parsed && !parsed.ok) extra.push(flag('structure', 0, 'error', parsed.error.message, {}));
    task = Task.parse({ name: 'unknown', goal: 'unknown' });
  }
  const input: QaInput = {
    events: trace.events,
    torn: trace.torn,
    open: trace.open,
    task,
    reference,
    ...(trace.inherited ? { inherited: trace.inherited } : {}),
  };
  const flags = [...extra];
  for (const rule of Object.values(QA_RULES)) flags.push(...rule(input));
  flags.sort((a, b) => a.step - b.step);
  const end = endOf(trace.events);
  return { quality: qualityScore(end?.status ?? null, flags), flags };
}
