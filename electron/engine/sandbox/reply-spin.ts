import { readFileSync, readSync } from 'node:fs';
import type { Socket } from 'node:net';
import { availableParallelism, cpus } from 'node:os';

/**
 * Busy-polling the helper's socket for a tool call's reply, for a bounded time, before the
 * host goes to sleep on it. A call's overhead over its command is mostly two wake-ups of
 * idle vCPUs (the helper's on the request, the host's on the reply; helper.py's note on
 * where a call's time goes): spinning here takes the host's wake-up and Node's stream code
 * around the read off the reply's path. It costs CPU: one core busy for up to the budget on
 * every call that spins (a command that runs longer pays the ordinary wake-up after it), so
 * it is done only while no other helper request of this process is in flight (a batch, a
 * restore, a second episode: they need the event loop), only while the machine has a core
 * to spare ({@link machineIdle}: the CPU time of other processes over the last second left a
 * core idle; on a loaded 2-core host the spinning core is taken from the helper and the
 * command, and a call took 2-3x longer), and is off with a budget of 0.
 */
export interface ReplySpin {
  /** How long one call may spin, in ms. */
  readonly budgetMs: number;
  /** Whether a call may spin now (the machine has a core to spare). */
  allowed(): boolean;
  /** Reads what the socket holds now into `into`: the byte count, 0 at its end, null when nothing is there yet. */
  read(into: Buffer): number | null;
}

/** The environment variable that sets the spin budget in ms (`0` turns busy-polling off). */
export const HELPER_SPIN_ENV = 'STEPBOX_HELPER_SPIN_MS';

/**
 * The default budget: a paced `execute_shell true` takes ~2.5-2.8 ms inside on the 2-core dev
 * VM (bash woken, sourcing, running, dumping, exiting), and its reply leaves the helper ~0.4 ms
 * more after the request's write (the helper's wake-up and its work before and after): ~3.2 ms,
 * which a budget of 3 ms missed (a miss pauses spinning for 8 calls, so it hardly ever spun).
 * 5 ms catches a short command's reply with room for a slower machine; a longer command pays
 * it on one call in 9 while such commands run in a row (see {@link SpinBackoff}).
 */
export const DEFAULT_SPIN_MS = 5;

/** The spin budget the environment asks for ({@link HELPER_SPIN_ENV}), else {@link DEFAULT_SPIN_MS}. */
export function spinBudgetMs(env: NodeJS.ProcessEnv): number {
  const raw = env[HELPER_SPIN_ENV];
  if (raw === undefined || raw === '') return DEFAULT_SPIN_MS;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? Math.min(n, 50) : DEFAULT_SPIN_MS;
}

/**
 * A spin over `socket`'s own file descriptor, read with non-blocking reads on this thread
 * (libuv reads it too, on the same thread, so the bytes keep their order); undefined when
 * the budget is 0 or the socket has no descriptor to read (Windows named pipes).
 */
