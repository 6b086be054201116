import { z } from 'zod';
import { TRACE_SCHEMA } from './constants.js';
import { ToolResult } from './tool-result.js';
import { boundedNumber, RECORDED_REWARD_LIMIT, REWARD_LIMIT } from './rewards.js';

/** Who produced an event (OpenHands-style provenance). Kept by every view and export. */
export const EventSource = z.enum(['agent', 'environment', 'injected', 'human', 'harness']);
/** Who produced an event. */
export type EventSource = z.infer<typeof EventSource>;

/** Episode statuses (Contracts: Steps, snapshots, branches). */
export const EpisodeStatus = z.enum(['succeeded', 'failed', 'timeout', 'error', 'interrupted']);
/** An episode status. */
export type EpisodeStatus = z.infer<typeof EpisodeStatus>;

/** A parsed tool call: arguments as an object (the raw string stays in model_output). */
export const ToolCall = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
/** A parsed tool call. */
export type ToolCall = z.infer<typeof ToolCall>;

/** A file a step changed, from the snapshot diff. */
export const ChangedPath = z.object({
  path: z.string(),
  change: z.enum(['added', 'modified', 'deleted']),
  /** `false`: larger than the per-file snapshot cap, so its content is not in the snapshot. */
  captured: z.literal(false).optional(),
});
/** A file a step changed. */
export type ChangedPath = z.infer<typeof ChangedPath>;

/** A reward a verifier wrote, as recorded: a trace carrying 1e308 is refused as corrupt (shared/rewards.ts). */
const verifierReward = boundedNumber(REWARD_LIMIT, "a verifier's reward (such as 1 or 0)");
/** A weighted reward or a step's total, as recorded (shared/rewards.ts). */
const recordedReward = boundedNumber(RECORDED_REWARD_LIMIT, 'a recorded reward (a weight times a reward)');

