import { z } from 'zod';
import { caseNameProblem } from '../case-name.js';
import { ALL_WIDENINGS } from '../isolation-policy.js';
import { Breakpoint } from '../breakpoints.js';
import { HeldAction, StopPoints } from '../held-action.js';
import { ToolResult } from '../tool-result.js';
import {
  ChangedPath,
  EpisodeStatus,
  OtherWriters,
  ToolCall,
  TraceEvent,
  VerifierResult,
} from '../trace-events.js';

/**
 * A case name where one enters (the contract's `cases.save` name, `cases.open` and a start's
 * case id): the one rule, refused in caseNameProblem's words (shared/case-name.ts, zod-free: the window's first
 * render imports it). The engine checks it again
 * where a name becomes a folder (case-library.ts `caseDir`).
 */
export const CaseName = z.string().superRefine((name, ctx) => {
  const problem = caseNameProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** An episode or branch id (or a unique prefix): accepted wherever an episode is. */
export const EpisodeId = z.string().min(1, 'an episode or branch id is required');

/** The stepper's state, as a debugger's (mirrors the harness's `ControllerState`). */
export const ControllerState = z.enum(['idle', 'running', 'paused', 'ended']);
/** The stepper's state. */
export type ControllerState = z.infer<typeof ControllerState>;

/**
 * How an episode ended, as fields (a stop of kind `ended` carries it when the episode closed
 * with an end event): the window words it without parsing `message` back.
 */
export const StopEnd = z.object({
  status: EpisodeStatus,
  end_reason: z.string(),
  /** What a fatal error said (`end_reason` is its code). */
  detail: z.string().optional(),
});
/** How an episode ended. */
export type StopEnd = z.infer<typeof StopEnd>;

/** What stopped a run: a breakpoint hit (with why), a pause, one step done, or the end. */
/**
 * What a rollback to step K dropped of what a person put in: the messages injected, results
 * overridden (or given instead of running the tool) and terminal commands typed after snapshot K,
 * each by the step it was recorded at (one entry each). The branch that goes on starts without them.
 */
export const RollbackDropped = z.object({
  injected: z.array(z.number().int().nonnegative()),
  overridden: z.array(z.number().int().nonnegative()),
  typed: z.array(z.number().int().nonnegative()),
});
/** What a rollback dropped. */
export type RollbackDropped = z.infer<typeof RollbackDropped>;

/** A rollback just done: the branch it left, the step it went back to, and what it dropped. */
export const RolledBack = z.object({
  from: z.string(),
  to_step: z.number().int().nonnegative(),
  dropped: RollbackDropped,
});
/** A rollback just done. */
export type RolledBack = z.infer<typeof RolledBack>;

export const StopReason = z.object({
  kind: z.enum(['breakpoint', 'paused', 'step', 'ended', 'before_answer', 'before_tool']),
  breakpoint: Breakpoint.optional(),
  message: z.string().optional(),
  /** With kind `ended`, when the episode closed with an end event: its status and reason. */
  end: StopEnd.optional(),
  /** At a stop inside a step: the decided action waiting to be delivered or run. */
  held: HeldAction.optional(),
  /** Paused by a rollback: what it left and dropped (the window's notice says it). */
  rollback: RolledBack.optional(),
});
/** What stopped a run. */
export type StopReason = z.infer<typeof StopReason>;

/** A QA flag pointing at a step, with why (rules live in `shared/qa/`). */
export const FlagSummary = z.object({
  rule: z.string(),
  step: z.number().int().nonnegative(),
  message: z.string(),
  severity: z.enum(['info', 'warning', 'error']).default('warning'),
});
/** A QA flag pointing at a step. */
export type FlagSummary = z.infer<typeof FlagSummary>;

/** One branch of an episode as the library lists it. `status` is null while the branch is open. */
/**
 * Where an agent's decisions come from (the engine's agent table, agent-driver.ts): a hosted
 * `model`, a `person` (manual), a `script` or recording, the task's `solution`, a `program` of
 * its own, or `unknown` (a kind this build does not know, such as an imported trace's).
 */
export const AgentDecides = z.enum(['model', 'person', 'script', 'solution', 'program', 'unknown']);
/** Where an agent's decisions come from. */
export type AgentDecides = z.infer<typeof AgentDecides>;

/** How `case new` saves an episode of an agent: its answers as a script, that and its program, or not at all (null). */
export const AgentAsCase = z.enum(['script', 'program']).nullable();
/** How `case new` saves an episode of an agent. */
export type AgentAsCase = z.infer<typeof AgentAsCase>;

/**
 * What a branch's agent says of itself, from the engine's agent table: the window asks this
 * (a person decides, it can be a case), never a kind by its name (issue 34.4).
 */
export const AgentTraits = z.object({ decides: AgentDecides, as_case: AgentAsCase });
/** What a branch's agent says of itself. */
export type AgentTraits = z.infer<typeof AgentTraits>;

export const BranchSummary = z.object({
  episode: z.string(),
  branch: z.string(),
  parent_branch: z.string().nullable(),
  fork_step: z.number().int().nonnegative().nullable(),
  task: z.string(),
  agent: z.string(),
  /**
   * The agent's kind (`scripted`, `replay`, `openai`, `anthropic`, `manual`, `exec`,
   * `sandbox`; `atif` for an imported trace): what the window asks, never the spec's text.
   */
  agent_kind: z.string(),
  /** The version of the recipe that ran it (`0.171.0` for `codex`), or null (absent from an older server). */
  agent_version: z.string().nullable().optional(),
  /** What its agent says of itself (absent from an older server: then nothing is assumed). */
  agent_traits: AgentTraits.optional(),
  status: EpisodeStatus.nullable(),
  end_reason: z.string().nullable(),
  /** The steps done (snapshot taken); a step held, running or never finished is in `unfinished`. */
  steps: z.number().int().nonnegative(),
  /** Steps after `steps` with a row and no snapshot (absent from an older server: read as 0). */
  unfinished: z.number().int().nonnegative().optional(),
  /** The discounted return (the step rewards and the final reward; so far, while open), or null. */
  return: z.number().nullable(),
  /** The discount of that return, the task's γ (absent from an older server). */
  gamma: z.number().min(0).max(1).optional(),
  /** The verifier's final reward, or null before the end (or when none was recorded). */
  final_reward: z.number().nullable(),
  flags: z.number().int().nonnegative(),
  created: z.number(),
  /** True when this process holds a live controller (and sandbox) for the branch. */
  live: z.boolean(),
  /**
   * A live branch's last activity (its last step, tool call, terminal input or a person's action
   * on it; epoch ms): the Running list's idle time. Absent or null when not live.
   */
  last_active: z.number().nullable().optional(),
  /**
   * For a candidate branch, what tells it from its siblings: its number and the action it
   * tried (shared/candidate-mark.ts); null (or absent, from an older server) otherwise.
   */
  candidate: z.object({ number: z.number().int().positive(), action: z.string() }).nullable().optional(),
});
/** One branch of an episode. */
export type BranchSummary = z.infer<typeof BranchSummary>;

/** An episode with its branches (the main branch first; forks point at their parent). */
export const EpisodeEntry = z.object({
  episode: z.string(),
  task: z.string(),
  created: z.number(),
  branches: z.array(BranchSummary),
});
/** An episode with its branches. */
export type EpisodeEntry = z.infer<typeof EpisodeEntry>;

/**
 * An episode in the store whose trace cannot be read (a line that fails validation, another
 * version's format): listed as unreadable with what is wrong and what to do, not left out.
 */
export const UnreadableEpisode = z.object({
  episode: z.string(),
  /** The branch whose trace cannot be read (the episode's id for its main branch; a fork's own). */
  branch: z.string(),
  /** What is wrong, as `stepbox show` says it: the file, the line and why. */
  message: z.string(),
  /** The trace file. */
  file: z.string(),
  /** What to do about it, or null. */
  fix: z.string().nullable(),
});
/** An episode whose trace cannot be read. */
export type UnreadableEpisode = z.infer<typeof UnreadableEpisode>;

/** A search hit: an episode, optionally a step, and the text that matched. */
export const SearchHit = z.object({
  episode: z.string(),
  branch: z.string(),
  step: z.number().int().nonnegative().nullable(),
  snippet: z.string(),
});
/** A search hit. */
export type SearchHit = z.infer<typeof SearchHit>;

/** A bundled sample task. `agent` is its default agent spec, if it ships one. */
export const TaskSummary = z.object({
  id: z.string(),
  name: z.string(),
  goal: z.string(),
  path: z.string(),
  agent: z.string().nullable(),
});
/** A bundled sample task. */
export type TaskSummary = z.infer<typeof TaskSummary>;

/** A bundled failure case: a task, its scripted agent and a walkthrough. */
export const CaseSummary = z.object({
  id: z.string(),
  title: z.string(),
  summary: z.string(),
  task_path: z.string(),
  agent: z.string(),
  /**
   * Episodes the case runs (its expected.json). Opening a case whose task keeps its
   * sandbox between episodes runs the first ones to their end, then opens the last live.
   */
  episodes: z.number().int().positive().optional(),
  /** True when the case ships a fixed variant (its `fixed/` folder) the window can run. */
  has_fixed: z.boolean().optional(),
  /** `bundled` with stepbox, or `library`: the store's own cases (stepbox case new, Save as case). */
  origin: z.enum(['bundled', 'library']).optional(),
});
/** A bundled failure case. */
export type CaseSummary = z.infer<typeof CaseSummary>;

/** How a row of the timeline ended. */
export const StepStatus = z.enum([
  'ok',
  'nonzero_exit',
  'tool_error',
  'parse_error',
  'final',
  'pending',
  /** Step 0: the workspace after setup (and what a person did before the first decision). */
  'setup',
]);
/** How a step ended. */
export type StepStatus = z.infer<typeof StepStatus>;

/** One timeline row: a step's tools, argument summary, outcome and markers. */
export const StepRow = z.object({
  /** 0 is the setup row (snapshot 0); decisions are numbered from 1. */
  step: z.number().int().nonnegative(),
  tools: z.array(z.string()),
  /** Those of `tools` the task does not offer (the call was refused, or came back `unknown_tool`); absent when none. */
  not_offered: z.array(z.string()).optional(),
  /**
   * True when `tools` are the calls the agent decided and none was made: the step was held
   * before it ran (waiting, or never run once the episode ended); absent otherwise.
   */
  not_run: z.boolean().optional(),
  /** A one-line summary of the arguments (the command, the path, ...). */
  summary: z.string(),
  status: StepStatus,
  /** The exit code of a `nonzero_exit` row (its first call that exited non-zero); absent otherwise. */
  exit_code: z.number().int().optional(),
  duration_ms: z.number().nonnegative().nullable(),
  injected: z.boolean(),
  human: z.boolean(),
  /** True when a person overrode a result or gave one instead of running the tool. */
  overridden: z.boolean(),
  /** True when a person edited the decided answer or arguments before they took effect. */
  edited: z.boolean().optional(),
  reward: z.number().nullable(),
  /** Reward components of the step, for the per-step chart. */
  rewards: z.record(z.string(), z.number()),
  flags: z.array(FlagSummary),
  /** True once snapshot k exists (the step is complete and can be rolled back to). */
  snapshot: z.boolean(),
  /** The step's error (a fatal one first), `code: message`; absent or null when none. */
  error: z.string().nullable().optional(),
  /** What the tool really returned when the agent was shown something else (fallback, override). */
  real: z.string().nullable().optional(),
  /** Rollbacks recorded inside the step, before it finished (a hard timeout restores step k-1; the step goes on). */
  rollbacks: z.number().int().nonnegative().optional(),
  /**
   * After the step finished, the sandbox was rolled back to this earlier step (a person's
   * rollback: the branch ends here, a new one goes on from there); null or absent when not.
   */
  rolled_back_to: z.number().int().nonnegative().nullable().optional(),
  /** Why the step drifted when an agent inside the sandbox re-ran it (its tool output or workspace differed), or null. */
  drift: z.string().nullable().optional(),
});
/** One timeline row. */
export type StepRow = z.infer<typeof StepRow>;

/** A live (or recorded) branch's state: where it is and why it stopped. */
export const EpisodeStateInfo = z.object({
  episode: z.string(),
  branch: z.string(),
  state: ControllerState,
  /** The last completed step (0 after setup). */
  step: z.number().int().nonnegative(),
  reason: StopReason.nullable(),
  /** Where the stepper also stops inside a step (live branches). */
  stop_points: StopPoints.optional(),
  /** The step waiting at a stop inside it, or null. */
  held: HeldAction.nullable().optional(),
  /** The branch this controller was on before continuing after a rollback moved it here. */
  continued_from: z.string().optional(),
});
/** A branch's state. */
export type EpisodeStateInfo = z.infer<typeof EpisodeStateInfo>;

/**
 * What a task held its agent to, as its trace header recorded it (times in seconds): the
 * window shows it with the goal at step 0.
 */
export const TaskLimits = z.object({
  max_steps: z.number().int().positive(),
  episode_s: z.number().positive(),
  step_hard_s: z.number().positive(),
  /** Per tool name, `default` for the rest. */
  tools_s: z.record(z.string(), z.number().positive()),
  network: z.string(),
});
/** A task's limits. */
export type TaskLimits = z.infer<typeof TaskLimits>;

/** Everything the window needs to show an opened branch. */
export const EpisodeView = z.object({
  summary: BranchSummary,
  /** What the agent was told: the task's goal (a Harbor task's instruction.md), untrusted text. */
  goal: z.string(),
  /** Null when the header's task does not say them (a trace older than its fields). */
  limits: TaskLimits.nullable().optional(),
  task_path: z.string().nullable(),
  /**
   * What decides the outcome: the task's verifier command (a bare folder's Check, a Harbor
   * task's tests/test.sh) and the files only it sees, by name; null when the task has none;
   * absent in a trace older than its field. Untrusted text, from the trace's header.
   */
  check: z
    .object({ command: z.string(), files: z.array(z.string()), files_dir: z.string() })
    .nullable()
    .optional(),
  /**
   * What of its world stepbox left out or did otherwise when the episode started (a
   * devcontainer's `forwardPorts`, a bare folder's Dockerfile), from the trace header's
   * `world_warnings`: untrusted text, one line each. Absent from an older server.
   */
  world_warnings: z.array(z.string()).optional(),
  image: z.string(),
  /** Null when no live controller holds the branch (a recorded trace, view replay only). */
  state: EpisodeStateInfo.nullable(),
  breakpoints: z.array(Breakpoint),
  /** The rows (all, or the last `last_rows` of them when the open asked for a first screen). */
  rows: z.array(StepRow),
  /**
   * Where `rows` start among the branch's rows (0 when all are here): the rows before them come
   * from `episode.rows` pages. Absent in answers that carry every row.
   */
  rows_from: z.number().int().nonnegative().optional(),
  /** How many rows the branch has in all (`rows.length` when all are here). */
  rows_total: z.number().int().nonnegative().optional(),
  /** Every branch of the same episode, for the branch tree. */
  branches: z.array(BranchSummary),
  flags: z.array(FlagSummary),
  /** How it ended (its `detail`: what the fatal error that ended it said), or null while open. */
  end: StopEnd.extend({ verifier: VerifierResult.nullable() }).nullable(),
  /** The task's tool names (built-in and custom), so the window can check a name before using it. */
  tools: z.array(z.string()).optional(),
});
/** An opened branch. */
export type EpisodeView = z.infer<typeof EpisodeView>;

/** Where an episode's task comes from: a path, a bundled sample task, or a bundled case. */
export const TaskSource = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('path'), path: z.string().min(1) }),
  /** A project the person opened with Open… (projects.open): its folder or task.json, by path. */
  z.strictObject({ kind: z.literal('project'), path: z.string().min(1).max(4096) }),
  z.strictObject({ kind: z.literal('sample'), id: z.string().min(1) }),
  /** `fixed`: the case's fixed variant (its `fixed/` task and agent), which raises no flag. */
  z.strictObject({ kind: z.literal('case'), id: CaseName, fixed: z.boolean().optional() }),
]);
/** Where an episode's task comes from. */
export type TaskSource = z.infer<typeof TaskSource>;

