import type { Agent } from './agent.js';
import type { AgentAsCase, AgentDecides, AgentTraits } from '../../../shared/contract/models.js';

export type { AgentAsCase, AgentDecides };

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

// Where a kind's decisions come from (`decides`) and how `case new` saves it (`asCase`) are
// the contract's AgentDecides and AgentAsCase (shared/contract/models.ts): the window reads them
// from a branch summary's `agent_traits` (agentTraitsOf below).

/**
 * What one kind of agent needs from the harness, and how its recordings are read. The
 * engine asks this by a header's or an agent's kind (and a live agent its own `needs`: to
 * start inside the sandbox, to re-execute, its process, its position) instead of listing
 * kinds, so a new kind is one entry here and one class.
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
  readonly decides: AgentDecides;
  readonly asCase: AgentAsCase;
  /**
   * The OpenTelemetry `gen_ai.provider.name` of the model API it speaks, as the semantic
   * conventions name it (openai:, anthropic:, gemini: — the Gemini API is `gcp.gemini`),
   * else null; a program's (exec:, sandbox:) is its model source's (`via_source`).
   */
  readonly provider: 'openai' | 'anthropic' | 'gcp.gemini' | 'via_source' | null;
}

/** Kinds that decide inside the harness from the conversation alone. */
const CONVERSATIONAL = { rewind: 'continue', replay: 'actions', runsRecordedCommand: false } as const;
/** Kinds that hold a position the harness rebuilds them at. */
const POSITIONAL = { rewind: 'rebuild', replay: 'actions', runsRecordedCommand: false } as const;
/**
 * A hosted model's kind: each answer is recorded as a chat message (the Anthropic and Gemini
 * replies are mapped onto one), so `case new` saves its answers as a script.
 */
const HOSTED = { ...CONVERSATIONAL, decides: 'model', asCase: 'script' } as const;

/** Every agent kind and what it needs: the one table. */
export const AGENT_DRIVERS: { readonly [K in AgentKindName]: AgentDriver & { readonly kind: K } } = {
  openai: { kind: 'openai', ...HOSTED, provider: 'openai' },
  anthropic: { kind: 'anthropic', ...HOSTED, provider: 'anthropic' },
  gemini: { kind: 'gemini', ...HOSTED, provider: 'gcp.gemini' },
  manual: { kind: 'manual', ...CONVERSATIONAL, decides: 'person', asCase: 'script', provider: null },
  scripted: { kind: 'scripted', ...POSITIONAL, decides: 'script', asCase: 'script', provider: null },
  replay: { kind: 'replay', ...POSITIONAL, decides: 'script', asCase: 'script', provider: null },
  oracle: { kind: 'oracle', ...POSITIONAL, decides: 'solution', asCase: null, provider: null },
  exec: {
    kind: 'exec',
    rewind: 'rebuild',
    replay: 'actions_and_program',
    runsRecordedCommand: true,
    decides: 'program',
    asCase: 'program',
    provider: 'via_source',
  },
  sandbox: {
    kind: 'sandbox',
    rewind: 'rerun',
    replay: 'program',
    runsRecordedCommand: true,
    decides: 'program',
    asCase: null,
    provider: 'via_source',
  },
};

/** What a kind this build does not know is read as: one that decides from the conversation. */
const UNKNOWN = { ...CONVERSATIONAL, decides: 'unknown', asCase: null, provider: null } as const;

/**
 * The driver of an agent kind, as an agent or a trace header names it. A header is untrusted
 * input: a kind this build does not know is treated as one that decides from the
 * conversation (never rebuilt, never a recorded command run, its actions replayed).
 */
export function driverOf(kind: string): AgentDriver {
  return isAgentKind(kind) ? AGENT_DRIVERS[kind] : { kind, ...UNKNOWN };
}

/** The kinds `case new` saves (as the table says), for its refusal of another. */
export function savedKinds(): string {
  const kinds = Object.values(AGENT_DRIVERS)
    .filter((d) => d.asCase !== null)
    .map((d) => (d.asCase === 'program' ? `${d.kind}:` : d.kind));
  return `${kinds.slice(0, -1).join(', ')} and ${kinds[kinds.length - 1]}`;
}

/** What a branch's agent says of itself in the contract (`agent_traits`), by its recorded kind. */
export function agentTraitsOf(kind: string): AgentTraits {
  const d = driverOf(kind);
  return { decides: d.decides, as_case: d.asCase };
}

/** True for a kind this build knows. */
function isAgentKind(kind: string): kind is AgentKindName {
  return Object.hasOwn(AGENT_DRIVERS, kind);
}
