import type { OtherWriters } from '../../../shared/trace-events.js';
import type { Writers } from '../sandbox/sandbox.js';
import { withTimeout } from '../tools/tool-executor.js';

/** How long a person's line waits for the sandbox to say who else runs before it runs anyway. */
export const WRITERS_WAIT_MS = 1000;

/** Asks the sandbox who besides the person's shell (`exclude`, its pid there) could write now. */
export type WritersProbe = (exclude?: number) => Promise<Writers>;

/**
 * What else could have written the files a person's terminal command is credited with.
 *
 * The terminal names the workspace files written between a command's start and its report,
 * by time: a process of the agent's still running (a server a tool call left, an agent
 * program inside the sandbox), or a tool call run meanwhile, could write there too, and its
 * files were then marked as the person's. So the sandbox is asked before each line the
 * person runs is sent to the shell, and again at its report: a process of the agent's alive
 * at either moment, or a file-changing operation counted between them, is named beside the
 * files. A process started in between was started by one of those (named) or by the
 * sandbox's helper (counted), so nothing that could write goes unnamed. The window stays open
 * across empty lines and lines typed ahead, and closes at a prompt with no line pending.
 */
export class OtherWritersWatch {
  /** Each process seen, by pid: its name and its parent's pid. */
  private readonly seen = new Map<number, { name: string; ppid: number }>();
  private more = 0;
  /** The operation count when the window opened; null while closed. */
  private base: number | null = null;
  private episode = false;
  private unknown: string | undefined;

  constructor(
    private readonly probe: WritersProbe,
    private readonly wait = WRITERS_WAIT_MS,
  ) {}

  /** Before a line runs: who is alive now (opens the window, or widens it). */
  async beforeRun(shell: number | undefined): Promise<void> {
    const now = await this.ask(shell);
    if (typeof now === 'string') {
      this.unknown ??= now;
      return;
    }
    this.add(now);
    this.base ??= now.changes;
  }

  /**
   * At a command's report: what else could have written its files, or undefined when nothing
   * could. `pending`: lines run after it are still to be reported; their window goes on from here.
   */
  async atReport(shell: number | undefined, pending: boolean): Promise<OtherWriters | undefined> {
    const now = await this.ask(shell);
    if (typeof now === 'string') this.unknown ??= now;
    else {
      this.add(now);
      if (this.base === null) this.unknown ??= 'the sandbox was not asked before the command ran';
      else if (now.changes !== this.base) this.episode = true;
    }
    if (shell !== undefined) this.forgetTree(shell);
    const processes = [...this.seen].map(([pid, p]) => ({ pid, name: p.name }));
    const found: OtherWriters = {
      processes,
      more: this.more,
      episode: this.episode,
      ...(this.unknown !== undefined ? { unknown: this.unknown } : {}),
    };
    this.close();
    if (pending && typeof now !== 'string') {
      this.add(now);
      this.base = now.changes;
    }
    return processes.length || found.more || found.episode || found.unknown !== undefined ? found : undefined;
  }

  /** A prompt with no line pending: the next line opens a window of its own. */
  close(): void {
    this.seen.clear();
    this.more = 0;
    this.base = null;
    this.episode = false;
    this.unknown = undefined;
  }

  private add(w: Writers): void {
    for (const [pid, name, ppid] of w.running)
      if (this.seen.size < 64 || this.seen.has(pid)) this.seen.set(pid, { name: printable(name), ppid });
    this.more = Math.max(this.more, w.more);
  }

  /**
   * Leaves out the person's shell and what it started, among the processes seen: a line sent
   * before the shell's first prompt (which says its pid) was asked about without it, and the
   * shell's own subshells (its prompt's) were alive then.
   */
  private forgetTree(shell: number): void {
    const gone = new Set([shell]);
    for (let grew = true; grew;) {
      grew = false;
      for (const [pid, p] of this.seen)
        if (!gone.has(pid) && gone.has(p.ppid)) {
          gone.add(pid);
          grew = true;
        }
    }
    for (const pid of gone) this.seen.delete(pid);
  }

  private ask(shell: number | undefined): Promise<Writers | string> {
    const answer = this.probe(shell).catch((e: unknown) =>
      `the sandbox could not say which processes ran (${e instanceof Error ? e.message : String(e)})`.slice(
        0,
        500,
      ),
    );
    return withTimeout(answer, this.wait, () => `the sandbox did not answer in ${this.wait} ms`);
  }
}

/** A process's own name as shown: control characters out, at most 64 characters. */
function printable(name: string): string {
  // eslint-disable-next-line no-control-regex
  return name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?').slice(0, 64) || '?';
}