export function socketSpin(socket: Socket, budgetMs: number): ReplySpin | undefined {
  // Node keeps the descriptor on the socket's handle (a Pipe for a unix socket).
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  if (budgetMs <= 0 || typeof fd !== 'number' || fd < 0) return undefined;
  return {
    budgetMs,
    allowed: machineIdle,
    read(into) {
      try {
        return readSync(fd, into, 0, into.length, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EWOULDBLOCK') return null;
        return 0; // anything else: stop spinning; libuv's own read meets it and closes the client
      }
    },
  };
}

/** The most tool calls in a row that skip the spin after misses (1 in 9 spins while every reply outlasts the budget). */
export const MAX_SPIN_SKIPS = 8;

/**
 * Which tool calls spin, after replies that outlasted the budget. A miss costs a core for the
 * whole budget and gains nothing, so a run of longer commands (a test suite called again and
 * again) must not pay it on every call; but one longer command (a `python3 -c`, a build) says
 * little about the next, which is as often a `cat` or an `ls`. So the first miss skips one
 * call, each further miss in a row doubles that, up to {@link MAX_SPIN_SKIPS}, and a reply
 * caught starts over. (It used to skip 8 after any miss: one long command between short ones
 * left the next 8 short calls to the ordinary wake-up, and in the bench's rounds, each opened
 * by a python3 timing command, most paced calls never spun.)
 */
export class SpinBackoff {
  /** Calls left that do not spin. */
  private skips = 0;
  /** Misses in a row. */
  private misses = 0;

  /** Whether this call may spin; a call that may not is counted off the skips. */
  take(): boolean {
    if (this.skips === 0) return true;
    this.skips--;
    return false;
  }

  /** The spin's outcome: whether it caught the reply within the budget. */
  spun(caught: boolean): void {
    if (caught) {
      this.misses = 0;
      return;
    }
    this.misses++;
    this.skips = Math.min(MAX_SPIN_SKIPS, 2 ** (this.misses - 1));
  }
}

/** How often the machine's CPU counters are read again (a read per call would be waste). */
const LOAD_CHECK_MS = 1000;
let sample: CpuMark | undefined;
let idle = false;

/** Busy and total CPU time of all CPUs so far, in the OS's ticks: /proc/stat's first line on Linux (one small read), else os.cpus(). */
function cpuTicks(): { busy: number; total: number } {
  if (process.platform === 'linux') {
    try {
      const line = readFileSync('/proc/stat', 'latin1').slice(0, 256).split('\n', 1)[0];
      // cpu  user nice system idle iowait irq softirq steal …: idle and iowait are the idle time.
      const t = line.trim().split(/\s+/).slice(1, 9).map(Number);
      if (t.length === 8 && t.every(Number.isFinite)) {
        const total = t.reduce((a, b) => a + b, 0);
        return { busy: total - t[3] - t[4], total };
      }
    } catch {
      // fall through to os.cpus()
    }
  }
  let busy = 0;
  let total = 0;
  for (const c of cpus()) {
    const all = c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
    total += all;
    busy += all - c.times.idle;
  }
  return { busy, total };
}

/** This process's own CPU time so far (all its threads), in ms. */
function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** One window of the machine's CPU use, as shares of all its CPUs' time. */
export interface CpuWindow {
  readonly cores: number;
  /** Share of all CPUs' time that was busy (0..1), this process included. */
  readonly busyShare: number;
  /** Share of all CPUs' time that this process used (0..1). */
  readonly selfShare: number;
}

/**
 * Whether a window leaves a core to spin on: the CPU time of every other process (the
 * machine's busy time less this process's own) left at least one core's worth idle. This
 * process's own time does not count against it: the core a tool call spins on is this
 * process's main thread, which does nothing else while it spins, and its spinning is most of
 * its CPU time; counted, the few ms a paced call spins counted as load against the spin itself. Every other
 * process's does count — other work on the machine, and the sandbox's own helper and shells
 * that the call waits for: on a host whose cores are taken by other work the spinning core is
 * taken from them, and a call took 2-3x longer.
 */
export function coreToSpare(w: CpuWindow): boolean {
  const othersShare = Math.max(0, w.busyShare - w.selfShare);
  return w.cores > 1 && (1 - othersShare) * w.cores >= 1;
}

/** The machine's and this process's CPU counters at one moment (see {@link cpuWindowSince}). */
export interface CpuMark {
  readonly at: number;
  readonly busy: number;
  readonly total: number;
  readonly self: number;
}

/** The CPU counters now. */
export function cpuMark(): CpuMark {
  return { at: performance.now(), ...cpuTicks(), self: selfCpuMs() };
}

/** The machine's CPU use from `from` to `to` (null when no tick passed between them). */
export function cpuWindowSince(from: CpuMark, to: CpuMark = cpuMark()): CpuWindow | null {
  if (to.total <= from.total || to.at <= from.at) return null;
  const cores = availableParallelism();
  return {
    cores,
    busyShare: (to.busy - from.busy) / (to.total - from.total),
    selfShare: Math.min(1, (to.self - from.self) / ((to.at - from.at) * cores)),
  };
}

/**
 * Whether the machine has a core to spare for spinning ({@link coreToSpare}) over the last
 * window (from the previous read, at least a second back). Busy-polling pays only where the
 * core it takes would otherwise sleep; on a machine with every core taken it delays the very
 * reply it waits for. (It used to ask the 1-minute load average, under half the cores: that
 * average still carried the bench's own container starts a minute later, so on a quiet
 * machine the spin never ran where it was measured.)
 */
export function machineIdle(): boolean {
  const now = performance.now();
  if (sample && now - sample.at < LOAD_CHECK_MS) return idle;
  const mark = cpuMark();
  const window = sample && cpuWindowSince(sample, mark);
  if (window) idle = coreToSpare(window);
  sample = mark;
  return idle;
}
