import type { Task } from '../../shared/task.js';
import type { Agent } from './agents/agent.js';
import type { AgentOptions } from './agents/agent-spec.js';
import type { TaskToolRegistry } from './tools/registry.js';

/**
 * What an episode is built from besides its store and its sandbox supply: the task's
 * tool registry and its agents. {@link openEngine} (open-engine.ts) composes it once; the
 * harness factories, what-if, `sandbox exec` and the bench build tools and agents
 * through it, never by themselves.
 */
export interface EpisodeParts {
  /** The one registry a task's tools are called through (definitions, timeouts, argument validator). */
  tools(task: Task): TaskToolRegistry;
  /** An agent from its spec (`scripted:`, `replay:`, `openai:`, `exec:`, `manual`). */
  agent(spec: string, options?: AgentOptions): Agent;
}
