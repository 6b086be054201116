import type { RewardFile } from '../../../shared/verifier-reward.js';
import type { ToolError } from '../../../shared/errors.js';
import type { Result } from '../../../shared/result.js';
import type { DirEntry, ToolResult } from '../../../shared/tool-result.js';
import type { ChangedPath } from '../../../shared/trace-events.js';
import type { SnapshotStore, SnapshotManifest } from './snapshot-store.js';
import type { Duplex } from 'node:stream';
import type { AgentFiles } from './agent-files.js';
import type { WorkspaceSeed } from './workspace-seed.js';
import type { HelperChannel } from './helper-channel.js';
import type { Terminal, TerminalOptions } from '../docker/terminal.js';
import type { StatsStream } from '../docker/stats.js';
import type { BuildableSandbox, BuildProgress } from '../docker/build-image.js';
import type { PullProgress } from '../docker/pull-image.js';

/** Resolved limits of a sandbox, in bytes and counts. */
export interface SandboxLimits {
  readonly cpus: number;
  readonly memoryBytes: number;
  readonly pids: number;
  readonly diskBytes: number;
  /** Cap per output stream of one call; the rest is counted and discarded inside the container. */
  readonly outputBytes: number;
  /** Size of the $HOME tmpfs (`limits.home`); unset: {@link DEFAULT_HOME_BYTES}. */
  readonly homeBytes?: number;
}

/** The $HOME tmpfs when a task sets no `limits.home`: 512 MiB, room for the shipped agents' caches (Copilot CLI unpacks ~235 MB). */
export const DEFAULT_HOME_BYTES = 512 * 1024 * 1024;

/** What a sandbox is created from. Two configs with the same key share a warm pool. */
export interface SandboxConfig {
  readonly image: string;
  /** `none` (default) or the name of a Docker network the engine must already have. */
  readonly network: string;
  readonly limits: SandboxLimits;
  /** Files of an agent inside the sandbox, read-only at /opt/agent (`sandbox:` agents), or none. */
  readonly agentFiles?: AgentFiles;
  /** The engine's OCI runtime to run it on (`runsc` for gVisor); unset: the engine's default. */
  readonly runtime?: string;
  /**
   * The working directory (`sandbox.workdir`): the snapshotted, rolled-back place where the
   * agent starts, a tmpfs seeded with the image's own files there. Unset: /workspace.
   */
  readonly workdir?: string;
  /** Environment variables of the container (`sandbox.env`); the fixed ones (HOME, TZ, …) win. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Folders of the verifier's own (its files' and its reward's): each an empty tmpfs only root
   * may write while the agent works, filled and emptied by the verifier's channel.
   */
  readonly verifierDirs?: readonly VerifierDir[];
}

/** A folder of the verifier's own in a sandbox, and the room it needs. */
export interface VerifierDir {
  readonly path: string;
  readonly bytes: number;
}

/** The persistent shell's state: what `cd` and `export` changed. */
export interface SessionState {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

/** A command to run in the persistent session (execute_shell semantics). */
export interface ExecRequest {
  readonly command: string;
  /** Effective timeout (the smallest of the call's, the tool's and the hard step timeout). */
  readonly timeoutMs: number;
  /** Run in a new shell with cwd /workspace and the image's environment, not the agent's session (the verifier, setup). */
  readonly fresh?: boolean;
}

/** What a snapshot captured. */
export interface SnapshotInfo {
  /** Id of the self-contained manifest in the host store. */
  readonly manifest: string;
  readonly treeHash: string;
  /** Paths changed since the previous snapshot of this sandbox (all files for the first). */
  readonly changed: readonly ChangedPath[];
  /** Bytes of blobs sent to the host (those the store lacked). */
  readonly bytes: number;
  readonly durationMs: number;
  /** Files left out because they are larger than the per-file cap (absent when none). */
  readonly skipped?: readonly { readonly path: string; readonly size: number }[];
}

/** Options of {@link Sandbox.snapshot}. */
export interface SnapshotOptions {
  /** Files larger than this are skipped (default: the backend's documented cap). */
  readonly fileCapBytes?: number;
  /**
   * Called as soon as the workspace has been read, before its content is stored (again when
   * the capture starts over and reads it anew): what changes in it after the last call is
   * not in this snapshot. The harness places a person's terminal commands by it.
   */
  readonly onTaken?: () => void;
}

/** The verifier to run: its command line and timeout, and what only it may see and write. */
export interface VerifierRequest {
  readonly command: string;
  readonly timeoutMs: number;
  /**
   * Files written fresh into `filesDir` just before it runs, after every process of the
   * agent's is killed, and removed after it (Harbor's tests/); relative path → bytes.
   */
  readonly files?: Readonly<Record<string, Uint8Array>>;
  readonly filesDir?: string;
  /** A folder emptied and given to the verifier; the reward files it writes there come back in {@link VerifierRun.rewardFiles}. */
  readonly rewardDir?: string;
}

/** How a verifier ran over its own channel, and what it returned. */
export interface VerifierRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /**
   * `exec`: its own process, out of the agent's reach; `helper`: run by the sandbox's isolated
   * helper over its own channel, as out of reach; `session`: through the sandbox's exec.
   */
  readonly channel: 'exec' | 'helper' | 'session';
  /** The uid it ran as. */
  readonly uid: number;
  /** Processes of the agent's user killed before it ran. */
  readonly killed: number;
  /** The reward files (reward.json, reward.txt) found in the request's `rewardDir` after it ran. */
  readonly rewardFiles?: readonly RewardFile[];
  /** Why the verifier's files or folders could not be put in place (then it did not run). */
  readonly stagingError?: string;
}

