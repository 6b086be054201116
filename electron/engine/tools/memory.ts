import type { Memory, MemoryWrite } from './tool-call.js';

/** The agent's memory: a key → JSON value map the harness owns, snapshots and restores. */
export class TaskMemory implements Memory {
  private values = new Map<string, unknown>();

  /** Starts from `initial` (the task's `memory.initial`), copied so the task is never mutated. */
  constructor(initial: Readonly<Record<string, unknown>> = {}) {
    this.restore(initial);
  }

  get(key: string): unknown {
    return structuredClone(this.values.get(key));
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  /** Writes a key; `before` is null when the key was unset, so the write serialises to JSON intact. */
  set(key: string, value: unknown, writer: string): MemoryWrite {
    const before = this.values.has(key) ? this.values.get(key) : null;
    const after = structuredClone(value === undefined ? null : value);
    this.values.set(key, after);
    return { key, before: structuredClone(before), after: structuredClone(after), writer };
  }

  /** The set keys, in insertion order. */
  keys(): string[] {
    return [...this.values.keys()];
  }

  snapshot(): Record<string, unknown> {
    return structuredClone(Object.fromEntries(this.values));
  }

  /** Replaces every value with `values` (rollback to a step's snapshot). */
  restore(values: Readonly<Record<string, unknown>>): void {
    this.values = new Map(Object.entries(structuredClone(values)));
  }
}

/** Creates the memory of an episode from the task's initial values. */
export function createMemory(initial: Readonly<Record<string, unknown>> = {}): TaskMemory {
  return new TaskMemory(initial);
}
