import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who a process is, precisely enough for a later process to tell whether it is gone: a
 * pid alone is not enough (pids are reused, and a reboot resets them). Recorded as a trace
 * header's `writer` and, as JSON, in a container's owner label.
 */
export interface ProcessIdentity {
  readonly pid: number;
  readonly host: string;
  /** Linux's per-boot random id; null elsewhere. */
  readonly boot_id: string | null;
  /** The process's start time as the OS reports it (Linux: clock ticks since boot; macOS: `ps` lstart); null if unknown. */
  readonly start_time: string | null;
}

/**
 * How to judge a process recorded on another host, which this machine cannot see:
 * `gone` when only this host can be using what it left (a trace in the local store),
 * `alive` when the other host may well still be using it (a container on a shared remote engine).
 */
export type ForeignHostRule = 'gone' | 'alive';

function linuxBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null; // not Linux, or /proc hidden: fall back to pid + start time
  }
}

/** The start time of `pid`, or null when the process does not exist or the OS does not say. */
export function processStartTime(pid: number): string | null {
  if (process.platform === 'linux') {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Field 22 (starttime); the command name (field 2) is in parentheses and may hold spaces.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return rest[19] ?? null;
    } catch {
      return null; // no such process
    }
  }
  if (process.platform === 'win32') return null;
  try {
    const out = execFileSync('ps', ['-o', 'lstart=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return out || null;
  } catch {
    return null; // ps exits 1 when the pid does not exist
  }
}

let current: ProcessIdentity | null = null;

/** This process's identity (computed once). */
export function currentProcessIdentity(): ProcessIdentity {
  current ??= {
    pid: process.pid,
    host: hostname(),
    boot_id: linuxBootId(),
    start_time: processStartTime(process.pid),
  };
  return current;
}

/** True when a process with this pid exists (possibly someone else's). */
export function pidExists(pid: number): boolean {
  // 0 and negatives name process groups (kill(0, 0) asks about our own: always "alive"), and a
  // pid read from a file or a folder's name may be anything: only a real pid can exist.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when the process `id` describes has ended, judged from this machine: another boot,
 * no such pid, or the pid now belongs to a process started at another time. A process of
 * another host is judged by `foreignHost`.
 */
export function isProcessGone(id: ProcessIdentity, foreignHost: ForeignHostRule): boolean {
  const me = currentProcessIdentity();
  if (id.host !== me.host) return foreignHost === 'gone';
  if (id.boot_id !== null && me.boot_id !== null && id.boot_id !== me.boot_id) return true;
  if (id.pid === me.pid) return id.start_time !== me.start_time;
  if (!pidExists(id.pid)) return true;
  const start = processStartTime(id.pid);
  return id.start_time !== null && start !== null && start !== id.start_time;
}
