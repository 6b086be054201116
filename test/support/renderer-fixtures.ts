import type { BranchSummary, EpisodeView, StepDetail, StepRow } from '../../shared/contract/models';
import type { TraceEvent } from '../../shared/trace-events';

/** A branch summary with overridable fields. */
export function branchSummary(over: Partial<BranchSummary> = {}): BranchSummary {
  return {
    episode: 'ep1',
    branch: 'b-main',
    parent_branch: null,
    fork_step: null,
    task: 'fix-tests',
    agent: 'scripted:agent.jsonl',
    agent_kind: 'scripted',
    status: null,
    end_reason: null,
    steps: 0,
    return: null,
    final_reward: null,
    flags: 0,
    created: 1,
    live: true,
    ...over,
  };
}

/** A timeline row for step k. */
export function stepRow(step: number, over: Partial<StepRow> = {}): StepRow {
  return {
    step,
    tools: ['execute_shell'],
    summary: `echo ${step}`,
    status: 'ok',
    duration_ms: 5,
    injected: false,
    human: false,
    overridden: false,
    reward: null,
    rewards: {},
    flags: [],
    snapshot: true,
    ...over,
  };
}

/** An opened live branch with `steps` completed rows, paused. */
export function episodeView(steps: number, over: Partial<EpisodeView> = {}): EpisodeView {
  const summary = branchSummary({ steps });
  return {
    summary,
    goal: 'make the tests pass',
    task_path: null,
    image: 'stepbox-sandbox:1',
    state: { episode: 'ep1', branch: 'b-main', state: 'paused', step: steps, reason: null },
    breakpoints: [],
    rows: Array.from({ length: steps }, (_, i) => stepRow(i + 1)),
    branches: [summary],
    flags: [],
    end: null,
    ...over,
  };
}

/** A step detail with one execute_shell call. */
export function stepDetail(step: number, stdout = `out ${step}\n`): StepDetail {
  return {
    step,
    calls: [
      {
        call: { id: `c${step}`, name: 'execute_shell', arguments: { command: `echo ${step}` } },
        result: { ok: true, exit_code: 0, stdout, stderr: '', duration_ms: 3, bytes: stdout.length },
        override: null,
      },
    ],
    final: null,
    parse_error: null,
    model_request: null,
    model_output: null,
    memory: [],
    files: [],
    injected: [],
    human: [],
    rewards: null,
    flags: [],
    tree_hash: 'abc',
    events: [],
  };
}

let seq = 100;
/** A live trace event (seq/t filled in). */
export function traceEvent(e: Record<string, unknown> & { type: string; step: number }): TraceEvent {
  return { seq: seq++, t: Date.now(), source: 'environment', ...e } as unknown as TraceEvent;
}
