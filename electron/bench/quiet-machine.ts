import { cpus } from 'node:os';

/** How busy the machine was when a section started, and how long the bench waited for that. */
export interface QuietStart {
  readonly section: string;
  /** Share of all CPUs busy over the last window before the section started, in percent. */
  readonly busy_pct: number;
  readonly waited_ms: number;
  /** False when the machine stayed busier than the bar for the whole wait (measured anyway). */
  readonly quiet: boolean;
}

/** Busy and total CPU time of all CPUs so far (ms, from the OS's counters: Linux, macOS, Windows). */
function cpuTimes(): { busy: number; total: number } {
  let busy = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    const all = t.user + t.nice + t.sys + t.idle + t.irq;
    total += all;
    busy += all - t.idle;
  }
  return { busy, total };
}

/**
 * Waits until the machine is quiet — at most `busyBelow` of its CPUs busy over a `windowMs`
 * window — for at most `maxMs`. A section measured while the previous one still winds down
 * (containers being removed, a browser closing, the engine's collector) inherited its load:
 * on a 2-core machine the UI's quiet first render read 805 ms after the other sections and
 * 697–716 ms run alone. Each section starts on a settled machine; how settled is reported.
 */
export async function untilQuiet(
  section: string,
  { busyBelow = 0.15, windowMs = 500, maxMs = 15_000 } = {},
): Promise<QuietStart> {
  const t0 = performance.now();
  let busy = 1;
  for (;;) {
    const a = cpuTimes();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const b = cpuTimes();
    busy = b.total > a.total ? (b.busy - a.busy) / (b.total - a.total) : 0;
    const waited = performance.now() - t0;
    if (busy < busyBelow || waited >= maxMs)
      return {
        section,
        busy_pct: Math.round(busy * 1000) / 10,
        waited_ms: Math.round(waited),
        quiet: busy < busyBelow,
      };
  }
}
