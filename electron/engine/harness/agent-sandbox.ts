import type { Task } from '../../../shared/task.js';
import type { Agent } from '../agents/agent.js';
import { sandboxConfig } from '../sandbox/limits.js';
import type { SandboxConfig } from '../sandbox/sandbox.js';

/**
 * The sandbox of a task for an agent: with the files it needs at /opt/agent when it starts
 * inside the sandbox (its `needs.inside`). A new episode and a branch at step K both ask this.
 */
export function agentSandboxConfig(task: Task, agent?: Agent): SandboxConfig {
  const files = agent?.needs.inside?.insideFiles() ?? null;
  return { ...sandboxConfig(task.sandbox, task.verifier), ...(files ? { agentFiles: files } : {}) };
}