/** An agent program to run inside the sandbox (`sandbox:` agents), reaching the host through a bridge. */
export interface InsideAgentRequest {
  /** Run as `sh -c COMMAND` by the sandbox user in /workspace, in a session of its own. */
  readonly command: string;
  /** Its whole environment; `@PORT@` in a value becomes the port the bridge listens on inside. */
  readonly env: Readonly<Record<string, string>>;
  /** Files written into `env.HOME` (relative paths) as the sandbox user before it starts. */
  readonly homeFiles: Readonly<Record<string, string>>;
  /** Empty HOME first (a restarted agent starts without the memory of its earlier run). */
  readonly clearHome: boolean;
  /** The hash of the agent files the sandbox was created with (checked inside), or null. */
  readonly agentFilesHash: string | null;
  /**
   * The port to listen on inside (the endpoint's own port on the host, so a URL, and the
   * Host header the endpoint checks, are the same on both sides); 0 for any.
   */
  readonly port: number;
  /** Opens the host end of one connection the agent made to 127.0.0.1:PORT inside. */
  readonly connect: () => Duplex;
  /** Output of the agent as it is written. */
  readonly onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
}

/** How an agent inside the sandbox ended. */
export interface InsideAgentExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** A running agent inside the sandbox. */
export interface InsideAgentRun {
  /** The port the bridge listens on inside the sandbox (127.0.0.1). */
  readonly port: number;
  readonly exited: Promise<InsideAgentExit>;
  /** Stops the agent's session (TERM, then KILL) and closes the bridge. */
  stop(): Promise<void>;
}

/** How much a restore re-hashes inside the container: the touched files, or every file. */
export type VerifyMode = 'touched' | 'full';

/** What a restore did. */
export interface RestoreInfo {
  readonly treeHash: string;
  readonly written: number;
  readonly removed: number;
  readonly durationMs: number;
}

/**
 * One isolated sandbox for one episode. Operations never throw for what happens inside
 * the sandbox: a tool-level failure is a result with an error code. They reject only when
 * the sandbox is unusable (lost container, Docker unreachable), with an {@link SandboxFailure}.
 */
export interface Sandbox {
  /** Container id (or an in-memory id). */
  readonly id: string;
  readonly config: SandboxConfig;
  /** Backend name, e.g. `docker` or `memory`. */
  readonly backend: string;
  /**
   * Why this sandbox's limits do not hold (an engine rootless on cgroup v1), set only when the
   * user allowed such an engine explicitly; an episode's header records it as `unenforced_limits`.
   */
  readonly unenforcedLimits?: string;
  /**
   * How the sandbox's helper process talks to the host (doctor, selftest and bench say it);
   * absent where no helper runs (memory). Callers ask this, never the sandbox's class.
   */
  readonly channel?: HelperChannel;
  /** Whether the helper runs as another user than the commands (its channel out of their reach); absent without a helper. */
  readonly isolated?: boolean;
  /** The OCI runtime the sandbox runs on (`runsc` for gVisor); null when the engine does not say, absent off an engine. */
  readonly runtime?: string | null;
  /**
   * Whether a shell started sealed (real and effective gid apart at exec) is out of reach of the
   * agent's processes here: false on a host with fs.suid_dumpable = 1 (the helper says so in its
   * hello) and on gVisor, which leaves every shell dumpable. Absent without a helper.
   */
  readonly sealed?: boolean;

