/**
 * ATIF, the Agent Trajectory Interchange Format of Harbor / Terminal-Bench (RFC 0001,
 * current version ATIF-v1.7), as zod schemas mirroring Harbor's pydantic models
 * (`harbor.models.trajectories`): every object forbids unknown keys (`extra="forbid"`)
 * except through its `extra` field, and the trajectory-level checks of the models hold
 * (step ids 1..n in order, agent-only fields only on agent steps, observation results
 * that answer a call name one of the step's calls). stepbox exports are validated with
 * it in tests, and imports are parsed with it.
 */
import { z } from 'zod';

/** The versions Harbor's models accept; exports write the current one. */
export const ATIF_VERSIONS = [
  'ATIF-v1.0',
  'ATIF-v1.1',
  'ATIF-v1.2',
  'ATIF-v1.3',
  'ATIF-v1.4',
  'ATIF-v1.5',
  'ATIF-v1.6',
  'ATIF-v1.7',
] as const;
/** The version stepbox writes. */
export const ATIF_VERSION = 'ATIF-v1.7';

const Extra = z.record(z.string(), z.unknown()).nullish();

/** A text or image part of a multimodal message (v1.6). */
export const AtifContentPart = z.strictObject({
  type: z.enum(['text', 'image']),
  text: z.string().nullish(),
  source: z.strictObject({ media_type: z.string(), path: z.string() }).nullish(),
});

/** LLM operational data of one step. */
export const AtifMetrics = z.strictObject({
  prompt_tokens: z.number().int().nullish(),
  completion_tokens: z.number().int().nullish(),
  cached_tokens: z.number().int().nullish(),
  cost_usd: z.number().nullish(),
  prompt_token_ids: z.array(z.number().int()).nullish(),
  completion_token_ids: z.array(z.number().int()).nullish(),
  logprobs: z.array(z.number()).nullish(),
  extra: Extra,
});

/** Totals of the whole trajectory. */
export const AtifFinalMetrics = z.strictObject({
  total_prompt_tokens: z.number().int().nullish(),
  total_completion_tokens: z.number().int().nullish(),
  total_cached_tokens: z.number().int().nullish(),
  total_cost_usd: z.number().nullish(),
  total_steps: z.number().int().nonnegative().nullish(),
  extra: Extra,
});

/** One tool call of an agent step. */
export const AtifToolCall = z.strictObject({
  tool_call_id: z.string(),
  function_name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  extra: Extra,
});

/** A reference to a delegated subagent's trajectory (v1.7: an id or a path resolves it). */
export const AtifSubagentTrajectoryRef = z.strictObject({
  trajectory_id: z.string().nullish(),
  session_id: z.string().nullish(),
  trajectory_path: z.string().nullish(),
  extra: Extra,
});

/** One result of an observation: a call's output, or environment feedback (no call id). */
export const AtifObservationResult = z.strictObject({
  source_call_id: z.string().nullish(),
  content: z.union([z.string(), z.array(AtifContentPart)]).nullish(),
  subagent_trajectory_ref: z.array(AtifSubagentTrajectoryRef).nullish(),
  extra: Extra,
});

/** What the environment returned after a step. */
export const AtifObservation = z.strictObject({ results: z.array(AtifObservationResult) });

/** Who produced a step. */
export const AtifSource = z.enum(['system', 'user', 'agent']);

/** One step: a system prompt, a user message, or an agent turn with its calls and their observation. */
export const AtifStep = z
  .strictObject({
    step_id: z.number().int().min(1),
    timestamp: z.iso.datetime({ offset: true }).nullish(),
    source: AtifSource,
    model_name: z.string().nullish(),
    reasoning_effort: z.union([z.string(), z.number()]).nullish(),
    message: z.union([z.string(), z.array(AtifContentPart)]),
    reasoning_content: z.string().nullish(),
    tool_calls: z.array(AtifToolCall).nullish(),
    observation: AtifObservation.nullish(),
    metrics: AtifMetrics.nullish(),
    is_copied_context: z.boolean().nullish(),
    llm_call_count: z.number().int().nonnegative().nullish(),
    extra: Extra,
  })
  .superRefine((step, ctx) => {
    if (step.source !== 'agent')
      for (const key of [
        'model_name',
        'reasoning_effort',
        'reasoning_content',
        'tool_calls',
        'metrics',
      ] as const)
        if (step[key] !== undefined && step[key] !== null)
          ctx.addIssue({ code: 'custom', path: [key], message: `only agent steps have ${key}` });
    const ids = new Set((step.tool_calls ?? []).map((c) => c.tool_call_id));
    (step.observation?.results ?? []).forEach((r, i) => {
      if (r.source_call_id && !ids.has(r.source_call_id))
        ctx.addIssue({
          code: 'custom',
          path: ['observation', 'results', i, 'source_call_id'],
          message: `answers "${r.source_call_id}", which is not a tool call of this step`,
        });
    });
    if (step.llm_call_count === 0 && (step.metrics || step.reasoning_content))
      ctx.addIssue({
        code: 'custom',
        path: ['llm_call_count'],
        message: 'a step of no LLM call has no metrics',
      });
  });

/** The agent that produced a trajectory. */
export const AtifAgent = z.strictObject({
  name: z.string(),
  version: z.string(),
  model_name: z.string().nullish(),
  tool_definitions: z.array(z.record(z.string(), z.unknown())).nullish(),
  extra: Extra,
});

/** An ATIF trajectory document. */
export interface AtifTrajectory {
  schema_version: (typeof ATIF_VERSIONS)[number];
  session_id?: string | null;
  trajectory_id?: string | null;
  agent: z.infer<typeof AtifAgent>;
  steps: z.infer<typeof AtifStep>[];
  notes?: string | null;
  final_metrics?: z.infer<typeof AtifFinalMetrics> | null;
  continued_trajectory_ref?: string | null;
  subagent_trajectories?: AtifTrajectory[] | null;
  extra?: Record<string, unknown> | null;
}

/** The ATIF trajectory schema (subagent trajectories embed the same schema). */
export const AtifTrajectory: z.ZodType<AtifTrajectory> = z.lazy(() =>
  z
    .strictObject({
      schema_version: z.enum(ATIF_VERSIONS),
      session_id: z.string().nullish(),
      trajectory_id: z.string().nullish(),
      agent: AtifAgent,
      steps: z.array(AtifStep).min(1),
      notes: z.string().nullish(),
      final_metrics: AtifFinalMetrics.nullish(),
      continued_trajectory_ref: z.string().nullish(),
      subagent_trajectories: z.array(AtifTrajectory).nullish(),
      extra: Extra,
    })
    .superRefine((t, ctx) => {
      t.steps.forEach((s, i) => {
        if (s.step_id !== i + 1)
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'step_id'],
            message: `step ${i + 1} has step_id ${s.step_id}; ids run 1..n in order`,
          });
      });
      const ids = (t.subagent_trajectories ?? []).map((s) => s.trajectory_id);
      if (ids.some((id) => !id) || new Set(ids).size !== ids.length)
        ctx.addIssue({
          code: 'custom',
          path: ['subagent_trajectories'],
          message: 'every embedded subagent needs a trajectory_id, unique in its parent',
        });
    }),
);
