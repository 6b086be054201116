/** A benchmark value: numbers are medians (never rounded to 0); strings/booleans describe. */
export type BenchValue = number | string | boolean;

/** One section of `stepbox bench` (e.g. `sandbox`, `harness`, `ui`, `batch`). */
export interface BenchSection {
  readonly name: string;
  /** Null when the section can run; otherwise why it is skipped (listed under `skipped`). */
  prerequisite(): Promise<string | null>;
  /** Runs the section; keys are unique across all sections. */
  run(log: (message: string) => void): Promise<Record<string, BenchValue>>;
}