/** A start-form field a file may be chosen for with Choose… → Your folders (`files.choose`). */
export const ChosenField = z.enum(['agent', 'model', 'agent_dir']);
export type ChosenField = z.infer<typeof ChosenField>;

/**
 * A grant: one file (for `agent_dir`, one folder) a person chose with Choose… in their own
 * folders, readable for one field of starts of one task (its folder). Kept in the store
 * (`chosen-files.json`) across restarts until the person clears the field or forgets it.
 */
export const ChosenFile = z.object({
  field: ChosenField,
  /** The folder of the task it was chosen for: starts (forks, reopens) of that task read it. */
  task: z.string(),
  /** That task's name as the library lists it (`hello-python`). */
  task_name: z.string(),
  /** The path as picked (absolute). */
  path: z.string(),
  kind: z.enum(['file', 'folder']),
  /** When it was chosen (epoch ms). */
  chosen_at: z.number(),
});
export type ChosenFile = z.infer<typeof ChosenFile>;

/**
 * A project opened with Open…: a task.json, a folder holding one, or a bare folder (the
 * project itself is the workspace; its goal is typed in the window).
 */
export const Project = z.object({
  /** The absolute path opened (a folder or a `.json` task file). */
  path: z.string(),
  /** Its name as the library lists it (the folder's or the task's). */
  name: z.string(),
  /** `task`: a task file (or a folder with task.json); `folder`: a bare folder, which needs a goal. */
  kind: z.enum(['task', 'folder']),
  /**
   * How it is written, read from disk as it is listed: a task file, a Harbor task (or a folder
   * of them), a devcontainer project or a bare folder. Absent from an older server.
   */
  world: z.enum(['task', 'folder', 'devcontainer', 'harbor']).optional(),
  /** Whether `--agent oracle` can run on it: solution/solve.sh is in its folder (absent from an older server). */
  oracle: z.boolean().optional(),
  /** When it was last opened (epoch ms). */
  opened_at: z.number(),
  /**
   * What of it stepbox leaves out or does otherwise (a devcontainer's `forwardPorts`, a bare
   * folder's Dockerfile), one short line each, read when it is listed: the warnings its start
   * gives. Absent when none (or from an older server).
   */
  warnings: z.array(z.string()).optional(),
  /**
   * Why its task cannot start as it is (a task.json that does not parse or validate), read
   * when it is listed; absent when it reads. The window shows it and keeps Start off.
   */
  problem: z.string().optional(),
  /**
   * What its task asks (a task.json's goal, a Harbor task's instruction.md), read when it is
   * listed: the card says it before a start. Absent for a bare folder (its goal is typed), a
   * task that does not read, or from an older server. Untrusted text, shown as text.
   */
  goal: z.string().optional(),
});
/** A project opened with Open…. */
export type Project = z.infer<typeof Project>;