  /** Runs a command line; `cd` and exported variables persist between calls unless `fresh`. */
  exec(request: ExecRequest): Promise<ToolResult>;
  /** Reads a file (relative paths against /workspace). */
  readFile(path: string): Promise<Result<Uint8Array, ToolError>>;
  /** Writes a file, creating parent directories. */
  writeFile(path: string, content: Uint8Array, mode?: number): Promise<Result<{ bytes: number }, ToolError>>;
  /** Lists a directory. */
  listDir(path: string): Promise<Result<DirEntry[], ToolError>>;

  /** The session's cwd and exported environment. */
  sessionState(): Promise<SessionState>;
  /** Replaces the session's cwd and exported environment (rollback). */
  setSessionState(state: SessionState): Promise<void>;

  /** The image's own files at the working directory, which the sandbox puts there at start and reset; absent or null: none. */
  workspaceSeed?(): WorkspaceSeed | null;
  /** Captures /workspace into `store`, sending only blobs it lacks. */
  snapshot(store: SnapshotStore, options?: SnapshotOptions): Promise<SnapshotInfo>;
  /** Restores /workspace to a manifest; the tree hash is recomputed inside and a mismatch rejects. */
  restore(store: SnapshotStore, manifest: SnapshotManifest, verify?: VerifyMode): Promise<RestoreInfo>;
  /**
   * Sends blobs ahead of the next restore, while the host still reads the rest (a folder
   * import): `blobs` [hash, size] in payload order, each whole. The next restore whose
   * manifest names them does not send them again; it still checks every byte inside against
   * its hash, and sends them from the store when the helper lost them (a restart). Optional:
   * without it the restore sends everything from the store. `hashedHere`: each blob's hash
   * was computed in this process from these very bytes (a folder import's own reads, never
   * a store's): the helper takes them by their names instead of hashing them again (the
   * channel is the host's alone; the sandbox is what is not trusted).
   */
  stageAhead?(
    blobs: readonly (readonly [string, number])[],
    payload: Uint8Array,
    hashedHere?: boolean,
  ): Promise<void>;

  /**
   * Runs the task's verifier over a channel the agent's processes cannot touch (after they
   * are all killed). Backends without one leave it out and the verifier runs as a fresh exec.
   */
  runVerifier?(request: VerifierRequest): Promise<VerifierRun>;
  /**
   * Starts the verifier's own channel ahead of {@link runVerifier} (off the episode's end);
   * optional. `ownDirs`: whether the verifier has files or a reward folder (some channels
   * take only plain verifiers); left out, as the last verification had.
   */
  prepareVerifier?(needs?: { readonly ownDirs: boolean }): void;
  /** Lets a channel started ahead go (a task without a verifier) and waits until it is gone; optional. */
  dropVerifier?(): Promise<void>;

  /**
   * Starts an agent program inside the sandbox with a bridge from 127.0.0.1:PORT inside to
   * the host (`sandbox:` agents). Backends that cannot leave it out.
   */
  startAgent?(request: InsideAgentRequest): Promise<InsideAgentRun>;

  /**
   * Who besides a person's terminal command could write files now (the helper's `writers`):
   * the agent's processes alive but `exclude` (the person's shell, by its pid in the sandbox)
   * and its children, and a count of the file-changing operations run so far. Absent where no
   * helper runs (memory: no terminal either).
   */
  writers?(exclude?: number): Promise<Writers>;

  /**
   * Kills every process but the helper's own and empties every writable place outside
   * /workspace (/tmp, $HOME, /dev/shm, message queues, IPC objects): rollback, release.
   */
  killStrays(): Promise<void>;
  /** Back to the clean state: empty workspace, no strays, fresh session. Rejects if it cannot. */
  reset(): Promise<void>;
  /** Removes the sandbox; always resolves, or rejects with why it could not. */
  destroy(): Promise<void>;
  /** Keeps the sandbox past this process (`run --keep`), safe from orphan sweeps; absent where nothing outlives the process (memory). */
  keep?(): Promise<void>;
}

