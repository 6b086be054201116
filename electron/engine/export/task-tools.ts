import type { Task } from '../../../shared/task.js';
import { builtinToolDefinition, isBuiltinTool, type OpenAiTool } from '../../../shared/tool-schemas.js';

/** A task's tools in OpenAI tool format, in the task's order (what the agent was offered). */
export function taskTools(task: Task): OpenAiTool[] {
  return task.tools.flatMap((t): OpenAiTool[] => {
    if (typeof t === 'string') return isBuiltinTool(t) ? [builtinToolDefinition(t)] : [];
    return [
      { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } },
    ];
  });
}
