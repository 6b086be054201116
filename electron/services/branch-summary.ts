import type { BranchSummary, FlagSummary } from '../../shared/contract/index.js';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import type { HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import type { BranchInfo } from '../engine/trace/trace-store.js';

/** The QA flags of a branch's events (header first), as the contract carries them. */
export function flagsOf(header: HeaderEvent, events: readonly TraceEvent[], torn: boolean): FlagSummary[] {
  const { flags } = checkEpisode({ events: [header, ...events], torn });
  return flags.map((f) => ({ rule: f.rule, step: f.step, message: f.message, severity: f.severity }));
}

/** The number of completed steps: the highest snapshot k (or decided step) seen. */
export function stepsOf(events: readonly TraceEvent[]): number {
  let steps = 0;
  for (const e of events) {
    if (e.type === 'snapshot' || e.type === 'action' || e.type === 'parse_error')
      steps = Math.max(steps, e.step);
    if (e.type === 'rollback') steps = e.to_step;
  }
  return steps;
}

/** The episode's return: the end's, else the final reward's, else the sum of step rewards (null: none). */
export function rewardOf(events: readonly TraceEvent[]): number | null {
  let sum: number | null = null;
  let final: number | null = null;
  let end: number | null = null;
  for (const e of events) {
    if (e.type === 'reward') {
      if (e.final) final = e.total;
      else sum = (sum ?? 0) + e.total;
    }
    if (e.type === 'end' && e.return !== undefined) end = e.return;
  }
  return end ?? final ?? sum;
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
    status: end?.type === 'end' ? end.status : null,
    end_reason: end?.type === 'end' ? end.end_reason : null,
    steps: stepsOf(events),
    reward: rewardOf(events),
    flags,
    created: header.created,
    live,
  };
}