/** Who besides a person's terminal command could write files at one moment ({@link Sandbox.writers}). */
export interface Writers {
  /** File-changing operations run so far (tool calls, restores): compared, never read alone; a restarted helper counts again from 0. */
  readonly changes: number;
  /** The agent's processes alive: pid (in the sandbox), the name it goes by (its own to set) and its parent's pid. */
  readonly running: readonly (readonly [number, string, number])[];
  /** How many more are alive than `running` names. */
  readonly more: number;
}

/** Creates sandboxes of one backend. */
export interface SandboxProvider {
  readonly backend: string;
  create(config: SandboxConfig): Promise<Sandbox>;
  /** Lets go of the backend's connection and what it still owns (Docker); absent when there is nothing to let go. */
  close?(): Promise<void>;
  /**
   * Removes the copies of agents' files (per content) that no sandbox uses; absent when the
   * backend keeps none.
   */
  pruneAgentVolumes?(dryRun: boolean): Promise<{ readonly removed: string[]; readonly in_use: string[] }>;
  /**
   * Removes the sandbox runtimes of other stepbox builds that no sandbox uses; absent when
   * the backend keeps none.
   */
  pruneRuntimeVolumes?(dryRun: boolean): Promise<{ readonly removed: string[]; readonly in_use: string[] }>;
  /**
   * An interactive TTY shell in one of its sandboxes, over the backend's own connection; absent
   * where sandboxes have no terminal (memory). Callers ask this, never the provider's class.
   */
  terminal?(sandboxId: string, options: SandboxTerminalOptions): Promise<Terminal>;
  /** The live resource use of one of its sandboxes; absent where there is none to read (memory). */
  stats?(sandboxId: string, taskMemoryBytes: number): Promise<StatsStream>;
  /**
   * `task` with its image made ready on the backend's engine: its `sandbox.build` built (the
   * image named in the returned task), then the image pulled if the engine lacks it (with
   * progress); absent where the backend has no images to make (memory).
   */
  taskImage?<T extends { readonly sandbox: BuildableSandbox }>(
    task: T,
    baseDir: string,
    progress: (p: BuildProgress | PullProgress) => void,
  ): Promise<T>;
}

/** Options of a sandbox's terminal: the terminal's, less the client (the provider's own is used). */
export type SandboxTerminalOptions = Omit<TerminalOptions, 'docker'>;

/**
 * Where an episode gets its sandbox from and gives it back to: the one way the harness,
 * the batch runner, the case runner and the services obtain sandboxes. Cold starts
 * ({@link coldSupply}), the warm pool (a {@link WarmPool} is one), recycling between a
 * batch's episodes ({@link poolSupply}) and per-task reuse ({@link TaskSandboxes}) are
 * supplies or wrappers of one (`sandbox-supply.ts`).
 */
export interface SandboxSupply {
  acquire(config: SandboxConfig): Promise<Sandbox>;
  /** Takes a sandbox back when its episode is done with it (destroy, reset-and-keep, …). */
  release(sandbox: Sandbox): Promise<void>;
  /** Gives back whatever the supply still holds. */
  close?(): Promise<void>;
  /**
   * Defers background work that would compete with setting up sandboxes just acquired (a
   * warm pool's refill) until the returned function is called.
   */
  holdRefills?(): () => void;
}

/** Why a sandbox operation could not run at all. */
export class SandboxFailure extends Error {
  constructor(
    readonly code:
      | 'sandbox_lost'
      | 'docker_unreachable'
      | 'limits_unenforced'
      | 'image_missing'
      | 'network_unavailable'
      | 'runtime_unavailable'
      | 'sandbox_failed'
      | 'restore_failed'
      | 'snapshot_failed'
      | 'verify_failed'
      // The task asks for what the engine cannot give (more CPUs than it has): the user's input.
      | 'invalid_task',
    message: string,
    /** The command or step that fixes it, when the failure knows a more precise one than its code's default. */
    readonly fix?: string,
  ) {
    super(message);
    this.name = 'SandboxFailure';
  }
}
