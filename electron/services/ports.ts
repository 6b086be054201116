import type { Breakpoint } from '../../shared/breakpoints.js';
import type {
  AgentOptions,
  BranchSummary,
  CaseSummary,
  DockerStatus,
  DoctorCheck,
  ReplayReport,
  SearchHit,
  TaskSummary,
} from '../../shared/contract/index.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { EpisodeController } from '../engine/harness/episode-controller.js';
import type { SnapshotStore } from '../engine/sandbox/snapshot-store.js';
import type { BranchInfo, ReadTrace } from '../engine/trace/trace-store.js';

/**
 * The engine as the app services see it. The real binding is `engine-ports.ts`; tests
 * pass fakes. A port method throws (or rejects) with an error carrying an AppError `code`
 * when it cannot do its job; the dispatch wrapper turns that into data.
 */
export interface HarnessPort {
  /** Starts an episode from a task file in a fresh sandbox; the controller stops after setup (step 0). */
  start(request: {
    readonly taskPath: string;
    readonly agent: string;
    readonly breakpoints: readonly Breakpoint[];
    readonly agentOptions?: AgentOptions;
  }): Promise<EpisodeController>;
  /** Opens a recorded branch at step k in a fresh sandbox; continuing writes a new branch. */
  reopen(id: string, step: number, agent?: string): Promise<EpisodeController>;
  /** Forks a recorded (not live) branch at step k into a new branch now, in a fresh sandbox. */
  fork(id: string, step: number, agent?: string): Promise<EpisodeController>;
  /** Re-executes a recorded branch and reports its first divergence. */
  replayVerify(id: string): Promise<ReplayReport>;
  /** Runs one tool call in a throwaway sandbox restored to snapshot `step - 1` of the branch. */
  whatIf(
    id: string,
    step: number,
    call: { readonly name: string; readonly arguments: Record<string, unknown> },
  ): Promise<{ result: ToolResult; treeHashAfter: string | null }>;
}

/** The recorded episodes: traces, snapshots and the index. */
export interface TracePort {
  /** Every branch of every episode, summarized (from the index when it can). */
  listBranches(): Promise<BranchSummary[]>;
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
}

/** Terminals and stats of containers, and whether Docker answers. */
export interface DockerPort {
  status(): Promise<DockerStatus>;
  openTerminal(
    containerId: string,
    options: { cols: number; rows: number; cwd?: string },
  ): Promise<TerminalHandle>;
  openStats(containerId: string): Promise<StatsHandle>;
}

/** A TTY into a container (see `engine/docker/terminal.ts`). */
export interface TerminalHandle {
  write(data: string): void;
  resize(cols: number, rows: number): Promise<void>;
  onData(cb: (data: string) => void): () => void;
  onCommand(cb: (command: { command: string; cwd: string; exit_code: number }) => void): () => void;
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

/** The bundled sample tasks and cases. */
export interface CatalogPort {
  tasks(): Promise<TaskSummary[]>;
  cases(): Promise<CaseSummary[]>;
  openCase(id: string): Promise<{ case: CaseSummary; readme: string; task: unknown }>;
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
  /** Releases what the ports hold (the sandbox provider); called last on dispose. */
  close?(): Promise<void>;
}
