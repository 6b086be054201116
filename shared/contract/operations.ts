import { z } from 'zod';
import { MAX_STEP_DETAILS } from './operation-names.js';
import { Breakpoint } from '../breakpoints.js';
import { AgentInstalled, AgentName, AgentView } from './agents.js';
import { CandidateSetView, TypedCandidate } from './candidates.js';
import { AssistantMessage, StopPoints } from '../held-action.js';
import { ToolResult } from '../tool-result.js';
import { EpisodeStatus, TraceEvent } from '../trace-events.js';
import {
  AgentOptions,
  Consent,
  BatchView,
  BranchSummary,
  CaseName,
  ChosenField,
  ChosenFile,
  CaseSummary,
  CompareRow,
  DockerStatus,
  DoctorCheck,
  EpisodeEntry,
  UnreadableEpisode,
  EpisodeId,
  EpisodeStateInfo,
  EpisodeView,
  FlagSummary,
  ReplayReport,
  SandboxDetails,
  WarmSandboxes,
  SearchHit,
  StepDetail,
  StepRow,
  TaskSource,
  TaskSummary,
  Project,
} from './models.js';

const step = z.number().int().nonnegative();
/** The most timeline rows one answer carries when asked for a part (a page, a first screen). */
export const MAX_ROWS_PAGE = 5_000;
// MAX_STEP_DETAILS lives with the names: the window's inspector needs it before its first render,
// and importing it from here would pull zod into the entry chunk.
const empty = z.strictObject({});
const done = z.object({});
const byId = z.strictObject({ id: EpisodeId });
const size = { cols: z.number().int().min(2).max(1000), rows: z.number().int().min(1).max(1000) };

/** A new branch (fork or reopen) and its live state. */
const NewBranch = z.object({ episode: z.string(), branch: z.string(), state: EpisodeStateInfo });

/** A branch continued from step k (fork, reopen): the agent, its settings, consent to the recorded task. */
const BranchAtStep = z.strictObject({
  id: EpisodeId,
  step,
  agent: z.string().min(1).optional(),
  /** Settings of an openai: agent; unset ones keep the recorded ones (never a default endpoint). */
  agent_options: AgentOptions.optional(),
  allow: Consent.optional(),
});

const op = <Req extends z.ZodType, Res extends z.ZodType>(request: Req, response: Res, summary: string) => ({
  request,
  response,
  summary,
});

/**
 * Every operation between the window and the main process: `domain.verb` → request schema
 * → response schema. Both transports (IPC, WebSocket) carry exactly these; every request is
 * validated main-side, and every response is a `Result` (errors cross as data).
 */
/** What `episode.start` takes (and `episode.checkStart` checks). */
const EpisodeStartRequest = z.strictObject({
  task: TaskSource,
  /** Agent spec (`scripted:path`, `openai:model@url`, `manual`); defaults to the sample's or case's agent. */
  agent: z.string().min(1).optional(),
  agent_options: AgentOptions.optional(),
  breakpoints: z.array(Breakpoint).optional(),
  /**
   * Pause switches on from the start (the window's session switches): set before the first
   * step, so a `run` cannot pass a stop they ask for.
   */
  stop_points: StopPoints.partial().optional(),
  /** Run immediately (F5) instead of stopping after setup. Default false. */
  run: z.boolean().optional(),
  /** The goal of a bare project folder (a `project` task without task.json). */
  goal: z.string().min(1).max(20_000).optional(),
  /** The check of a bare project folder (the CLI's `--verify CMD`): run in /workspace after the agent ends, exit 0 = success. */
  verify: z.string().min(1).max(20_000).optional(),
});

/** The bundled task or case, or opened project, a picker lists the folder of and a grant is for. */
const PickerTask = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('sample'), id: z.string().min(1) }),
  z.strictObject({ kind: z.literal('case'), id: CaseName, fixed: z.boolean().optional() }),
  // An opened project's folder: a place the one path rule reads from (commonPlaces).
  z.strictObject({ kind: z.literal('project'), path: z.string().min(1).max(4096) }),
]);

