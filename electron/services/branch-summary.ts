import type { BranchSummary, FlagSummary } from '../../shared/contract/index.js';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import { candidateMarkOf } from '../../shared/candidate-mark.js';
import type { HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import type { Flag } from '../../shared/qa/flag.js';
import { branchOutcome } from '../engine/trace/branch-outcome.js';
import { agentTraitsOf } from '../engine/agents/agent-driver.js';
import { agentVersionOf } from '../../shared/agent-kind.js';
import type { BranchInfo } from '../engine/trace/trace-store.js';
import type { BranchTrace } from './branch-trace.js';
import type { TracePort } from './ports.js';

function summaries(flags: readonly Flag[]): FlagSummary[] {
  return flags.map((f) => ({ rule: f.rule, step: f.step, message: f.message, severity: f.severity }));
}

/** The QA flags of a branch's events (header first) from the trace alone: no references. */
export function flagsOf(header: HeaderEvent, events: readonly TraceEvent[], torn: boolean): FlagSummary[] {
  return summaries(checkEpisode({ events: [header, ...events], torn }).flags);
}

/** The events a branch's own trace recorded (a fork's inherited steps are its parent's to judge). */
function ownEvents(bt: BranchTrace): TraceEvent[] {
  return bt.trace.events.filter((e) => e.type !== 'header');
}

/** A branch's flags: with the engine's references when the port has them, else from the trace alone. */
export async function flagsOfBranch(traces: TracePort, bt: BranchTrace): Promise<FlagSummary[]> {
  return traces.check ? traces.check(bt) : flagsOf(bt.header, ownEvents(bt), bt.trace.torn);
}

/** Summarizes one branch from its trace. */
export function summarizeBranch(
  info: BranchInfo,
  header: HeaderEvent,
  events: readonly TraceEvent[],
  flags: number,
  live: boolean,
): BranchSummary {
  const end = [...events].reverse().find((e) => e.type === 'end');
  const task = typeof header.task.name === 'string' ? header.task.name : '(unnamed)';
  return {
    episode: info.episode,
    branch: info.branch,
    parent_branch: info.parentBranch,
    fork_step: info.forkStep,
    task,
    agent: header.agent.spec,
    agent_kind: header.agent.kind,
    agent_version: agentVersionOf(header.agent),
    agent_traits: agentTraitsOf(header.agent.kind),
    status: end?.type === 'end' ? end.status : null,
    end_reason: end?.type === 'end' ? end.end_reason : null,
    ...branchOutcome(header, events),
    flags,
    created: header.created,
    live,
    candidate: candidateMarkOf(header, events),
  };
}
