import { ATIF_VERSION, type AtifTrajectory } from '../../../shared/atif.js';
import type { TraceEvent, TraceEventOf } from '../../../shared/trace-events.js';
import { driverOf } from '../agents/agent-driver.js';

type Step = AtifTrajectory['steps'][number];
type Result = NonNullable<NonNullable<Step['observation']>['results']>[number];

const iso = (t: number) => new Date(t).toISOString();

function tokens(usage: unknown): { prompt_tokens?: number; completion_tokens?: number } {
  const u = (usage ?? {}) as Record<string, unknown>;
  const n = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
  const prompt = n(u.prompt_tokens) ?? n(u.input_tokens);
  const completion = n(u.completion_tokens) ?? n(u.output_tokens);
  return {
    ...(prompt !== undefined ? { prompt_tokens: prompt } : {}),
    ...(completion !== undefined ? { completion_tokens: completion } : {}),
  };
}

/** The assistant text of a model output: its content, else its raw text when it made no calls. */
function messageOf(e: TraceEventOf<'model_output'>): string {
  const content = (e.message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return content;
  return (e.message as { tool_calls?: unknown } | undefined)?.tool_calls ? '' : e.raw;
}

/**
 * One branch (its events with its ancestry, header first) as an ATIF trajectory: the
 * goal as the first user step; each stepbox step an agent step with the model's message,
 * its tool calls, and as observation exactly what the agent was shown (a tool result as
 * the JSON the agent received, an override's `shown`, a parse error); injected messages
 * as user or system steps. stepbox's own facts (status, verifier, step numbers, real
 * results behind overrides) go in `extra`, as the format provides.
 */
export function atifTrajectory(events: readonly TraceEvent[]): AtifTrajectory {
  const header = events[0];
  if (!header || header.type !== 'header') throw new Error('a trace starts with its header');
  const end = events.find((e): e is TraceEventOf<'end'> => e.type === 'end') ?? null;
  const model = typeof header.agent.model === 'string' ? header.agent.model : undefined;
  const steps: Step[] = [
    { step_id: 1, timestamp: iso(header.t), source: 'user', message: String(header.task.goal ?? '') },
  ];
  let current: Step | null = null;
  const results = new Map<string, Result>();
  const add = (s: Omit<Step, 'step_id'>): Step => {
    const step = { step_id: steps.length + 1, ...s } as Step;
    steps.push(step);
    return step;
  };
  const observe = (r: Result) => {
    if (!current) return;
    current.observation ??= { results: [] };
    current.observation.results.push(r);
  };
  let promptTotal = 0;
  let completionTotal = 0;
  for (const e of events) {
    switch (e.type) {
      case 'injected':
        current = null;
        add({
          timestamp: iso(e.t),
          source: e.role === 'system' ? 'system' : 'user',
          message: e.content,
          extra: { stepbox: { step: e.step, source: e.source, injected: true } },
        });
        break;
      case 'model_output': {
        const t = tokens(e.usage);
        promptTotal += t.prompt_tokens ?? 0;
        completionTotal += t.completion_tokens ?? 0;
        current = add({
          timestamp: iso(e.t),
          source: 'agent',
          ...(model ? { model_name: e.response?.model ?? model } : {}),
          message: messageOf(e),
          ...(Object.keys(t).length ? { metrics: t } : {}),
          llm_call_count: driverOf(header.agent.kind).decides === 'model' ? 1 : null,
          extra: { stepbox: { step: e.step, source: e.source } },
        });
        break;
      }
      case 'action':
        if (!current) break;
        if (e.calls.length)
          current.tool_calls = e.calls.map((c) => ({
            tool_call_id: c.id,
            function_name: c.name,
            arguments: c.arguments,
          }));
        if (e.final !== null && current.message === '') current.message = e.final;
        break;
      case 'parse_error':
        observe({ source_call_id: null, content: e.message });
        break;
      case 'tool_result': {
        const r: Result = {
          source_call_id: e.call_id,
          content: JSON.stringify(e.result),
          ...(e.real ? { extra: { stepbox: { real: e.real } } } : {}),
          // A result a person gave instead of running the tool: it never ran.
          ...(e.replaced ? { extra: { stepbox: { replaced_by: e.source } } } : {}),
        };
        results.set(e.call_id, r);
        observe(r);
        break;
      }
      case 'edit':
        // The step's message is what the model said; what ran (the action) and the person's edit go with it.
        if (current)
          current.extra = {
            ...current.extra,
            stepbox: {
              ...((current.extra?.stepbox as Record<string, unknown> | undefined) ?? {}),
              edited_by: e.source,
              edit: { stage: e.stage, call_id: e.call_id ?? null, edited: e.edited },
            },
          };
        break;
      case 'override': {
        const r = results.get(e.call_id);
        if (r) {
          r.content = JSON.stringify(e.shown);
          r.extra = { stepbox: { real: e.real, overridden_by: e.source } };
        }
        break;
      }
      default:
        break;
    }
  }
  return {
    schema_version: ATIF_VERSION,
    session_id: header.episode,
    trajectory_id: header.branch,
    agent: {
      name: 'stepbox',
      version: '0.1.0',
      ...(model ? { model_name: model } : {}),
      extra: { stepbox: { agent: header.agent.spec, kind: header.agent.kind } },
    },
    steps,
    final_metrics: {
      ...(promptTotal ? { total_prompt_tokens: promptTotal } : {}),
      ...(completionTotal ? { total_completion_tokens: completionTotal } : {}),
      total_steps: steps.length,
    },
    extra: {
      stepbox: {
        episode: header.episode,
        branch: header.branch,
        parent_branch: header.parent_branch,
        fork_step: header.fork_step,
        task: header.task.name ?? null,
        status: end?.status ?? 'running',
        end_reason: end?.end_reason ?? null,
        verifier: end?.verifier ?? null,
      },
    },
  };
}
