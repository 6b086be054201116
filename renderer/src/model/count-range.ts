/** A whole-number field's allowed range, with its name as the form shows it. */
export interface CountRange {
  /** The field's name on screen (“at once”, “ask the agent”), never a CLI flag. */
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

/**
 * Null when `value` is a whole number inside `range`; otherwise what is wrong, naming the
 * field and its range. Out-of-range numbers are refused, never clamped: a silent 16 for a
 * typed 100000 (or 1 for −1) runs something the person did not ask for.
 */
export function rangeProblem(value: number, range: CountRange): string | null {
  if (Number.isInteger(value) && value >= range.min && value <= range.max) return null;
  const allowed = `a whole number from ${range.min} to ${range.max}`;
  return Number.isFinite(value)
    ? `“${range.name}” takes ${allowed}, not ${value}.`
    : `“${range.name}” takes ${allowed}.`;
}

/** The first problem among `fields` (each a value and its range), or null when all are in range. */
export function firstRangeProblem(fields: readonly (readonly [number, CountRange])[]): string | null {
  for (const [value, range] of fields) {
    const problem = rangeProblem(value, range);
    if (problem) return problem;
  }
  return null;
}
