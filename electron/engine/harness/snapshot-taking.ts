import type { NewTraceEvent } from '../trace/trace-store.js';

/**
 * A person's terminal commands around one snapshot while it is taken. Snapshot k is taken
 * when the sandbox has read the workspace ({@link SnapshotTaking.read}, again if the
 * capture starts over), and written as an event later (blobs stored, the session asked,
 * the step committed). A command reported in between ran after the read: its files are
 * not in snapshot k, so it is step k's, written right after that event (readers cut a step
 * at its snapshot event). One a later read took in is the step before's after all.
 *
 * A command the shell reported before the read may reach the harness only after it: its
 * terminal first asks the sandbox who else could have written its files (OtherWritersWatch,
 * up to WRITERS_WAIT_MS, longer on a loaded machine). It ran before the read, so it is the step
 * before's: the reports in flight at the read are drained into `before`, and the snapshot's
 * event waits for them ({@link SnapshotTaking.drained}). Which side of the read a report falls
 * on is told by when it reached the engine (`reportedAt`), not by whether one is draining: a
 * command run after the read, reported while another terminal's earlier report was still
 * draining, was put at the step before.
 */
export class SnapshotTaking {
  /** Reported before the last read, written before the snapshot event at `earlier`. */
  private before: NewTraceEvent[] = [];
  /** Reported since the last read, written after the snapshot event at `step`. */
  private after: NewTraceEvent[] = [];
  private wasRead = false;
  private over = false;
  /** The reports in flight at the last read, while they are; null when none is. */
  private draining: Promise<void> | null = null;
  private reads = 0;
  /** When the workspace was last read (`performance.now()`, the clock of HumanCommand.reportedAt). */
  private readAt = -Infinity;

  /**
   * @param step the step whose snapshot is taken
   * @param earlier the step a command belongs to until the workspace is read (the last snapshot's)
   */
  constructor(
    readonly step: number,
    private readonly earlier: number,
  ) {}

  /**
   * The workspace has been read (SnapshotOptions.onTaken): what was held so far is in this
   * snapshot, and so is what `inFlight` (settling once the commands reported before now are
   * recorded; null when none is) brings.
   */
  read(inFlight: Promise<void> | null = null): void {
    if (this.over) return;
    this.before.push(...this.after.map((e) => ({ ...e, step: this.earlier })));
    this.after = [];
    this.wasRead = true;
    this.readAt = performance.now();
    const read = ++this.reads;
    this.draining =
      inFlight
        ?.catch(() => undefined)
        .then(() => {
          if (this.reads === read) this.draining = null;
        }) ?? null;
  }

  /** Settles once the commands reported before the last read are held (at once when none was in flight). */
  async drained(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /**
   * Whether a command recorded now was reported before the last read: by `reportedAt` when its
   * terminal said it, else (a caller that does not know) while the reports in flight drain.
   */
  private reportedBefore(reportedAt: number | undefined): boolean {
    return reportedAt === undefined ? this.draining !== null : reportedAt < this.readAt;
  }

  /** The step a command recorded now (reported at `reportedAt`) belongs to. */
  commandStep(reportedAt?: number): number {
    return this.wasRead && !this.reportedBefore(reportedAt) ? this.step : this.earlier;
  }

  /** Holds a command recorded after the read (true); false before it: the caller writes it now. */
  hold(event: NewTraceEvent, reportedAt?: number): boolean {
    if (!this.wasRead || this.over) return false;
    if (this.reportedBefore(reportedAt)) this.before.push({ ...event, step: this.earlier });
    else this.after.push(event);
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