/** The verifier's outcome; null in `end` when it could not run. */
export const VerifierResult = z.object({
  success: z.boolean(),
  exit_code: z.number().int().nullable(),
  stdout: z.string().optional(),
  stderr: z.string().optional(),
  duration_ms: z.number().optional(),
  /**
   * How it ran: `exec` — its own process after every process of the agent's uid was killed
   * (`killed` of them), out of the agent's reach; `helper` — the same, run by the sandbox's
   * isolated helper over its own channel; `session` — a fresh shell of the sandbox's.
   */
  ran: z
    .object({
      channel: z.enum(['exec', 'helper', 'session']),
      uid: z.number().int().optional(),
      killed: z.number().int().optional(),
    })
    .optional(),
  /**
   * The reward it wrote in its `reward_dir` (Harbor's reward.txt / reward.json), when the task
   * has one: it decides `success` (at least 1 passes) and is the `verifier` reward component.
   */
  reward: verifierReward.optional(),
  /** The file the reward came from, inside the sandbox. */
  reward_file: z.string().optional(),
  /** reward.json's numeric fields, when it wrote one. */
  rewards: z.record(z.string(), verifierReward).optional(),
  /** Why the outcome could not be read (a reward file that holds no number, none written). */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
/** The verifier's outcome. */
export type VerifierResult = z.infer<typeof VerifierResult>;

const base = {
  seq: z.number().int().nonnegative(),
  t: z.number(),
  step: z.number().int().nonnegative(),
  source: EventSource,
  cause: z.number().int().nonnegative().optional(),
};

const ev = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.looseObject({ ...base, type: z.literal(type), ...shape });

/** The first line of every trace file. */
export const HeaderEvent = ev('header', {
  schema: z.string(),
  episode: z.string(),
  branch: z.string(),
  parent_branch: z.string().nullable().default(null),
  fork_step: z.number().int().nonnegative().nullable().default(null),
  task: z.record(z.string(), z.unknown()),
  task_path: z.string().nullable().default(null),
  agent: z.object({ spec: z.string(), kind: z.string() }).passthrough(),
  image: z.string(),
  created: z.number(),
});

/** The exact request sent to a model for a step (never the API key). */
export const ModelRequestEvent = ev('model_request', { request: z.unknown() });
/** Raw model output, kept apart from the parsed action. */
export const ModelOutputEvent = ev('model_output', {
  raw: z.string(),
  message: z.unknown().optional(),
  usage: z.unknown().nullable().default(null),
  logprobs: z.unknown().optional(),
  latency_ms: z.number().optional(),
  /** What the endpoint said about its answer (OpenAI: the completion's id, model and finish reasons). */
  response: z
    .object({
      id: z.string().optional(),
      model: z.string().optional(),
      finish_reasons: z.array(z.string()).optional(),
    })
    .optional(),
});
/** The parsed action of a step: tool calls or a final answer. */
export const ActionEvent = ev('action', {
  calls: z.array(ToolCall).default([]),
  final: z.string().nullable().default(null),
  /** How the calls were made: structured `tool_calls`, or JSON written as text (answered with user messages). */
  via: z.enum(['tool_calls', 'text']).optional(),
});
/** Model output that could not be parsed into a valid action; becomes an observation. */
export const ParseErrorEvent = ev('parse_error', {
  message: z.string(),
  raw: z.string(),
  /** Ids of the structured tool calls of the bad output; each is answered with the error. */
  call_ids: z.array(z.string()).optional(),
});
/** A tool call about to run. */
export const ToolCallEvent = ev('tool_call', {
  call_id: z.string(),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
/** A tool's result. */
export const ToolResultEvent = ev('tool_result', {
  call_id: z.string(),
  name: z.string(),
  result: ToolResult,
  /** After a hard timeout `result` is the fallback the agent saw; `real` is what the tool returned. */
  real: ToolResult.optional(),
  /** True when a person gave this result instead of running the tool (source `human`): nothing ran. */
  replaced: z.boolean().optional(),
});
/** A message injected by a person, shown to the agent before its next decision. */
export const InjectedEvent = ev('injected', { role: z.enum(['system', 'user']), content: z.string() });
/** A tool result overridden by a person: the tool ran (`real`), the agent saw `shown`. */
export const OverrideEvent = ev('override', { call_id: z.string(), real: ToolResult, shown: ToolResult });
/**
 * A person's change to a decided action before it took effect (a stop inside a step):
 * the model's answer edited before the agent got it (`before_answer`), or a tool call's
 * arguments edited before it ran (`before_tool`, `call_id` the call). `original` and
 * `edited` are whole assistant messages; the `model_output` keeps what the model said,
 * the `action` what ran. Source `human`.
 */
export const EditEvent = ev('edit', {
  stage: z.enum(['before_answer', 'before_tool']),
  call_id: z.string().optional(),
  original: z.unknown(),
  edited: z.unknown(),
});
/**
 * What else could have written files while a person's terminal command ran, so the files it
 * found changed are not all credited to the person: processes of the agent's alive before the
 * line ran or when it was reported (their names are their own), whether the episode changed
 * files itself in between (a tool call, a restore), or why stepbox could not tell.
 */
export const OtherWriters = z.object({
  processes: z.array(z.object({ pid: z.number().int().nonnegative(), name: z.string().max(64) })).max(64),
  /** Processes alive beyond those named. */
  more: z.number().int().nonnegative(),
  /** A tool call or a restore of the episode's changed files while the command ran. */
  episode: z.boolean(),
  /** Why stepbox could not tell what else ran (the sandbox did not answer); absent when it could. */
  unknown: z.string().max(500).optional(),
});
export type OtherWriters = z.infer<typeof OtherWriters>;

/** A command a person typed into the sandbox terminal while the episode was open. */
export const HumanCommandEvent = ev('human_command', {
  command: z.string(),
  cwd: z.string().optional(),
  exit_code: z.number().int().optional(),
  /** Workspace files (relative to /workspace) the command created or changed, when the terminal could tell. */
  files: z.array(z.string()).optional(),
  /** Set when something else could have written `files` too (absent: only the command ran). */
  others: OtherWriters.optional(),
});
/** A write to the agent's memory; `corruption` names why it is one, or null. */
export const MemoryWriteEvent = ev('memory_write', {
  key: z.string(),
  before: z.unknown(),
  after: z.unknown(),
  writer: z.string(),
  corruption: z.string().nullable().default(null),
});
/** Reward components of a step (or the final reward when `final`). */
export const RewardEvent = ev('reward', {
  components: z.record(z.string(), recordedReward),
  total: recordedReward,
  final: z.boolean().default(false),
});
/** Snapshot k, taken after step k (0: after setup). Its presence marks step k complete. */
export const SnapshotEvent = ev('snapshot', {
  tree_hash: z.string(),
  manifest: z.string(),
  changed: z.array(ChangedPath),
  bytes: z.number().int().nonnegative(),
  session: z.object({ cwd: z.string(), env: z.record(z.string(), z.string()) }).optional(),
  duration_ms: z.number().optional(),
});
/** The live sandbox restored to an earlier snapshot. */
export const RollbackEvent = ev('rollback', {
  to_step: z.number().int().nonnegative(),
  reason: z.string(),
  tree_hash: z.string().optional(),
});
/** A fault injected by the task's `faults` (latency, permission error, tool failure). */
export const FaultEvent = ev('fault', {
  kind: z.string(),
  call_id: z.string().optional(),
  detail: z.unknown().optional(),
});
/** A non-fatal problem worth a look (soft timeout, torn tail, ...). */
export const WarningEvent = ev('warning', {
  code: z.string(),
  message: z.string(),
  /** True when the agent is shown the warning (a soft step timeout). */
  observation: z.boolean().optional(),
});
/** An error; fatal ones end the episode. */
export const ErrorEvent = ev('error', {
  code: z.string(),
  message: z.string(),
  fatal: z.boolean(),
  context: z.unknown().optional(),
});
/** Bytes per stream, counted whether kept or not. */
const StreamBytes = z.object({
  stdout: z.number().int().nonnegative(),
  stderr: z.number().int().nonnegative(),
});
/**
 * What an `exec:` agent's own process wrote to stdout and stderr while step k ran (from
 * the end of step k-1 to the end of step k; the last one up to the end). Each stream
 * keeps its first bytes up to a cap; `bytes` counts everything, `truncated` says a cap cut it.
 */
export const AgentOutputEvent = ev('agent_output', {
  stdout: z.string(),
  stderr: z.string(),
  bytes: StreamBytes,
  truncated: z.object({ stdout: z.boolean(), stderr: z.boolean() }),
});
/**
 * A model call of an agent inside the sandbox that is not its main loop (no tools offered,
 * or another model: titles, summaries): answered and recorded at the step it came in, not
 * a step of its own.
 */
export const AuxiliaryCallEvent = ev('auxiliary_call', {
  api: z.string(),
  model: z.string().nullable(),
  request: z.unknown(),
  answer: z.string(),
});
/** The last event of a closed branch. */
export const EndEvent = ev('end', {
  status: EpisodeStatus,
  end_reason: z.string(),
  verifier: VerifierResult.nullable(),
  steps: z.number().int().nonnegative().optional(),
  return: recordedReward.optional(),
});

/** Every trace event, discriminated by `type`. */
export const TraceEvent = z.discriminatedUnion('type', [
  HeaderEvent,
  ModelRequestEvent,
  ModelOutputEvent,
  ActionEvent,
  ParseErrorEvent,
  ToolCallEvent,
  ToolResultEvent,
  InjectedEvent,
  OverrideEvent,
  EditEvent,
  HumanCommandEvent,
  MemoryWriteEvent,
  RewardEvent,
  SnapshotEvent,
  RollbackEvent,
  FaultEvent,
  WarningEvent,
  ErrorEvent,
  AgentOutputEvent,
  AuxiliaryCallEvent,
  EndEvent,
]);
/** A trace event. */
export type TraceEvent = z.infer<typeof TraceEvent>;
/** A trace event of one type. */
export type TraceEventOf<T extends TraceEvent['type']> = Extract<TraceEvent, { type: T }>;
/** The header event. */
export type HeaderEvent = z.infer<typeof HeaderEvent>;
/** The end event. */
export type EndEvent = z.infer<typeof EndEvent>;

/**
 * True for a person's change to a decided action before it took effect: an `edit` of the
 * answer or arguments, or a result given instead of running the tool. Every reader that
 * asks "did a person touch this?" (exports, DPO corrected forks, compare) counts these
 * next to injections, overrides and terminal commands.
 */
export function isPersonEdit(e: TraceEvent): boolean {
  return e.type === 'edit' || (e.type === 'tool_result' && e.replaced === true);
}

/** The schema identifier this build writes. */
export const CURRENT_TRACE_SCHEMA = TRACE_SCHEMA;