export const OPERATIONS = {
  'library.list': op(
    z.strictObject({ query: z.string().optional(), limit: z.number().int().positive().max(1000).optional() }),
    z.object({
      episodes: z.array(EpisodeEntry),
      total: z.number().int().nonnegative(),
      /** Episodes whose trace cannot be read, with why (absent from an older server). */
      unreadable: z.array(UnreadableEpisode).optional(),
    }),
    'Episodes and their branches, newest first; the unreadable ones apart, with why.',
  ),
  'library.search': op(
    z.strictObject({ query: z.string().min(1), limit: z.number().int().positive().max(500).optional() }),
    z.object({ hits: z.array(SearchHit) }),
    'Full-text search across traces (the SQLite index).',
  ),
  'tasks.list': op(empty, z.object({ tasks: z.array(TaskSummary) }), 'The bundled sample tasks.'),
  'cases.list': op(empty, z.object({ cases: z.array(CaseSummary) }), 'The bundled failure cases.'),
  'cases.open': op(
    z.strictObject({ id: CaseName }),
    z.object({ case: CaseSummary, readme: z.string(), task: z.unknown() }),
    'A case with its walkthrough README text.',
  ),
  'cases.save': op(
    z.strictObject({
      id: EpisodeId,
      /** The case's name: lowercase letters, digits and -. */
      name: CaseName,
      force: z.boolean().optional(),
    }),
    z.object({ name: z.string(), dir: z.string(), rules: z.array(z.string()), steps: z.number().int() }),
    "Saves an episode or branch as a case in the store's case library (stepbox case new).",
  ),

  'files.list': op(
    z.strictObject({
      /**
       * `task`: the folder of a bundled task or case (where start-form paths resolve); `store`: the
       * store; `host`: the person's folders, any absolute folder, as Open… browses them (a file
       * listed there is read only once chosen, `files.choose`).
       */
      root: z.enum(['task', 'store', 'host']),
      /** The bundled task or case, or opened project, whose folder `task` means (a typed task path is not a root). */
      task: PickerTask.optional(),
      /** The folder to list, from the root (default: the root; for `host`, the person's home folder). */
      path: z.string().max(4096).optional(),
    }),
    z.object({
      root: z.string(),
      path: z.string(),
      absolute: z.string(),
      entries: z.array(
        z.object({ name: z.string(), type: z.enum(['file', 'dir']), size: z.number().int().nonnegative() }),
      ),
    }),
    "The start form's file picker: a folder's entries inside the task's folder or the store, never outside; or any folder of the person's (`host`), names only.",
  ),
  'files.choose': op(
    z.strictObject({
      /** The start-form field the file is chosen for: the grant holds for that field alone. */
      field: ChosenField,
      /** The file (for `agent_dir`, the folder) picked, absolute, in a folder `files.list` (`host`) listed. */
      path: z.string().min(1).max(4096),
      /** The task it is chosen for: the grant holds for starts (forks, reopens) of that task's folder alone. */
      task: PickerTask,
    }),
    ChosenFile,
    "Choose…'s pick in the person's folders: the server lets that one file (or folder) be read for that field of that task's starts, kept in the store across restarts (`chosen-files.json`). Only an entry of a folder it listed in this run can be chosen; a typed path, a trace or a bundle is never a grant.",
  ),
  'files.chosen': op(
    z.strictObject({}),
    z.object({ chosen: z.array(ChosenFile) }),
    'The grants in effect (files chosen with Choose… → Your folders), newest last: the window says them beside the fields.',
  ),
  'files.forget': op(
    z.strictObject({
      field: ChosenField,
      /** The file or folder the field named (as picked, or its real path). */
      path: z.string().min(1).max(4096),
      /** Only the grant for this task (default: the grants of that file for that field, for every task). */
      task: PickerTask.optional(),
    }),
    z.object({ forgotten: z.number().int().nonnegative() }),
    'Drops the grants of a file for a field (the person cleared the field, or pressed Forget): stepbox reads it no more for that field.',
  ),

  'projects.list': op(
    z.strictObject({}),
    z.object({
      projects: z.array(Project),
      /** True where a native dialog answers `projects.pick` (the desktop app); web mode types the path. */
      native_picker: z.boolean(),
    }),
    'The projects opened with Open…, most recent first (kept in the store).',
  ),
  'projects.open': op(
    z.strictObject({ path: z.string().min(1).max(4096) }),
    Project,
    'Opens a folder or a task.json by its absolute path: it joins the recent projects and can be started.',
  ),
  'projects.remove': op(
    z.strictObject({ path: z.string().min(1).max(4096) }),
    z.object({ removed: z.boolean() }),
    'Forgets an opened project (it leaves the list); its folder on disk is never touched.',
  ),
  'projects.browse': op(
    z.strictObject({
      /** The folder to list (absolute); a path ending in a partial name lists its folder. */
      path: z.string().min(1).max(4096),
    }),
    z.object({
      /** The absolute folder listed. */
      folder: z.string(),
      entries: z.array(z.object({ name: z.string(), type: z.enum(['dir', 'file']) })),
    }),
    "Open…'s completion in web mode: the folders and .json files of a folder (names only, never content).",
  ),
  'projects.pick': op(
    z.strictObject({}),
    z.object({ path: z.string().nullable() }),
    "The desktop app's native dialog for Open… (null when cancelled); web mode answers `unsupported`.",
  ),

  'episode.open': op(
    z.strictObject({
      id: EpisodeId,
      /**
       * Only the last N timeline rows (the window's first screen): a 10,000-step view was 3.5 MB
       * to send and decode before anything showed. `rows_from`/`rows_total` say what is left
       * for `episode.rows`. Unset: every row (as before).
       */
      last_rows: z.number().int().positive().max(MAX_ROWS_PAGE).optional(),
    }),
    EpisodeView,
    'An episode or branch: summary, timeline rows (all, or the last `last_rows`), branches, live state.',
  ),
  'episode.rows': op(
    z.strictObject({
      id: EpisodeId,
      /** The index of the first row (0 is the branch's first row, usually step 0). */
      from: z.number().int().nonnegative(),
      limit: z.number().int().positive().max(MAX_ROWS_PAGE),
    }),
    z.object({
      rows: z.array(StepRow),
      /** The index of `rows[0]` (= the request's `from`). */
      from: z.number().int().nonnegative(),
      /** How many rows the branch has now (a live branch grows). */
      total: z.number().int().nonnegative(),
    }),
    "A page of a branch's timeline rows by index: the rows an `episode.open` with `last_rows` left out.",
  ),
  'episode.flags': op(
    byId,
    z.object({ flags: z.array(FlagSummary) }),
    "A branch's QA flags now (what `episode.open` and `episode.stepDetail` carry, and the library counts): a live branch's timeline asks again each time it stops.",
  ),
  'episode.start': op(
    EpisodeStartRequest,
    EpisodeStateInfo,
    'Starts an episode in a fresh sandbox; it stops after setup (step 0) unless `run`.',
  ),
  'episode.checkStart': op(
    EpisodeStartRequest,
    z.object({}),
    'Checks a start as `episode.start` would (task file, agent fields, goal) and starts nothing: the window asks it before stopping the live episode for a start that would be refused.',
  ),
  'episode.step': op(byId, EpisodeStateInfo, 'One step (F10); resolves when the step is done.'),
  'episode.run': op(
    z.strictObject({ id: EpisodeId, wait: z.boolean().optional() }),
    EpisodeStateInfo,
    'Continue (F5) until a breakpoint, pause or end; resolves at once unless `wait`.',
  ),
  'episode.pause': op(byId, EpisodeStateInfo, 'Pause after the current step.'),
  'episode.stop': op(
    byId,
    z.object({ status: EpisodeStatus, end_reason: z.string() }),
    'Stop (Shift+F5): the trace closes as interrupted; the sandbox is destroyed.',
  ),
  'episode.decide': op(
    z.strictObject({
      id: EpisodeId,
      /** The assistant's text (a final answer when there is no call). */
      content: z.string().nullable().optional(),
      /** The tool call the person chose. */
      call: z
        .strictObject({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) })
        .optional(),
    }),
    done,
    'Gives a `manual` agent its next decision (queued until the next step consumes it).',
  ),
  'episode.setBreakpoints': op(
    z.strictObject({ id: EpisodeId, breakpoints: z.array(Breakpoint) }),
    z.object({ breakpoints: z.array(Breakpoint) }),
    'Replaces the branch breakpoints.',
  ),
  'episode.inject': op(
    z.strictObject({ id: EpisodeId, role: z.enum(['system', 'user']), content: z.string().min(1) }),
    done,
    'Injects a message the agent sees before its next decision.',
  ),
  'episode.override': op(
    z.strictObject({ id: EpisodeId, result: ToolResult }),
    done,
    'Overrides the pending (last) tool result: the tool ran; the agent sees this one.',
  ),
  'episode.setStopPoints': op(
    z.strictObject({ id: EpisodeId, stop_points: StopPoints.partial() }),
    EpisodeStateInfo,
    'Where the stepper also stops inside a step: before the answer reaches the agent, before the tools run.',
  ),
  'episode.editAnswer': op(
    z.strictObject({ id: EpisodeId, message: AssistantMessage }),
    EpisodeStateInfo,
    "Edits the held step's answer before the agent gets it (recorded as a person's edit).",
  ),
  'episode.editArguments': op(
    z.strictObject({
      id: EpisodeId,
      call_id: z.string().min(1),
      arguments: z.record(z.string(), z.unknown()),
    }),
    EpisodeStateInfo,
    "Edits a held call's arguments before it runs, checked against the tool's schema (recorded as a person's edit).",
  ),
  'episode.replaceResult': op(
    z.strictObject({ id: EpisodeId, call_id: z.string().min(1), result: ToolResult }),
    EpisodeStateInfo,
    "Gives a held call's result instead of running it: the tool does not run; the agent sees this.",
  ),
  'episode.share': op(
    z.strictObject({
      id: EpisodeId,
      /** Like export's --redact: field names, or /regex/flags patterns. */
      redact: z.array(z.string().min(1)).max(50).optional(),
    }),
    z.object({
      html: z.string(),
      bytes: z.number().int(),
      file_name: z.string(),
      /** Where the file was written on the host (`$STEPBOX_HOME/shares/BRANCH.html`). */
      path: z.string(),
    }),
    'The episode as one self-contained HTML file that opens offline (stepbox share).',
  ),
  'episode.rollback': op(
    z.strictObject({ id: EpisodeId, step }),
    EpisodeStateInfo,
    'Restores the live sandbox (workspace, memory, conversation, cwd/env) to just after step k, on a new branch made at once (its id in the answer); the old branch closes as rolled back.',
  ),
  'episode.fork': op(BranchAtStep, NewBranch, 'Forks at step k into a new live branch (own id, own trace).'),
  'episode.reopen': op(
    BranchAtStep,
    NewBranch,
    'Reopens a recorded branch at step k in a fresh sandbox; continuing writes a new branch.',
  ),
  'episode.replayVerify': op(
    z.strictObject({ id: EpisodeId, allow: Consent.optional() }),
    ReplayReport,
    'Re-executes the branch from snapshot 0 in a fresh sandbox and reports the first divergence.',
  ),
  'episode.whatIf': op(
    z.strictObject({
      id: EpisodeId,
      step: z.number().int().positive(),
      call: z.strictObject({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }),
      allow: Consent.optional(),
    }),
    z.object({
      step: z.number().int().positive(),
      result: ToolResult,
      tree_hash_after: z.string().nullable(),
    }),
    'Runs a tool call in a THROWAWAY sandbox restored to snapshot step-1 (what the step saw); the live sandbox is untouched.',
  ),
  'episode.compare': op(
    z.strictObject({ a: EpisodeId, b: EpisodeId }),
    z.object({
      a: BranchSummary,
      b: BranchSummary,
      /** Steps matched by alignment, not index (an inserted step does not shift the rest). */
      rows: z.array(CompareRow),
      /** The first step, in A's numbering, whose action or what the agent saw (overrides, injections) differs; null when none. */
      diverged_at: z.number().int().positive().nullable(),
      /**
       * The index in `rows` of that first difference; null when none. Its row says whether this
       * branch has the step (a step only B took has A's next number in `diverged_at`).
       */
      diverged_row: z.number().int().nonnegative().nullable(),
      /** Files that differ between the two branches' last workspaces. */
      files_differ: z.array(z.string()).optional(),
      /** Each side's QA flags. */
      a_flags: z.array(FlagSummary).optional(),
      b_flags: z.array(FlagSummary).optional(),
    }),
    'Two branches step-aligned, with verdicts, workspace differences per step and at the end.',
  ),
  'episode.candidates': op(
    z.strictObject({
      id: EpisodeId,
      /** Step K: the candidates are step K+1, each in a throwaway fork from snapshot K. */
      step,
      /** Candidates from the branch's own agent (seed varied for a model endpoint). */
      n: z.number().int().min(0).max(8).optional(),
      /** Candidates a person typed. */
      actions: z.array(TypedCandidate).max(8).optional(),
      /** Steps each candidate runs on with the branch's agent. */
      run_on: z.number().int().min(0).max(10).optional(),
      /** Consent to what the recorded task asks beyond the defaults (else `consent_required`). */
      allow: Consent.optional(),
    }),
    CandidateSetView,
    'Tries candidate next actions after step K in parallel throwaway forks, side by side.',
  ),
  'episode.stageCandidates': op(
    z.strictObject({ id: EpisodeId, step, count: z.number().int().min(1).max(8), allow: Consent.optional() }),
    done,
    'Starts warming sandboxes at snapshot k in the background for the candidates about to be tried there.',
  ),
  'episode.pickCandidate': op(
    z.strictObject({ group: z.string().min(1), index: z.number().int().nonnegative() }),
    NewBranch,
    'Continues one candidate as the live branch; the others stay as branches marked rejected.',
  ),
  'episode.discardCandidates': op(
    z.strictObject({ group: z.string().min(1) }),
    done,
    'Closes every candidate of a group without continuing one.',
  ),
  'episode.trace': op(
    z.strictObject({
      id: EpisodeId,
      from_seq: z.number().int().nonnegative().optional(),
      limit: z.number().int().positive().max(5000).optional(),
    }),
    z.object({
      events: z.array(TraceEvent),
      /** The `from_seq` of the next page, or null at the end. */
      next: z.number().int().nonnegative().nullable(),
      total: z.number().int().nonnegative(),
    }),
    'The events of a branch, paged by seq (default 500 per page).',
  ),
  'episode.stepDetail': op(
    z.strictObject({ id: EpisodeId, step: z.number().int().nonnegative() }),
    StepDetail,
    'The inspector view of one step.',
  ),
  'episode.stepDetails': op(
    z.strictObject({
      id: EpisodeId,
      steps: z.array(z.number().int().nonnegative()).min(1).max(MAX_STEP_DETAILS),
    }),
    z.object({ details: z.array(StepDetail) }),
    "The inspector views of several steps, in the order asked (the viewed step's neighbours, fetched ahead so a click or → beside it shows at once): a step not recorded yet is left out, and the answer stops once it passes about 1 MB.",
  ),

  'sandbox.info': op(
    z.strictObject({ id: EpisodeId.optional() }),
    z.object({ docker: DockerStatus, sandbox: SandboxDetails.nullable(), warm: WarmSandboxes.optional() }),
    "Docker's status, the warm pool's idle sandboxes and, with an id, that live branch's sandbox.",
  ),
  'system.doctor': op(
    empty,
    z.object({ ok: z.boolean(), checks: z.array(DoctorCheck) }),
    'Environment checks with the command that fixes each failure.',
  ),
  'settings.get': op(
    empty,
    z.object({
      /** `ui.idle_release` in ms: a live episode idle this long is released; null when off. */
      idle_release_ms: z.number().int().positive().nullable(),
      /** `ui.release_after_close` in ms: live episodes go this long after the last window closed; null when off. */
      release_after_close_ms: z.number().int().positive().nullable(),
      /** The settings file they were read from (it may not exist: then the defaults hold). */
      file: z.string().nullable(),
      /** The store's folder (`$STEPBOX_HOME`): the window names paths inside it from there, not by the host's layout. */
      home: z.string().nullable(),
      /** stepbox's bundled files (`resources/`): named from there too. */
      bundled: z.string().nullable(),
    }),
    'The settings in effect (`$STEPBOX_HOME/settings.json`, README "Settings").',
  ),

  'terminal.open': op(
    z.strictObject({ id: EpisodeId, ...size }),
    z.object({ terminal: z.string() }),
    "Opens a TTY exec into the live branch's sandbox; output arrives as `terminal.data`.",
  ),
  'terminal.input': op(
    z.strictObject({ terminal: z.string().min(1), data: z.string() }),
    done,
    'Keystrokes.',
  ),
  'terminal.resize': op(z.strictObject({ terminal: z.string().min(1), ...size }), done, 'Resizes the TTY.'),
  'terminal.ack': op(
    z.strictObject({ terminal: z.string().min(1), bytes: z.number().int().nonnegative() }),
    done,
    'Flow control: the window has written `bytes` more of the output (xterm write callback).',
  ),
  'terminal.close': op(z.strictObject({ terminal: z.string().min(1) }), done, 'Closes the TTY.'),

  'stats.subscribe': op(
    z.strictObject({ id: EpisodeId }),
    z.object({ subscription: z.string() }),
    "Starts one long-lived stats stream of the branch's sandbox (`sandbox.stats` events).",
  ),
  'stats.unsubscribe': op(z.strictObject({ subscription: z.string().min(1) }), done, 'Ends a stats stream.'),

  'batch.start': op(
    z.strictObject({
      tasks: z.array(TaskSource).min(1).max(50),
      /** Agent spec; defaults to the tasks' own agent when they all ship the same one. */
      agent: z.string().min(1).optional(),
      /** Episodes per task. */
      episodes: z.number().int().min(1).max(1000),
      /** Episodes at once. */
      concurrency: z.number().int().min(1).max(16),
    }),
    z.object({ batch: z.string(), dir: z.string() }),
    'Starts a batch on the warm pool; progress arrives as `batch.progress`.',
  ),
  'batch.list': op(
    empty,
    z.object({ batches: z.array(BatchView) }),
    'Batches of this store, newest first (running ones live, others from their batch.json).',
  ),
  'batch.get': op(z.strictObject({ batch: z.string().min(1) }), BatchView, 'One batch with its slots.'),
  'batch.cancel': op(
    z.strictObject({ batch: z.string().min(1) }),
    BatchView,
    'Stops a running batch: running episodes are stopped, unfinished slots stay for `stepbox batch --resume`.',
  ),
  'batch.resume': op(
    z.strictObject({ batch: z.string().min(1) }),
    BatchView,
    "Runs a stopped batch's unfinished slots again (as `stepbox batch --resume`): a cut-off episode is kept as superseded.",
  ),

  'agents.list': op(
    empty,
    z.object({ agents: z.array(AgentView) }),
    'Every recipe (the shipped ones and $STEPBOX_HOME/agents/recipes) with its installed versions.',
  ),
  'agents.install': op(
    z.strictObject({ name: AgentName }),
    AgentInstalled,
    "Installs (or brings up to date) a recipe's agent, as `stepbox agents add NAME`; progress arrives as `agents.progress`.",
  ),
  'agents.cancelInstall': op(
    z.strictObject({ name: AgentName }),
    z.object({ cancelled: z.boolean() }),
    'Cancels a running install (nothing half-made is left); false when none was running.',
  ),
  'agents.remove': op(
    z.strictObject({ name: AgentName }),
    z.object({ removed: z.array(z.string()) }),
    'Removes every installed version of an agent, as `stepbox agents remove NAME`.',
  ),
} as const;

/** The contract's operation map. */
export type Operations = typeof OPERATIONS;
/** An operation name (`domain.verb`). */
export type OperationName = keyof Operations;
/** The request an operation takes (as the caller writes it: defaults optional). */
export type RequestOf<O extends OperationName> = z.input<Operations[O]['request']>;
/** The request an operation receives after validation. */
export type ParsedRequestOf<O extends OperationName> = z.output<Operations[O]['request']>;
/** The value an operation returns on success. */
export type ResponseOf<O extends OperationName> = z.output<Operations[O]['response']>;

export { OPERATION_NAMES } from './operation-names.js';

/** True when `name` is a contract operation. */
export function isOperationName(name: string): name is OperationName {
  return Object.prototype.hasOwnProperty.call(OPERATIONS, name);
}
