import type { TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';

/** A tool call of a step with its result as the agent saw it (`overridden` when a person replaced it). */
export interface StepCall {
  readonly call_id: string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  readonly args_summary: string;
}

/** A tool result, reduced to what a timeline and the index show. */
export interface StepResult {
  readonly call_id: string;
  readonly name: string;
  readonly ok: boolean;
  readonly exit_code: number | null;
  readonly error_code: string | null;
  /**
   * The error code of what really happened, when the agent was shown something else (a
   * fallback after a hard timeout, an override): search finds the timeout it masked.
   */
  readonly real_error_code: string | null;
  readonly duration_ms: number;
  readonly fallback: boolean;
  /** True when an `override` event replaced what the agent saw. */
  readonly overridden: boolean;
}

/** Something that did not come from the agent or the tool: injection, override, human command. */
export interface StepIntervention {
  readonly type: 'injected' | 'override' | 'human_command';
  readonly source: string;
  readonly summary: string;
}

/** One step of a branch, as `show`, the index and the UI present it. */
export interface StepSummary {
  readonly step: number;
  /** What the agent did: tool calls, a final answer, a parse error, or nothing recorded (an incomplete step). */
  readonly kind: 'tool' | 'final' | 'parse_error' | 'none';
  /** One readable line: `execute_shell {command: "ls"}`, `final: "done"`, `parse error: …`. */
  readonly action: string;
  readonly calls: readonly StepCall[];
  readonly results: readonly StepResult[];
  readonly final: string | null;
  readonly parse_error: string | null;
  readonly injected: readonly StepIntervention[];
  readonly memory_writes: readonly {
    key: string;
    before: unknown;
    after: unknown;
    writer: string;
    corruption: string | null;
  }[];
  /** Sum of the step's (non-final) reward totals; null when none was recorded. */
  readonly reward: number | null;
  readonly reward_components: Readonly<Record<string, number>>;
  /** Changed-file count of snapshot k; null when the step has no snapshot (incomplete). */
  readonly changed: number | null;
  readonly tree_hash: string | null;
  readonly errors: readonly { code: string; message: string; fatal: boolean }[];
  readonly warnings: readonly { code: string; message: string }[];
  /** Rollbacks recorded at this step. */
  readonly rollbacks: readonly { to_step: number; reason: string }[];
}

const MAX_SUMMARY = 80;

/** Shortens text to one line of at most `max` characters. */
export function oneLine(text: string, max = MAX_SUMMARY): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A short readable summary of tool arguments: `{command: "ls -la"}`. */
export function argsSummary(args: Record<string, unknown>, max = MAX_SUMMARY): string {
  const parts = Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v) ?? 'undefined'}`);
  return oneLine(`{${parts.join(', ')}}`, max);
}

interface Acc {
  kind: StepSummary['kind'];
  calls: StepCall[];
  results: Map<string, StepResult>;
  final: string | null;
  parse_error: string | null;
  injected: StepIntervention[];
  memory_writes: StepSummary['memory_writes'][number][];
  reward: number | null;
  reward_components: Record<string, number>;
  changed: number | null;
  tree_hash: string | null;
  errors: { code: string; message: string; fatal: boolean }[];
  warnings: { code: string; message: string }[];
  rollbacks: { to_step: number; reason: string }[];
}

function reduceResult(
  e: TraceEventOf<'tool_result'> | TraceEventOf<'override'>,
  name: string,
  overridden: boolean,
): StepResult {
  const r = e.type === 'override' ? e.shown : e.result;
  const real = e.type === 'override' ? e.real : (e.real ?? e.result);
  return {
    call_id: e.call_id,
    name,
    ok: r.ok,
    exit_code: r.exit_code ?? null,
    error_code: r.error?.code ?? null,
    real_error_code: real.error?.code ?? null,
    duration_ms: (e.type === 'override' ? e.real : r).duration_ms,
    fallback: r.fallback === true,
    overridden,
  };
}

/**
 * Groups a branch's events (steps ≥ 1) into per-step summaries, in step order. Step 0
 * (setup) is not a step. A step recorded twice in one trace (re-run after a hard
 * timeout's rollback) lists the calls of both attempts.
 */
export function summarizeSteps(events: readonly TraceEvent[]): StepSummary[] {
  const steps = new Map<number, Acc>();
  const acc = (step: number): Acc => {
    let a = steps.get(step);
    if (!a) {
      a = {
        kind: 'none',
        calls: [],
        results: new Map(),
        final: null,
        parse_error: null,
        injected: [],
        memory_writes: [],
        reward: null,
        reward_components: {},
        changed: null,
        tree_hash: null,
        errors: [],
        warnings: [],
        rollbacks: [],
      };
      steps.set(step, a);
    }
    return a;
  };
  for (const e of events) {
    if (e.step < 1 || e.type === 'header' || e.type === 'end') continue;
    const a = acc(e.step);
    switch (e.type) {
      case 'action':
        a.kind = e.final !== null && e.calls.length === 0 ? 'final' : 'tool';
        a.final = e.final;
        break;
      case 'parse_error':
        a.kind = 'parse_error';
        a.parse_error = e.message;
        break;
      case 'tool_call':
        a.calls.push({
          call_id: e.call_id,
          name: e.name,
          arguments: e.arguments,
          args_summary: argsSummary(e.arguments),
        });
        if (a.kind === 'none') a.kind = 'tool';
        break;
      case 'tool_result':
        a.results.set(e.call_id, reduceResult(e, e.name, false));
        break;
      case 'override': {
        const name =
          a.results.get(e.call_id)?.name ?? a.calls.find((c) => c.call_id === e.call_id)?.name ?? '?';
        a.results.set(e.call_id, reduceResult(e, name, true));
        a.injected.push({
          type: 'override',
          source: e.source,
          summary: `override of ${name} result (${e.call_id})`,
        });
        break;
      }
      case 'injected':
        a.injected.push({ type: 'injected', source: e.source, summary: `${e.role}: ${oneLine(e.content)}` });
        break;
      case 'human_command':
        a.injected.push({ type: 'human_command', source: e.source, summary: `$ ${oneLine(e.command)}` });
        break;
      case 'memory_write':
        a.memory_writes.push({
          key: e.key,
          before: e.before,
          after: e.after,
          writer: e.writer,
          corruption: e.corruption,
        });
        break;
      case 'reward':
        if (!e.final) {
          a.reward = (a.reward ?? 0) + e.total;
          for (const [k, v] of Object.entries(e.components))
            a.reward_components[k] = (a.reward_components[k] ?? 0) + v;
        }
        break;
      case 'snapshot':
        a.changed = e.changed.length;
        a.tree_hash = e.tree_hash;
        break;
      case 'error':
        a.errors.push({ code: e.code, message: e.message, fatal: e.fatal });
        break;
      case 'warning':
        a.warnings.push({ code: e.code, message: e.message });
        break;
      case 'rollback':
        a.rollbacks.push({ to_step: e.to_step, reason: e.reason });
        break;
      case 'model_request':
      case 'model_output':
      case 'fault':
        break;
    }
  }
  return [...steps.entries()]
    .sort(([x], [y]) => x - y)
    .map(([step, a]) => ({
      step,
      kind: a.kind,
      action: describeAction(a),
      calls: a.calls,
      results: [...a.results.values()],
      final: a.final,
      parse_error: a.parse_error,
      injected: a.injected,
      memory_writes: a.memory_writes,
      reward: a.reward,
      reward_components: a.reward_components,
      changed: a.changed,
      tree_hash: a.tree_hash,
      errors: a.errors,
      warnings: a.warnings,
      rollbacks: a.rollbacks,
    }));
}

function describeAction(a: Acc): string {
  switch (a.kind) {
    case 'final':
      return `final: ${JSON.stringify(oneLine(a.final ?? ''))}`;
    case 'parse_error':
      return `parse error: ${oneLine(a.parse_error ?? '')}`;
    case 'tool':
      return a.calls.map((c) => `${c.name} ${c.args_summary}`).join('; ') || '(tool call)';
    case 'none':
      return '(no action recorded)';
  }
}
