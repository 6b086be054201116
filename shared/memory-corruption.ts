/** The string values that mean "no value" when written over a real one. */
export const NULLISH_STRINGS: readonly string[] = ['None', 'null', 'undefined', ''];

/** True for null, undefined and the nullish strings. */
export function isNullish(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    (typeof value === 'string' && NULLISH_STRINGS.includes(value.trim()))
  );
}

/** What the detector needs to know about a write. */
export interface MemoryWriteCheck {
  readonly key: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly writer: string;
}

/** The task's memory policy. */
export interface MemoryPolicy {
  /** tool → keys it may write; `memory_write` (the agent's own tool) may write any key. */
  readonly writers: Readonly<Record<string, readonly string[]>>;
  readonly nullable: readonly string[];
}

/**
 * The one memory-corruption detector, shared by the breakpoint and the QA rule: a write
 * of null/"None"/"null"/"undefined"/"" over a non-null value (unless the key is nullable),
 * or any write by an undeclared writer. Returns why, or null when the write is fine.
 */
export function memoryCorruption(write: MemoryWriteCheck, policy: MemoryPolicy): string | null {
  const freeWriters = new Set(['memory_write', 'human', 'injected', 'initial']);
  if (!freeWriters.has(write.writer)) {
    const allowed = policy.writers[write.writer];
    if (!allowed || !allowed.includes(write.key)) {
      return `"${write.writer}" wrote memory key "${write.key}" but is not a declared writer of it (memory.writers)`;
    }
  }
  if (isNullish(write.after) && !isNullish(write.before) && !policy.nullable.includes(write.key)) {
    return `memory key "${write.key}" overwritten with ${JSON.stringify(write.after ?? null)} (was ${JSON.stringify(write.before)})`;
  }
  return null;
}
