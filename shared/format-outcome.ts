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