/** A file a step changed, with its text before and after (null when absent or binary). */
export const FileChange = z.object({
  path: z.string(),
  change: ChangedPath.shape.change,
  before: z.string().nullable(),
  after: z.string().nullable(),
  binary: z.boolean(),
  /** True when the path is a folder (no text; its files are listed apart); absent from an older server. */
  folder: z.boolean().optional(),
  /**
   * Set when a person's terminal command (typed after step `after_step`) wrote the file, by
   * time; `others`: what else could have written it meanwhile (then it is not surely theirs).
   */
  by_person: z
    .object({
      after_step: z.number().int().nonnegative(),
      command: z.string(),
      others: OtherWriters.optional(),
    })
    .nullable()
    .optional(),
});
/** A file a step changed, with before/after text. */
export type FileChange = z.infer<typeof FileChange>;

/** A memory write of a step. */
export const MemoryDelta = z.object({
  key: z.string(),
  before: z.unknown(),
  after: z.unknown(),
  writer: z.string(),
  corruption: z.string().nullable(),
});
/** A memory write of a step. */
export type MemoryDelta = z.infer<typeof MemoryDelta>;

/** One tool call of a step with its result (and the override, when a person replaced it). */
export const CallDetail = z.object({
  call: ToolCall,
  result: ToolResult.nullable(),
  override: z.object({ real: ToolResult, shown: ToolResult }).nullable(),
  /** What the tool really returned when a hard timeout showed the agent a fallback (`result`). */
  real: ToolResult.nullable().optional(),
  /** True when a person gave `result` instead of running the tool (it did not run). */
  replaced: z.boolean().optional(),
});
/** One tool call of a step with its result. */
export type CallDetail = z.infer<typeof CallDetail>;

