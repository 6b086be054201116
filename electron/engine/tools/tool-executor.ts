import type { Result } from '../../../shared/result.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { MemoryWrite, ToolContext } from './tool-call.js';

/** What running a tool produced: its result and the memory writes it made. */
export interface ToolRun {
  readonly result: ToolResult;
  readonly memoryWrites: readonly MemoryWrite[];
}

/** One enabled tool as the registry drives it: validate once, then run. */
export interface ToolExecutor {
  readonly name: string;
  readonly definition: OpenAiTool;
  /** The per-tool timeout setting in ms (before the call's own and the hard step timeout). */
  readonly timeoutMs: number;
  /** The observation the harness shows instead of the result after a hard timeout. */
  readonly fallback?: string;
  /** Checks the parsed arguments; the error names the field and what was expected. */
  validate(args: Record<string, unknown>): Result<unknown, string>;
  /** Runs with the effective timeout; may reject only with a SandboxFailure or a bug. */
  run(args: unknown, ctx: ToolContext, timeoutMs: number): Promise<ToolRun>;
}

/** A run without memory writes. */
export function runOf(result: ToolResult): ToolRun {
  return { result, memoryWrites: [] };
}

/**
 * Settles with `work`, or with `onTimeout()` after `ms`: for sandbox operations that
 * take no timeout of their own (file reads and writes), so a stuck one still answers.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
