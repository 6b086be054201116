import { parseTask, type Task, type TaskInput } from '../../shared/task.js';
import { createMemoryProvider, memorySandboxConfig } from './memory-sandbox/provider.js';
import type { Sandbox } from '../../electron/engine/sandbox/sandbox.js';
import { createMemory } from '../../electron/engine/tools/memory.js';
import type { ToolContext } from '../../electron/engine/tools/tool-call.js';

/** A parsed task from a partial one (name and goal filled in). */
export function testTask(input: Partial<TaskInput> = {}): Task {
  const r = parseTask({ name: 'tools-test', goal: 'test the tools', ...input });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

/** A tool context on a fresh memory sandbox, with the task's initial memory. */
export async function memoryContext(
  task: Task,
  overrides: Partial<Omit<ToolContext, 'task'>> = {},
): Promise<ToolContext & { sandbox: Sandbox }> {
  const sandbox = overrides.sandbox ?? (await createMemoryProvider().create(memorySandboxConfig()));
  return {
    sandbox,
    memory: overrides.memory ?? createMemory(task.memory.initial),
    task,
    hardTimeoutMs: overrides.hardTimeoutMs ?? 60_000,
    step: overrides.step ?? 1,
    callIndex: overrides.callIndex ?? 0,
  };
}
