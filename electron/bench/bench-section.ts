/**
 * A benchmark value: numbers are medians (never rounded to 0); strings/booleans describe;
 * null is a figure that could not be measured (its reason under `KEY_missing`).
 */
export type BenchValue = number | string | boolean | null;

/** One section of `stepbox bench` (e.g. `sandbox`, `harness`, `ui`, `batch`). */
export interface BenchSection {
  readonly name: string;
  /** Null when the section can run; otherwise why it is skipped (listed under `skipped`). */
  prerequisite(): Promise<string | null>;
  /** Runs the section; keys are unique across all sections. */
  run(log: (message: string) => void): Promise<Record<string, BenchValue>>;
}
