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
 * A branch's steps as every view counts them: the steps done, then those with a row and no
 * snapshot yet (`1 step, 1 waiting` while open; `2 steps, 1 unfinished` once ended). A step
 * held before it runs read as a step done: "2 steps" when one had finished.
 */
export function stepsText(steps: number, unfinished: number, open: boolean): string {
  // Beside row 0 (the setup, not a step) "0 steps" read as a contradiction of the row.
  if (steps === 0 && unfinished === 0) return open ? 'no step yet' : 'no step: only the setup';
  return `${countOf(steps, 'step')}${unfinished > 0 ? `, ${unfinished} ${open ? 'waiting' : 'unfinished'}` : ''}`;
}
