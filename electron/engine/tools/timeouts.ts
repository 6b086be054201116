import type { Task } from '../../../shared/task.js';

/** The per-tool timeout when a task's `timeouts.tools` has neither the tool nor `default`. */
export const DEFAULT_TOOL_TIMEOUT_S = 30;

/**
 * The per-tool setting in seconds: `timeouts.tools[name]`, else the custom tool's own
 * `timeout`, else `timeouts.tools.default`.
 */
export function toolTimeoutSeconds(task: Task, name: string, ownTimeout?: number): number {
  const tools = task.timeouts.tools;
  return tools[name] ?? ownTimeout ?? tools.default ?? DEFAULT_TOOL_TIMEOUT_S;
}

/**
 * The effective timeout of a call in ms (Contracts: Tool results): the smallest of the
 * call's `timeout` argument (seconds), the per-tool setting (ms) and the hard step timeout (ms).
 */
export function effectiveTimeoutMs(toolMs: number, hardTimeoutMs: number, argSeconds?: number): number {
  const argMs = argSeconds === undefined ? Infinity : argSeconds * 1000;
  return Math.max(1, Math.round(Math.min(argMs, toolMs, hardTimeoutMs)));
}