/** What the inspector shows for one step. */
export const StepDetail = z.object({
  /** 0 is the setup: the files it wrote, what a person did before the first decision, episode flags. */
  step: z.number().int().nonnegative(),
  calls: z.array(CallDetail),
  final: z.string().nullable(),
  parse_error: z.string().nullable(),
  /** The exact request sent to the model (messages, tools, parameters), or null for non-model agents. */
  model_request: z.unknown().nullable(),
  model_output: z.object({ raw: z.string(), usage: z.unknown().nullable() }).nullable(),
  memory: z.array(MemoryDelta),
  files: z.array(FileChange),
  injected: z.array(z.object({ role: z.enum(['system', 'user']), content: z.string() })),
  human: z.array(
    z.object({
      command: z.string(),
      exit_code: z.number().int().nullable(),
      /** The files it found changed (absent: not known), and what else could have written them. */
      files: z.array(z.string()).optional(),
      others: OtherWriters.optional(),
    }),
  ),
  /** A person's edits of the decided action before it took effect: the answer (before the agent got it) or a call's arguments. */
  edits: z
    .array(
      z.object({
        stage: z.enum(['before_answer', 'before_tool']),
        call_id: z.string().nullable(),
        original: z.unknown(),
        edited: z.unknown(),
      }),
    )
    .optional(),
  rewards: z.object({ components: z.record(z.string(), z.number()), total: z.number() }).nullable(),
  flags: z.array(FlagSummary),
  tree_hash: z.string().nullable(),
  /** Every trace event of the step, in order. */
  events: z.array(TraceEvent),
  /**
   * The texts too long to send whole (shared/long-text.ts): each is its head and tail with a
   * mark saying, in place, how much is left out; the trace keeps them whole. Absent: none cut.
   */
  cut: z
    .array(
      z.object({
        path: z.string(),
        length: z.number().int().nonnegative(),
        omitted: z.number().int().nonnegative(),
      }),
    )
    .optional(),
});
/** What the inspector shows for one step. */
export type StepDetail = z.infer<typeof StepDetail>;

