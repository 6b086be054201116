import { countOf } from './count-of.js';
import type { VerifierResult } from './trace-events.js';
import type { TaskCheck } from './task-check.js';
import { oneLine } from './one-line.js';

/**
 * Why an episode ended, in people's words: the one table the window, the shared HTML file and a
 * saved case's walkthrough read `end_reason` through (the shared file once printed
 * "failed (final_answer)").
 */
const END_REASONS: Record<string, string> = {
  final_answer: 'the agent gave its final answer',
  max_steps: 'it reached its step limit',
  script_exhausted: 'the agent script ran out',
  sandbox_lost: 'the sandbox died',
  stopped: 'a person stopped it',
  input_ended: 'its input ended, with no one left to answer',
  episode_timeout: 'the episode ran out of time',
  agent_exit: 'the agent program exited with an error',
  model_error: 'the model endpoint kept failing',
  // The episode went on elsewhere (the services' candidate pick and superseded fork).
  continued_in_candidate: 'a candidate picked at its paused step went on in a branch of its own',
  superseded_by_fork: 'a fork from it went on, so its sandbox was stopped',
  // Released by the services (issue 33.8): nothing ran past the step, the trace is whole.
  idle_released: 'it was left idle, so its sandbox was released (reopen it at its step to go on)',
  window_closed: 'the last window closed, so its sandbox was released (reopen it at its step to go on)',
};

/**
 * Why an episode ended, in words: `the agent gave its final answer; the verifier failed`.
 * `verifierPassed` undefined means not known here (a list's summary): nothing is said of it.
 */
export function endText(status: string, reason: string, verifierPassed?: boolean | null): string {
  const rolled = /^rolled_back_to_(\d+)$/.exec(reason);
  const why = rolled
    ? `rolled back to step ${rolled[1]}`
    : (END_REASONS[reason] ?? reason.replace(/_/g, ' '));
  const verifier =
    status === 'failed' && verifierPassed !== undefined && verifierPassed !== true
      ? verifierPassed === false
        ? '; the verifier failed'
        : '; no verifier passed it'
      : '';
  return `${why}${verifier}`;
}

/**
 * An error's code in a few words, for its mark in a timeline row (`model failed`): the code
 * itself ("model_er…", cut in a narrow row) was the machinery's word. The whole `code:
 * message` stays in the mark's tooltip and the sentence above the inspector.
 */
const ERROR_MARKS: Record<string, string> = {
  model_error: 'model failed',
  script_exhausted: 'script ran out',
  sandbox_lost: 'sandbox died',
  agent_exit: 'agent exited',
  agent_timeout: 'agent timed out',
  docker_unreachable: 'Docker unreachable',
};

/** An error code as its row's mark says it: a few words, never the code. */
export function errorMarkText(code: string): string {
  return ERROR_MARKS[code] ?? code.replace(/_/g, ' ');
}

/**
 * The verifier's outcome in words, as the CLI, the window and QA's flags say it: its exit code,
 * the reward it wrote (a Harbor task's reward decides, not the exit code), or why none was read.
 */
export function verifierWords(v: VerifierResult): string {
  if (v.error) return `verifier: ${v.error.message}`;
  if (v.reward !== undefined) return `verifier reward ${v.reward} (${v.reward_file ?? 'reward file'})`;
  return `verifier exit ${v.exit_code}`;
}

/** Why an episode's check did not run, by its status (a verifier runs only once the agent finished). */
const CHECK_NOT_RUN: Record<string, string> = {
  interrupted: 'the episode was interrupted',
  error: 'the episode ended in an error',
  timeout: 'the episode ran out of time',
  running: 'the episode has not ended',
};

