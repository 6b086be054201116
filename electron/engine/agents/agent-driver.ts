import type { Agent } from './agent.js';

/** The agent kinds a trace header records (`agent.kind`). */
export type AgentKindName = Agent['kind'];

/**
 * How an agent is put back at an earlier step k (rollback, fork, resume):
 * - `continue`: it decides from the conversation alone, so the same agent goes on (openai:,
 *   anthropic:, gemini:, manual);
 * - `rebuild`: it holds a position (a script's next line, a process of its own), so it is
 *   built again past the decisions made by step k (scripted:, replay:, oracle; an exec:
 *   agent's new process is fast-forwarded from the recording);
 * - `rerun`: nothing of it can be put back: it starts again on snapshot 0 and re-runs steps
 *   1..k itself, answered from the recording (sandbox:, recipes).
 */
export type AgentRewind = 'continue' | 'rebuild' | 'rerun';

/**
 * How `replay --verify` re-executes a branch this kind of agent recorded:
 * - `actions`: the harness runs the recorded actions again in a fresh sandbox;
 * - `actions_and_program`: that, and the agent's program is run again against the
 *   recording (every call answered from it, nothing executed) and must ask the same (exec:);
 * - `program`: the agent starts again on snapshot 0 and re-runs its own tools, answered from
 *   the recording (sandbox:, recipes): the harness has no actions of its own to run.
 */
export type AgentReplay = 'actions' | 'actions_and_program' | 'program';

/**
 * What one kind of agent needs from the harness. The harness asks this (and the agent's own
 * hooks: `insideFiles` to start inside the sandbox, `reexecute` for a replay) instead of
 * listing kinds, so a new kind is one entry here and one class.
 */
export interface AgentDriver {
  /** The kind, as a trace header records it. */
  readonly kind: string;
  readonly rewind: AgentRewind;
  readonly replay: AgentReplay;
  /**
   * It runs a command the recording names (exec:, sandbox:, recipes): one from an imported
   * bundle never runs by itself, and a continuation keeps the recorded model source.
   */
  readonly runsRecordedCommand: boolean;
}

/** Kinds that decide inside the harness from the conversation alone. */
const CONVERSATIONAL = { rewind: 'continue', replay: 'actions', runsRecordedCommand: false } as const;
/** Kinds that hold a position the harness rebuilds them at. */
const POSITIONAL = { rewind: 'rebuild', replay: 'actions', runsRecordedCommand: false } as const;

/** Every agent kind and what it needs: the one table. */
export const AGENT_DRIVERS: { readonly [K in AgentKindName]: AgentDriver & { readonly kind: K } } = {
  openai: { kind: 'openai', ...CONVERSATIONAL },
  anthropic: { kind: 'anthropic', ...CONVERSATIONAL },
  gemini: { kind: 'gemini', ...CONVERSATIONAL },
  manual: { kind: 'manual', ...CONVERSATIONAL },
  scripted: { kind: 'scripted', ...POSITIONAL },
  replay: { kind: 'replay', ...POSITIONAL },
  oracle: { kind: 'oracle', ...POSITIONAL },
  exec: { kind: 'exec', rewind: 'rebuild', replay: 'actions_and_program', runsRecordedCommand: true },
  sandbox: { kind: 'sandbox', rewind: 'rerun', replay: 'program', runsRecordedCommand: true },
};

/**
 * The driver of an agent kind, as an agent or a trace header names it. A header is untrusted
 * input: a kind this build does not know is treated as one that decides from the
 * conversation (never rebuilt, never a recorded command run, its actions replayed).
 */
export function driverOf(kind: string): AgentDriver {
  return isAgentKind(kind) ? AGENT_DRIVERS[kind] : { kind, ...CONVERSATIONAL };
}

/** True for a kind this build knows. */
function isAgentKind(kind: string): kind is AgentKindName {
  return Object.hasOwn(AGENT_DRIVERS, kind);
}
