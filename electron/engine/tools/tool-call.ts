/**
 * What a tool call uses and gives back: the context a tool runs in (sandbox, memory,
 * task, timeouts), its outcome, and the {@link ToolRegistry} interface the harness calls
 * tools through. The registry itself is built in `registry.ts`.
 */
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { Task } from '../../../shared/task.js';
import type { Sandbox } from '../sandbox/sandbox.js';

/** A memory write a tool made, reported back so the harness records it. */
export interface MemoryWrite {
  readonly key: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly writer: string;
}

/** The agent's memory as tools see it. The harness owns it and snapshots it per step. */
export interface Memory {
  get(key: string): unknown;
  has(key: string): boolean;
  /** Writes a key and records the write. */
  set(key: string, value: unknown, writer: string): MemoryWrite;
  snapshot(): Record<string, unknown>;
}

/** Everything a tool call may use. */
export interface ToolContext {
  readonly sandbox: Sandbox;
  readonly memory: Memory;
  readonly task: Task;
  /** The hard step timeout in ms; caps every call's effective timeout. */
  readonly hardTimeoutMs: number;
  /** Step number and index of the call in the step, for deterministic faults. */
  readonly step: number;
  readonly callIndex: number;
}

/** A tool call's full outcome: the result plus side effects the harness records. */
export interface ToolOutcome {
  readonly result: ToolResult;
  readonly memoryWrites: readonly MemoryWrite[];
  /** Faults injected into this call (recorded as `fault` events). */
  readonly faults: readonly { kind: string; detail?: unknown }[];
}

/**
 * The one registry through which the harness, the CLI and the bench call tools.
 * `call` never throws: bad input and failures come back as structured results.
 */
export interface ToolRegistry {
  /** The enabled tools in OpenAI tool format, in the task's order. */
  definitions(): OpenAiTool[];
  has(name: string): boolean;
  /** The observation a tool's `fallback` shows after a hard timeout (custom tools), else undefined. */
  fallbackFor(name: string): string | undefined;
  call(name: string, args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}
