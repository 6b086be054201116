import type { AgentsPort } from './agents-port.js';
import type { StoreChange } from '../engine/trace/store-watch.js';
import type { Breakpoint } from '../../shared/breakpoints.js';
import type { ImageProgress } from '../engine/harness/task-images.js';
import type {
  AgentOptions,
  BranchSummary,
  UnreadableEpisode,
  CaseSummary,
  Consent,
  DockerStatus,
  DoctorCheck,
  FlagSummary,
  ReplayReport,
  SearchHit,
  TaskSummary,
  WarmSandboxes,
} from '../../shared/contract/index.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { HeaderEvent, TraceEvent } from '../../shared/trace-events.js';
import type { BatchFile } from '../engine/batch/batch-file.js';
import type { StagedSandboxes } from '../engine/candidates/staged-sandboxes.js';
import type { CandidateSet, CandidateSource } from '../engine/candidates/try-candidates.js';
import type { EpisodeController } from '../engine/harness/episode-controller.js';
import type { WorldFlags } from '../engine/harness/load-world.js';
import type { SnapshotStore } from '../engine/sandbox/snapshot-store.js';
import type { Lineage } from '../engine/trace/lineage.js';
import type { BranchInfo, ReadTrace } from '../engine/trace/trace-store.js';
import type { HumanCommand } from '../engine/docker/terminal.js';
import type { WritersProbe } from '../engine/docker/other-writers.js';

/**
 * The engine as the app services see it. The real binding is `engine-ports.ts`; tests
 * pass fakes. A port method throws (or rejects) with an error carrying an AppError `code`
 * when it cannot do its job; the dispatch wrapper turns that into data.
 */
export interface HarnessPort {
  /**
   * Starts an episode from a task file or folder (loadWorld: a project folder takes its goal
   * from `world`) in a fresh sandbox; the controller stops after setup (step 0).
   */
  start(request: {
    readonly taskPath: string;
    /** The goal and verifier of a project folder without a task.json (`stepbox run DIR --goal`). */
    readonly world?: WorldFlags;
    readonly agent: string;
    readonly breakpoints: readonly Breakpoint[];
    readonly agentOptions?: AgentOptions;
    /**
     * Episodes to run to their end first, headless, when the task keeps its sandbox
     * between episodes (`sandbox.reset_between_episodes: false`): the live episode then
     * starts in the sandbox they left, as a case that runs two episodes does.
     */
    readonly leadIn?: number;
    /** Each line of the task's image build (sandbox.build), as it comes. */
    readonly onImageProgress?: (p: ImageProgress) => void;
  }): Promise<EpisodeController>;
  /**
   * Reads the task a start would (loadWorld) and throws its refusal, starting nothing; absent
   * (fakes), the start's own read is the check.
   */
  check?(taskPath: string, world?: WorldFlags): void;
  /** Opens a recorded branch at step k in a fresh sandbox; continuing writes a new branch. */
  reopen(id: string, step: number, agent?: string, options?: RecordedRunOptions): Promise<EpisodeController>;
  /** Forks a recorded (not live) branch at step k into a new branch now, in a fresh sandbox. */
  fork(id: string, step: number, agent?: string, options?: RecordedRunOptions): Promise<EpisodeController>;
  /**
   * Starts warm sandboxes for these tasks' configs in the background (best effort), so
   * the next start is a hand-over from the pool rather than a container start.
   */
  prewarm?(taskPaths: readonly string[]): void;
  /**
   * Tries candidate next actions after step `step` of a branch, each in a throwaway fork
   * from snapshot `step`, in parallel on warm sandboxes. Absent (fakes, a degraded engine):
   * the candidates operations report it.
   */
  candidates?(request: {
    readonly id: string;
    readonly step: number;
    readonly sources: readonly CandidateSource[];
    readonly runOn: number;
    /** Sandboxes staged at `step` (see `stageCandidates`), taken first. */
    readonly staged?: StagedSandboxes;
    /** Consent to the recorded task's widenings. */
    readonly consent?: Consent;
  }): Promise<CandidateSet>;
  /** Stages `count` warm sandboxes at snapshot `step` of a branch, ahead of a candidates request. */
  stageCandidates?(id: string, step: number, count: number, consent?: Consent): Promise<StagedSandboxes>;
  /** Re-executes a recorded branch and reports its first divergence. */
  replayVerify(id: string, consent?: Consent): Promise<ReplayReport>;
  /** Runs one tool call in a throwaway sandbox restored to snapshot `step - 1` of the branch. */
  whatIf(
    id: string,
    step: number,
    call: { readonly name: string; readonly arguments: Record<string, unknown> },
    consent?: Consent,
  ): Promise<{ result: ToolResult; treeHashAfter: string | null }>;
}

/** How a recorded branch is continued: agent settings, and consent to its task's widenings. */
export interface RecordedRunOptions {
  readonly agentOptions?: AgentOptions;
  readonly consent?: Consent;
}

/** A branch's own trace plus the steps it inherited from its ancestors. */
export interface BranchTrace {
  readonly info: BranchInfo;
  readonly trace: ReadTrace;
  /** The header of this branch. */
  readonly header: HeaderEvent;
  /**
   * The branch's {@link Lineage} events (steps 1..fork_step from the parent chain, then its
   * own), followed by its incomplete trailing step: what a view shows.
   */
  readonly events: readonly TraceEvent[];
  readonly lineage: Lineage;
}