/** The first step where a re-execution differed from the recording. */
export const Divergence = z.object({
  step: z.number().int().positive(),
  call_id: z.string().nullable(),
  field: z.string(),
  recorded: z.unknown(),
  actual: z.unknown(),
});
/** The first divergence of a replay. */
export type Divergence = z.infer<typeof Divergence>;

/** How one step re-executed: its results against the recording, and its workspace. */
export const ReplayStepVerdict = z.object({
  step: z.number().int().positive(),
  /** `match`: every tool result equal; `diverged`: see `fields`; `no_calls`: a final answer or parse error. */
  verdict: z.enum(['match', 'diverged', 'no_calls']),
  /** What differed, in words (replay-report.ts `differenceLabel`: `execute_shell's stdout`, `number of calls`). */
  fields: z.array(z.string()),
  workspace_match: z.boolean(),
  /** The files whose content differs from the recording's snapshot (first ones), when the workspace differs. */
  files: z.array(ChangedPath),
});
/** How one step re-executed. */
export type ReplayStepVerdict = z.infer<typeof ReplayStepVerdict>;

/** The outcome of a re-execution replay. */
export const ReplayReport = z.object({
  identical: z.boolean(),
  steps_replayed: z.number().int().nonnegative(),
  first_divergence: Divergence.nullable(),
  workspace_diverged_at: z.number().int().nonnegative().nullable(),
  /** Every re-executed step's verdict, in order. */
  steps: z.array(ReplayStepVerdict).optional(),
});
/** The outcome of a re-execution replay. */
export type ReplayReport = z.infer<typeof ReplayReport>;

