import { countOf } from './count-of.js';

/** Digits every view rounds a return or a final reward to, so one branch reads as one number. */
export const OUTCOME_DIGITS = 2;

/** A return or final reward as every view writes it: two decimals, `–` when none was recorded. */
export function formatOutcome(x: number | null): string {
  return x === null ? '–' : x.toFixed(OUTCOME_DIGITS);
}

/** A branch's discounted return, named: `return 0.30` (never a bare "R", which reads as the reward). */
export function returnText(x: number | null): string {
  return `return ${formatOutcome(x)}`;
}

/** The verifier's final reward, named apart from the return: `final reward 1.00`. */
export function finalRewardText(x: number | null): string {
  return `final reward ${formatOutcome(x)}`;
}

/**
 * A return named with its discount when it has one: `return 27.43 (γ=0.99)`. Without the γ a
 * person added up the step rewards beside it and got another number (−0.50 against −0.49).
 */
export function discountedReturnText(x: number | null, gamma: number | undefined): string {
  return `return ${returnValueText(x, gamma)}`;
}

/** The return's value with its discount, for a column already named RETURN: `27.43 (γ=0.99)`. */
export function returnValueText(x: number | null, gamma: number | undefined): string {
  return gamma === undefined || gamma === 1 || x === null
    ? formatOutcome(x)
    : `${formatOutcome(x)} (γ=${gamma})`;
}

/**
 * A branch's steps as every view counts them, by step number as the Replay scrubber and the
 * stepper bar say them: the steps done (`3 steps`), or, when the last has a row and no snapshot
 * yet, that one by its number, those before it done (`step 2 waiting` while open; `step 3
 * unfinished` once ended). "0 steps, 1 waiting" stood beside Replay's "step 1 / 1", and "no step yet" beside
 * "paused at step 0": the setup is step 0, so a branch with only it says so. `running`: the open
 * step is under way (the window's episode runs), said as its row and the stepper bar say it
 * (`step 1 running`; "waiting" stood beside the row's "running").
 */
export function stepsText(steps: number, unfinished: number, open: boolean, running = false): string {
  if (steps === 0 && unfinished === 0) return ONLY_SETUP;
  if (unfinished === 0) return countOf(steps, 'step');
  // The steps before it are done (a row is a step): said by its number alone, the header has no
  // room at 1024 wide for "1 step done, step 2 unfinished", which wrapped over its buttons.
  const which = unfinished === 1 ? `step ${steps + 1}` : `steps ${steps + 1}–${steps + unfinished}`;
  return `${which} ${open ? (running ? 'running' : 'waiting') : 'unfinished'}`;
}

/** A branch with no step but the setup (row 0), open or ended. */
export const ONLY_SETUP = 'only step 0, the setup';
