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

/** Every problem among `fields`, in order, as one text (null when all are in range). */
export function rangeProblems(fields: readonly (readonly [number, CountRange])[]): string | null {
  const problems = fields.map(([value, range]) => rangeProblem(value, range)).filter((p) => p !== null);
  return problems.length ? problems.join(' ') : null;
}

/**
 * The CSS width of a field for `range`: its max and one digit more (so a mistyped extra digit
 * shows whole, not cut to "10000(") plus room for the spinner and padding.
 */
export function countFieldWidth(range: CountRange): string {
  // Never under six digits: a typed 100000 in a 1–16 field shows whole beside its red range.
  const digits = Math.max(String(range.max).length + 1, String(range.min).length + 1, 6);
  return `calc(${digits}ch + 28px)`;
}