/** One file that differs between two branches' snapshots at a step. */
export const WorkspaceFileDiff = z.object({
  path: z.string(),
  status: z.enum(['only_a', 'only_b', 'differ']),
  a: z.string().nullable(),
  b: z.string().nullable(),
});
/** A file that differs between two branches at a step. */
export type WorkspaceFileDiff = z.infer<typeof WorkspaceFileDiff>;

/** How two aligned steps differ: the decision, the result (what the agent saw or what really happened), the files after. */
export const PairVerdict = z.enum(['same', 'different_action', 'different_result', 'different_files']);
/** How two aligned steps differ. */
export type PairVerdict = z.infer<typeof PairVerdict>;

/**
 * The workspaces after two aligned steps: `same`, `differs`, `only_a` / `only_b` (the other
 * side has no step there, so nothing to be the same as), `unknown` (a step with no snapshot).
 */
export const WorkspaceVerdict = z.enum(['same', 'differs', 'only_a', 'only_b', 'unknown']);
/** The workspaces after two aligned steps. */
export type WorkspaceVerdict = z.infer<typeof WorkspaceVerdict>;

/** One pair of a step-aligned comparison (a null side: a step only the other branch took). */
export const CompareRow = z.object({
  /** A's step, or B's where A has none (kept for older windows). */
  step: z.number().int().positive(),
  a_step: z.number().int().positive().nullable(),
  b_step: z.number().int().positive().nullable(),
  verdict: PairVerdict,
  /**
   * What differs in words: for a different result `exit 0 vs 1`, `stdout differs`; for a
   * different action the tool or its arguments (`execute_shell arguments: command differs`).
   */
  differs: z.array(z.string()).optional(),
  a: StepRow.nullable(),
  b: StepRow.nullable(),
  same_action: z.boolean(),
  same_result: z.boolean(),
  /** Files whose content differs between A's snapshot a_step and B's snapshot b_step. */
  workspace: z.array(WorkspaceFileDiff),
  /** The workspaces after the two steps, as a whole (see {@link WorkspaceVerdict}). */
  workspace_verdict: WorkspaceVerdict,
});
/** One step of a two-branch comparison. */
export type CompareRow = z.infer<typeof CompareRow>;

