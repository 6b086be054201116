import type { Task } from '../../../shared/task.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { ToolCall } from '../../../shared/trace-events.js';
import { memoryValuesFrom } from '../tools/custom-tool.js';
import type { TaskMemory } from '../tools/memory.js';
import { toolTimeoutSeconds } from '../tools/timeouts.js';
import type { MemoryWrite } from '../tools/tool-call.js';

/**
 * True when a call timed out because the step's hard timeout was the binding limit
 * (not the tool's own, shorter, timeout: that is an ordinary `timeout` result).
 */
export function isHardTimeout(task: Task, call: ToolCall, result: ToolResult, hardLeftMs: number): boolean {
  if (result.error?.code !== 'timeout') return false;
  const custom = task.tools.find((t) => typeof t !== 'string' && t.name === call.name);
  const own = custom && typeof custom !== 'string' ? custom.timeout : undefined;
  const toolMs = toolTimeoutSeconds(task, call.name, own) * 1000;
  const arg = call.arguments.timeout;
  const argMs = typeof arg === 'number' ? arg * 1000 : Infinity;
  return hardLeftMs <= Math.min(toolMs, argMs);
}

/**
 * What the agent sees after a hard timeout: the tool's `fallback` text as a successful
 * result marked `fallback: true` (its `writes_memory` applied to that text, as the tool
 * would have), or the timeout itself, marked too, when the tool has no fallback.
 */
export function fallbackResult(
  task: Task,
  call: ToolCall,
  real: ToolResult,
  memory: TaskMemory,
): { result: ToolResult; memoryWrites: MemoryWrite[] } {
  const custom = task.tools.find((t) => typeof t !== 'string' && t.name === call.name);
  const spec = custom && typeof custom !== 'string' ? custom : undefined;
  if (spec?.fallback === undefined) return { result: { ...real, fallback: true }, memoryWrites: [] };
  const text = spec.fallback;
  const result: ToolResult = {
    ok: true,
    exit_code: 0,
    stdout: text,
    stderr: '',
    duration_ms: real.duration_ms,
    bytes: Buffer.byteLength(text),
    fallback: true,
  };
  if (!spec.writes_memory) return { result, memoryWrites: [] };
  const { values } = memoryValuesFrom(spec.writes_memory, text);
  return { result, memoryWrites: values.map(({ key, value }) => memory.set(key, value, spec.name)) };
}