/** The recorded episodes: traces, snapshots and the index. */
export interface TracePort {
  /** Every branch of every episode, summarized (from the index when it can). */
  listBranches(): Promise<BranchSummary[]>;
  /** The episodes whose trace cannot be read (not in `listBranches`), with why and what to do. */
  unreadable(): UnreadableEpisode[];
  /** Full-text search; an empty list when the index cannot search. */
  search(query: string, limit: number): Promise<SearchHit[]>;
  /** An episode or branch id (or unique prefix) → its branch; throws `not_found`. */
  resolve(id: string): BranchInfo;
  /** Every branch of one episode. */
  branchesOf(episode: string): BranchInfo[];
  read(branch: BranchInfo): ReadTrace;
  /** Changes whenever the branch's trace file changes (path, size, mtime). */
  version(branch: BranchInfo): string;
  snapshots(episode: string): SnapshotStore;
  /**
   * QA of a branch with the engine's references (the task's declared initial workspace
   * against snapshot 0, the task's medians in the index), so `state_leak` and
   * `efficiency` can fire. Absent (fakes): QA over the trace alone.
   */
  check?(branch: BranchTrace): Promise<FlagSummary[]>;
  /**
   * Calls `onChange` when the store changes on disk, also by another process (a `stepbox
   * run` in a shell) or a person (a trace edited in place), with the episodes whose files
   * changed; returns the stop. Absent (fakes): only this process's changes are told.
   */
  watch?(onChange: (change: StoreChange) => void): () => void;
}

/** Terminals and stats of containers, and whether Docker answers. */
export interface DockerPort {
  status(): Promise<DockerStatus>;
  openTerminal(
    containerId: string,
    options: { cols: number; rows: number; cwd?: string; writers?: WritersProbe },
  ): Promise<TerminalHandle>;
  /** `taskMemoryBytes`: the task memory limit (docker/stats.ts reads the tmpfs sizes from it). */
  openStats(containerId: string, taskMemoryBytes: number): Promise<StatsHandle>;
  /** The warm pool's idle sandboxes (no episode in them); absent where there is no pool. */
  warm?(): Promise<WarmSandboxes>;
}

/** A TTY into a container (see `engine/docker/terminal.ts`). */
export interface TerminalHandle {
  write(data: string): void;
  resize(cols: number, rows: number): Promise<void>;
  onData(cb: (data: string) => void): () => void;
  onCommand(cb: (command: HumanCommand) => void): () => void;
  /** Commands reported and not yet given to onCommand (absent: each is given as it is reported). */
  reporting?(): Promise<void> | null;
  onExit(cb: (exitCode: number | null) => void): () => void;
  close(): Promise<void>;
}

/** A stats stream of a container (see `engine/docker/stats.ts`). */
export interface StatsHandle {
  onSample(
    cb: (sample: {
      cpuPercent: number;
      memoryBytes: number;
      memoryLimit: number;
      pids: number;
      t: number;
    }) => void,
  ): () => void;
  onEnd(cb: (reason: string) => void): () => void;
  close(): void;
}

/** Batches of episodes on the warm pool (`engine/batch/`). */
export interface BatchPort {
  /** Creates a batch folder under the store (`batches/ID/batch.json`, every slot empty). */
  create(request: {
    readonly tasks: readonly string[];
    readonly agent: string;
    readonly episodes: number;
    readonly concurrency: number;
  }): { dir: string; batch: BatchFile };
  /** Runs the batch's unfinished slots; `batch` is updated in place as slots start and end. */
  run(dir: string, batch: BatchFile, onProgress: () => void, signal: AbortSignal): Promise<BatchFile>;
  /** The store's batch folders with their batch.json (unreadable ones left out). */
  list(): { dir: string; batch: BatchFile }[];
}

/** The bundled sample tasks and cases. */
export interface CatalogPort {
  tasks(): Promise<TaskSummary[]>;
  cases(): Promise<CaseSummary[]>;
  openCase(id: string): Promise<{ case: CaseSummary; readme: string; task: unknown }>;
  /** A case's summary with the task and agent of its broken or fixed variant. */
  caseVariant(id: string, fixed: boolean): Promise<CaseSummary>;
}

/** Teaching and sharing over the store: an episode saved as a library case, or as one HTML file. */
export interface TeachingPort {
  saveCase(
    id: string,
    name: string,
    force: boolean,
  ): Promise<{ name: string; dir: string; rules: string[]; steps: number }>;
  share(
    id: string,
    redact: readonly string[],
  ): Promise<{ html: string; bytes: number; file_name: string; path: string }>;
}

/** The environment checks of `stepbox doctor`. */
export interface DoctorPort {
  run(): Promise<{ ok: boolean; checks: DoctorCheck[] }>;
}

/** Everything the services need from the engine. */
export interface EnginePorts {
  readonly harness: HarnessPort;
  readonly traces: TracePort;
  readonly docker: DockerPort;
  readonly catalog: CatalogPort;
  readonly doctor: DoctorPort;
  /** Batches; absent (fakes, a degraded engine): the batch operations report it. */
  readonly batches?: BatchPort;
  /** Save as case and Share…; absent (fakes, a degraded engine): those operations report it. */
  readonly teaching?: TeachingPort;
  /** Agent installs (the Agents panel); absent (fakes, a degraded engine): the agents operations report it. */
  readonly agents?: AgentsPort;
  /** The store's folder (the file picker's second root); absent (fakes): the picker offers the task's folder only. */
  readonly storeHome?: string;
  /** stepbox's bundled files (sample tasks, cases, agents): a place form paths may name (file-fields.ts). */
  readonly bundledDir?: string;
  /** Releases what the ports hold (the sandbox provider); called last on dispose. */
  close?(): Promise<void>;
}