/** Sandbox limits as the panel shows them. */
export const LimitsInfo = z.object({
  cpus: z.number(),
  memory_bytes: z.number(),
  pids: z.number(),
  disk_bytes: z.number(),
  output_bytes: z.number(),
});
/** Sandbox limits. */
export type LimitsInfo = z.infer<typeof LimitsInfo>;

/** A live sandbox as the panel shows it. */
export const SandboxDetails = z.object({
  id: z.string(),
  backend: z.string(),
  image: z.string(),
  network: z.string(),
  limits: LimitsInfo,
  state: z.enum(['running', 'gone']),
});
/** A live sandbox. */
export type SandboxDetails = z.infer<typeof SandboxDetails>;

/**
 * The sandboxes the warm pool holds for the next start: containers with no episode in them
 * (a start is a hand-over), stopped when the app closes.
 */
export const WarmSandboxes = z.object({
  ready: z.number().int().nonnegative(),
  starting: z.number().int().nonnegative(),
});
/** The warm pool's idle sandboxes. */
export type WarmSandboxes = z.infer<typeof WarmSandboxes>;

/** One doctor check: what was checked, whether it passed, and the command that fixes it. */
export const DoctorCheck = z.object({
  name: z.string(),
  ok: z.boolean(),
  message: z.string(),
  fix: z.string().nullable(),
});
/** One doctor check. */
export type DoctorCheck = z.infer<typeof DoctorCheck>;

/** Whether Docker is usable; when not, what is wrong and how to fix it. */
export const DockerStatus = z.object({
  ok: z.boolean(),
  /** What is wrong in words (`Docker is not running`); the errno is in `message`. */
  headline: z.string().optional(),
  message: z.string(),
  fix: z.string().nullable(),
});
/** Whether Docker is usable. */
export type DockerStatus = z.infer<typeof DockerStatus>;

