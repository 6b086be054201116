import { Task, type TaskInput } from '../../shared/task.js';
import type {
  ChangedPath,
  EndEvent,
  EpisodeStatus,
  HeaderEvent,
  TraceEvent,
  VerifierResult,
} from '../../shared/trace-events.js';
import type { LoadedBranch } from '../../electron/engine/qa/episode-set.js';
import type { ParsedTrace } from '../../electron/engine/trace/trace-reader.js';
import type { ToolResult } from '../../shared/tool-result.js';
import { TRACE_SCHEMA } from '../../shared/constants.js';

/** A tool call in a hand-written step. */
export interface QaCall {
  readonly name: string;
  readonly args?: Record<string, unknown>;
  readonly result?: Partial<ToolResult>;
  readonly memory?: {
    key: string;
    before: unknown;
    after: unknown;
    writer?: string;
    corruption?: string | null;
  };
}

/** A hand-written step: calls or a final answer, and what the snapshot saw change. */
export interface QaStep {
  readonly calls?: readonly QaCall[];
  readonly final?: string;
  readonly changed?: readonly ChangedPath[];
  readonly reward?: number;
}

/**
 * Builds a well-formed trace (header, snapshot 0, steps, end) from a compact
 * description, for QA, report and export tests that need no Docker.
 */
export class QaTrace {
  private readonly out: TraceEvent[] = [];
  private seq = 0;
  private t: number;
  private stepNo: number;

  constructor(
    readonly task: TaskInput = { name: 't', goal: 'Make python3 test_x.py print ok' },
    options: {
      episode?: string;
      branch?: string;
      parent?: string;
      forkStep?: number | null;
      start?: number;
      treeHash?: string;
      agentKind?: string;
      /** What snapshot 0 lists as changed: the workspace's files after setup, all `added`. */
      initialChanged?: readonly ChangedPath[];
    } = {},
  ) {
    this.t = options.start ?? 1_700_000_000_000;
    this.stepNo = options.forkStep ?? 0;
    this.push({
      type: 'header',
      step: 0,
      source: 'harness',
      schema: TRACE_SCHEMA,
      episode: options.episode ?? 'ep1',
      branch: options.branch ?? options.episode ?? 'ep1',
      parent_branch: options.forkStep ? (options.parent ?? 'parent') : null,
      fork_step: options.forkStep ?? null,
      task: Task.parse(task),
      task_path: null,
      agent: {
        spec: `${options.agentKind ?? 'scripted'}:agent.jsonl`,
        kind: options.agentKind ?? 'scripted',
      },
      image: 'stepbox-sandbox:1',
      created: this.t,
    });
    if (!options.forkStep)
      this.push({
        type: 'snapshot',
        step: 0,
        source: 'harness',
        tree_hash: options.treeHash ?? 'h0',
        manifest: 'm0',
        changed: [...(options.initialChanged ?? [])],
        bytes: 0,
      });
  }

  /** Appends a raw event (seq and t filled in). */
  push(e: Record<string, unknown> & { type: string; step: number; source: string }): this {
    this.t += 100;
    this.out.push({ ...e, seq: this.seq++, t: this.t } as TraceEvent);
    return this;
  }

  /** Appends one agent step. */
  step(s: QaStep): this {
    const k = ++this.stepNo;
    const calls = (s.calls ?? []).map((c, i) => ({
      id: `c${k}_${i}`,
      name: c.name,
      arguments: c.args ?? {},
    }));
    this.push({
      type: 'model_output',
      step: k,
      source: 'agent',
      raw: s.final ?? JSON.stringify(calls),
      message: s.final
        ? { content: s.final }
        : {
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: JSON.stringify(c.arguments) },
            })),
          },
      usage: { prompt_tokens: 10 * k, completion_tokens: 5 },
    });
    this.push({ type: 'action', step: k, source: 'agent', calls, final: s.final ?? null });
    (s.calls ?? []).forEach((c, i) => {
      const id = calls[i].id;
      const callSeq = this.seq;
      this.push({
        type: 'tool_call',
        step: k,
        source: 'agent',
        call_id: id,
        name: c.name,
        arguments: c.args ?? {},
      });
      const result: ToolResult = {
        ok: true,
        exit_code: 0,
        stdout: '',
        stderr: '',
        duration_ms: 5,
        bytes: 0,
        ...c.result,
      };
      this.push({
        type: 'tool_result',
        step: k,
        source: 'environment',
        cause: callSeq,
        call_id: id,
        name: c.name,
        result,
      });
      if (c.memory)
        this.push({
          type: 'memory_write',
          step: k,
          source: 'environment',
          key: c.memory.key,
          before: c.memory.before,
          after: c.memory.after,
          writer: c.memory.writer ?? c.name,
          corruption: c.memory.corruption ?? null,
        });
    });
    if (s.reward !== undefined)
      this.push({
        type: 'reward',
        step: k,
        source: 'harness',
        components: { r: s.reward },
        total: s.reward,
        final: false,
      });
    this.push({
      type: 'snapshot',
      step: k,
      source: 'harness',
      tree_hash: `h${k}`,
      manifest: `m${k}`,
      changed: s.changed ?? [],
      bytes: 0,
    });
    return this;
  }

  /** Appends `n` copies of a step. */
  repeat(n: number, s: QaStep): this {
    for (let i = 0; i < n; i++) this.step(s);
    return this;
  }

  /** Closes the trace. */
  end(
    status: EpisodeStatus = 'succeeded',
    verifier: VerifierResult | null = { success: true, exit_code: 0 },
    extra: { end_reason?: string; reward?: number } = {},
  ): this {
    if (extra.reward !== undefined)
      this.push({
        type: 'reward',
        step: this.stepNo,
        source: 'harness',
        components: { verifier: extra.reward },
        total: extra.reward,
        final: true,
      });
    this.push({
      type: 'end',
      step: this.stepNo,
      source: 'harness',
      status,
      end_reason: extra.end_reason ?? (status === 'succeeded' ? 'final_answer' : status),
      verifier,
      steps: this.stepNo,
    });
    return this;
  }

  /** The events so far. */
  events(): TraceEvent[] {
    return [...this.out];
  }
}

/** The parsed task with defaults, as rules see it. */
export function qaTask(task: TaskInput = { name: 't', goal: 'Make python3 test_x.py print ok' }): Task {
  return Task.parse(task);
}

/** A shell call. */
export const sh = (command: string, result: Partial<ToolResult> = {}): QaCall => ({
  name: 'execute_shell',
  args: { command },
  result,
});

/** A hand-written trace as the QA/report/export loaders return it. */
export function loadedBranch(t: QaTrace): LoadedBranch {
  const events = t.events();
  const header = events[0] as HeaderEvent;
  const end = events[events.length - 1]?.type === 'end' ? (events[events.length - 1] as EndEvent) : null;
  const trace: ParsedTrace = {
    header,
    events,
    torn: false,
    warnings: [],
    end,
    path: `${header.branch}.jsonl`,
    writtenSchema: TRACE_SCHEMA,
    lastCompleteStep: Math.max(0, ...events.filter((e) => e.type === 'snapshot').map((e) => e.step)),
    partial: [],
  };
  return {
    episode: header.episode,
    branch: header.branch,
    parentBranch: header.parent_branch,
    forkStep: header.fork_step,
    tracePath: trace.path,
    trace,
    task: Task.parse(header.task),
  };
}
