import type { TraceEvent, HeaderEvent, EndEvent } from '../../../shared/trace-events.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';

/**
 * The header fields a caller gives `createEpisode`/`createBranch`; the store fills in
 * `schema`, `episode`, `branch` (and the writer's process identity). Spelled out because
 * `Omit` over the header's loose (index-signature) type would erase every known key.
 */
export interface HeaderFields {
  readonly task: Record<string, unknown>;
  readonly task_path: string | null;
  readonly agent: { readonly spec: string; readonly kind: string; readonly [extra: string]: unknown };
  readonly image: string;
  readonly created: number;
  readonly parent_branch?: string | null;
  readonly fork_step?: number | null;
  readonly [extra: string]: unknown;
}

/** An event before the writer numbers and stamps it. */
export type NewTraceEvent = TraceEvent extends infer E
  ? E extends TraceEvent
    ? Omit<E, 'seq' | 't'> & { t?: number }
    : never
  : never;

/**
 * Appends events to one branch's trace file: append-only JSONL, each line written
 * whole; `commitStep` flushes and fsyncs (called once per step, after its snapshot).
 */
export interface TraceWriter {
  readonly path: string;
  /** Numbers, stamps and appends an event; returns it as written. */
  append(event: NewTraceEvent): TraceEvent;
  /** Flushes and fsyncs everything appended so far; returns the fsync time in ms. */
  commitStep(): number;
  /** {@link commitStep} without holding the event loop: resolves with the fsync time once durable. */
  commit(): Promise<number>;
  /** Appends `end`, fsyncs and compresses the file (gzip). */
  close(end: Omit<EndEvent, 'seq' | 't' | 'type' | 'source' | 'step'> & { step: number }): Promise<void>;
}

/** A trace as read back: events up to the last complete line, and what was wrong. */
export interface ReadTrace {
  readonly header: HeaderEvent;
  readonly events: readonly TraceEvent[];
  /** True when a torn last line was ignored. */
  readonly torn: boolean;
  readonly warnings: readonly string[];
  /** The end event, or null when the branch was never closed. */
  readonly end: EndEvent | null;
  /** Events of an incomplete trailing step (no snapshot yet): left out of `events`, kept for viewing. */
  readonly partial?: readonly TraceEvent[];
  /** The highest step with a snapshot (-1 when not even setup completed). */
  readonly lastCompleteStep?: number;
}

/** One branch of an episode as the store lists it. */
export interface BranchInfo {
  readonly episode: string;
  readonly branch: string;
  readonly parentBranch: string | null;
  readonly forkStep: number | null;
  readonly tracePath: string;
}

/**
 * The episode store under $STEPBOX_HOME (default ~/.stepbox): one folder per episode
 * holding branch traces, the snapshot store and metadata.
 */
export interface EpisodeStore {
  readonly home: string;
  /** A fresh episode id, to record (a batch slot) before the episode exists. */
  newEpisodeId(): string;
  /** Creates an episode folder (with id `id`, from {@link newEpisodeId}, when given) and its main branch's writer. */
  createEpisode(
    header: HeaderFields,
    id?: string,
  ): {
    episode: string;
    branch: string;
    writer: TraceWriter;
  };
  /** Creates a branch of an episode (a fork at `forkStep`). */
  createBranch(
    episode: string,
    parentBranch: string,
    forkStep: number,
    header: HeaderFields,
  ): { branch: string; writer: TraceWriter };
  /** Resolves an episode or branch id (or unique prefix) to its branch. */
  resolve(id: string): BranchInfo;
  readTrace(branch: BranchInfo): ReadTrace;
  /** The episode's content-addressed snapshot store. */
  snapshots(episode: string): SnapshotStore;
  /** Appends `end {status: interrupted}` to every unclosed trace whose writer process is gone. */
  markInterrupted(): number;
  /** True when the episode came from a bundle rather than being recorded by this store. */
  imported(episode: string): boolean;
}
