import type { NewTraceEvent } from '../trace/trace-store.js';

/**
 * A person's terminal commands around one snapshot while it is taken. Snapshot k is taken
 * when the sandbox has read the workspace ({@link SnapshotTaking.read}, again if the
 * capture starts over), and written as an event later (blobs stored, the session asked,
 * the step committed). A command reported in between ran after the read: its files are
 * not in snapshot k, so it is step k's, written right after that event (readers cut a step
 * at its snapshot event). One a later read took in is the step before's after all.
 */
export class SnapshotTaking {
  /** Reported before the last read, written before the snapshot event at `earlier`. */
  private before: NewTraceEvent[] = [];
  /** Reported since the last read, written after the snapshot event at `step`. */
  private after: NewTraceEvent[] = [];
  private wasRead = false;
  private over = false;

  /**
   * @param step the step whose snapshot is taken
   * @param earlier the step a command belongs to until the workspace is read (the last snapshot's)
   */
  constructor(
    readonly step: number,
    private readonly earlier: number,
  ) {}

  /** The workspace has been read (SnapshotOptions.onTaken): what was held so far is in this snapshot. */
  read(): void {
    if (this.over) return;
    this.before.push(...this.after.map((e) => ({ ...e, step: this.earlier })));
    this.after = [];
    this.wasRead = true;
  }

  /** The step a command reported now belongs to. */
  commandStep(): number {
    return this.wasRead ? this.step : this.earlier;
  }

  /** Holds a command reported after the read (true); false before it: the caller writes it now. */
  hold(event: NewTraceEvent): boolean {
    if (!this.wasRead || this.over) return false;
    this.after.push(event);
    return true;
  }

  /** The snapshot is recorded: what goes before its event and what after; nothing is held from now. */
  settle(): { before: NewTraceEvent[]; after: NewTraceEvent[] } {
    this.over = true;
    return { before: this.before, after: this.after };
  }

  /** The snapshot failed (the step is not recorded): everything held, at the step before. */
  fail(): NewTraceEvent[] {
    this.over = true;
    return [...this.before, ...this.after.map((e) => ({ ...e, step: this.earlier }))];
  }
}