/** One sample of a sandbox's resource use (one long-lived stream per subscription). */
export const StatsSample = z.object({
  subscription: z.string(),
  branch: z.string(),
  container: z.string(),
  t: z.number(),
  cpu_percent: z.number(),
  /** Memory the sandbox's processes use: page cache and files in its tmpfs mounts left out (those are disk). */
  memory_bytes: z.number(),
  /** The task's memory limit (`limits.memory_bytes` of `sandbox.info`), not the container cgroup's larger one. */
  memory_limit_bytes: z.number(),
  pids: z.number().nullable(),
});
/** One sample of a sandbox's resource use. */
export type StatsSample = z.infer<typeof StatsSample>;

/**
 * Settings of an `openai:MODEL` agent. The API key never crosses the contract: the main
 * process reads OPENAI_API_KEY from its environment.
 */
export const AgentOptions = z.strictObject({
  /** An OpenAI-compatible endpoint, e.g. `http://127.0.0.1:11434/v1` (Ollama). */
  base_url: z
    .string()
    .regex(/^https?:\/\/\S+$/, 'base_url must be an http(s) URL')
    .optional(),
  temperature: z.number().min(0).max(2).optional(),
  seed: z.number().int().optional(),
  /** What answers an `exec:CMD` agent's model calls (`scripted:FILE`, `openai:MODEL`, `replay:EPISODE`, `manual`). */
  model: z.string().min(1).optional(),
  /**
   * A `sandbox:CMD` agent's files, put read-only at /opt/agent (`--agent-dir`): absolute, or
   * (in `episode.start`) relative to the task's folder like a script path.
   */
  agent_dir: z.string().min(1).optional(),
});
/** Settings of an `openai:MODEL` agent, and the model source of an `exec:CMD` one. */
export type AgentOptions = z.infer<typeof AgentOptions>;

/**
 * What the user consented to a recorded task widening beyond the defaults. An operation
 * that rebuilds a sandbox from a recorded task fails with `consent_required` (the message
 * names what is wider) until the window has asked and retries with this.
 */
export const Consent = z.array(z.enum(ALL_WIDENINGS));
/** Consent to a recorded task's widenings. */
export type Consent = z.infer<typeof Consent>;

/** One slot of a batch: the `index`-th episode of a task, and the episode filling it. */
export const BatchSlotView = z.object({
  /** The task file. */
  task: z.string(),
  task_name: z.string(),
  index: z.number().int().nonnegative(),
  /** The episode filling the slot; null until one starts. */
  episode: z.string().nullable(),
  /** `pending` (waiting), `running`, or the episode's final status. */
  status: z.union([z.enum(['pending', 'running']), EpisodeStatus]),
  end_reason: z.string().nullable(),
  steps: z.number().int().nonnegative().nullable(),
  duration_ms: z.number().nullable(),
  /** Episodes that once filled the slot but never finished (a cancelled or killed batch). */
  superseded: z.array(z.string()),
  /** QA flag rules of the finished episode (warning or worse), one per flag. */
  flags: z.array(z.string()),
});
/** One slot of a batch. */
export type BatchSlotView = z.infer<typeof BatchSlotView>;

/** A batch as the window sees it: progress, slots and the summary. */
export const BatchView = z.object({
  batch: z.string(),
  /** The batch folder (`batch.json`; `stepbox report DIR`, `stepbox export DIR`). */
  dir: z.string(),
  created: z.number(),
  agent: z.string(),
  episodes: z.number().int().positive(),
  concurrency: z.number().int().positive(),
  /** `running` in this process; `done`, `cancelled`, `failed` (see `error`), or `stopped` (found on disk, unfinished). */
  state: z.enum(['running', 'done', 'cancelled', 'failed', 'stopped']),
  error: z.string().nullable(),
  done: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  succeeded: z.number().int().nonnegative(),
  running: z.number().int().nonnegative(),
  /** Estimated time left from the rate so far; null before the first slot ends or when not running. */
  eta_ms: z.number().nonnegative().nullable(),
  /** Succeeded over finished slots; null before any finished. */
  success_rate: z.number().min(0).max(1).nullable(),
  /** QA flags (warning or worse) over the finished episodes, counted by rule. */
  flags: z.record(z.string(), z.number().int().nonnegative()),
  slots: z.array(BatchSlotView),
});
/** A batch as the window sees it. */
export type BatchView = z.infer<typeof BatchView>;