/**
 * The verifier's verdict as every view says it (the window's end line, the shared file, `stepbox
 * show`): `verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt` when it wrote a
 * reward, `verifier failed (exit 1)` when its exit code decided, `verifier gave no verdict: WHY`
 * when it could not. When none ran, `ended` (the branch's status and its task's check, read by
 * shared/task-check.ts) says whether the task has one: `check \`CMD\` did not run: the episode was
 * interrupted`, else `no verifier` (show said "no verifier" of an interrupted task that had one).
 * `show` printed "verifier passed (exit 0)" where the window said the reward and its file.
 */
export function verdictWords(
  v: VerifierResult | null | undefined,
  ended?: { readonly status: string; readonly check: TaskCheck | null | undefined },
): string {
  if (!v && ended?.check)
    return `check \`${oneLine(ended.check.command, 120)}\` did not run: ${CHECK_NOT_RUN[ended.status] ?? 'it was not run'}`;
  if (!v) return 'no verifier';
  if (v.error) return `verifier gave no verdict: ${v.error.message}`;
  const exit = v.exit_code === null ? 'no exit code' : `exit ${v.exit_code}`;
  const said = `verifier ${v.success ? 'passed' : 'failed'} (${exit})`;
  return v.reward === undefined
    ? said
    : `${said}, reward ${v.reward.toFixed(2)} from ${v.reward_file ?? 'its reward file'}`;
}

/**
 * A verifier's verdict as the end of an episode tells it: {@link verdictWords}, whether its exit
 * code or a reward file decided; null when none ran or it gave none (the end says why). A bare
 * folder's Check passed read "succeeded: the agent gave its final answer", as if the agent's
 * word had decided, where a Harbor task's end named its verifier.
 */
export function verifierVerdict(v: VerifierResult | null | undefined): string | null {
  if (!v || v.error) return null;
  return verdictWords(v);
}

/** How many of the last lines of each of the verifier's streams the views show. */
export const VERIFIER_TAIL_LINES = 40;

/**
 * The end of what the verifier printed, for the Details under an end (the window's, the shared
 * file's, `stepbox show`'s): the last {@link VERIFIER_TAIL_LINES} lines of its stdout, then of its
 * stderr under a `stderr:` line; null when it printed nothing (or none ran). A test's
 * "AssertionError" is at the end of a long run's output, so the tail is what a person needs.
 */
export function verifierOutputTail(v: VerifierResult | null | undefined): string | null {
  if (!v) return null;
  const tail = (text: string | undefined): string | null => {
    const lines = (text ?? '').replace(/\s+$/, '').split('\n');
    if (lines.length === 1 && lines[0] === '') return null;
    const cut = lines.length - VERIFIER_TAIL_LINES;
    return cut > 0 ? [`… ${countOf(cut, 'earlier line')}`, ...lines.slice(cut)].join('\n') : lines.join('\n');
  };
  const out = tail(v.stdout);
  const err = tail(v.stderr);
  if (out === null && err === null) return null;
  return [out, err === null ? null : `stderr:\n${err}`].filter((x) => x !== null).join('\n');
}

/**
 * A success QA flagged at warning or worse (reward hacking): it reads `succeeded · ⚑ flagged`
 * in amber, never a plain green "succeeded". The header's rule, for every view that shows a
 * status beside flags (the library said a green "succeeded" beside "⚑1", the shared file
 * "succeeded — …" beside "1 QA flag"). `flags`: the flags, or a count of them (every rule flags
 * at warning or worse, shared/qa).
 */
export function flaggedSuccess(
  status: string | null | undefined,
  flags: number | readonly { readonly severity: string }[],
): boolean {
  if (status !== 'succeeded') return false;
  return typeof flags === 'number'
    ? flags > 0
    : flags.some((f) => f.severity === 'error' || f.severity === 'warning');
}

/** What a flagged success says after its word ({@link flaggedSuccess}). */
export const FLAGGED_MARK = ' · ⚑ flagged';

/** Why a flagged success is not green, on hover. */
export const FLAGGED_TITLE = 'the verifier passed, but QA flagged it: see its QA flags';
