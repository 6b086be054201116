import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { logger } from '../log.js';
import type { DockerEngine, LabelledContainer } from './client.js';
import { KEPT_NAME_PREFIX, OWNER_LABEL, STEPBOX_LABEL } from './container-spec.js';

const log = logger('docker');

/** The process that owns a container: if it is gone, the container is an orphan. */
export interface Owner {
  readonly host: string;
  /** /proc/sys/kernel/random/boot_id of the owner's machine (a reboot ends every owner). */
  readonly boot_id: string;
  readonly pid: number;
  /** Start time of `pid` in clock ticks since boot (field 22 of /proc/PID/stat): tells a reused pid apart. */
  readonly start: number;
}

function readBootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    // Not Linux (no /proc): pid liveness alone decides, see ownerGone().
    return 'unknown';
  }
}

/** Start time of a process in clock ticks since boot, or null when it does not exist or /proc is absent. */
export function processStartTime(pid: number): number | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[19]);
}

let cached: Owner | undefined;

/** The owner record of this process. */
export function currentOwner(): Owner {
  cached ??= {
    host: hostname(),
    boot_id: readBootId(),
    pid: process.pid,
    start: processStartTime(process.pid) ?? 0,
  };
  return cached;
}

/** The owner label value of this process (JSON). */
export function ownerLabel(owner: Owner = currentOwner()): string {
  return JSON.stringify(owner);
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the pid exists but belongs to another user.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the owner of a container is gone, judged from this machine: a different boot,
 * a dead pid, or a live pid with another start time (reused). Containers of another host
 * (a shared remote engine) are never judged gone. An unreadable label is an orphan.
 */
export function ownerGone(label: string | undefined, self: Owner = currentOwner()): boolean {
  let owner: Owner;
  try {
    owner = JSON.parse(label ?? '') as Owner;
  } catch {
    return true;
  }
  if (typeof owner !== 'object' || owner === null || typeof owner.pid !== 'number') return true;
  if (owner.host !== self.host) return false;
  if (owner.boot_id !== self.boot_id) return true;
  if (!pidAlive(owner.pid)) return true;
  const start = processStartTime(owner.pid);
  return start !== null && start !== owner.start;
}

/** Whether a container was kept on purpose (`stepbox run --keep`, see {@link KEPT_NAME_PREFIX}). */
export function isKept(c: LabelledContainer): boolean {
  return c.names.some((n) => n.startsWith(KEPT_NAME_PREFIX));
}

/** Removes stepbox containers whose owner process is gone, except kept ones; returns the ids removed. */
export async function sweepOrphans(engine: DockerEngine): Promise<string[]> {
  const removed: string[] = [];
  for (const c of await engine.listByLabel(`${STEPBOX_LABEL}=1`)) {
    if (isKept(c) || !ownerGone(c.labels[OWNER_LABEL])) continue;
    // `run --keep` renames its sandbox before its process exits, possibly after this
    // listing: with the owner's death now observed, a fresh look sees any such rename.
    const name = await engine.nameOf(c.id);
    if (name === null || name.startsWith(KEPT_NAME_PREFIX)) continue;
    log.info(
      `removing orphan sandbox ${c.id.slice(0, 12)} (owner ${c.labels[OWNER_LABEL] ?? 'unknown'} is gone)`,
    );
    await engine.remove(c.id);
    removed.push(c.id);
  }
  return removed;
}

/** Ids of the containers owned by `owner` (this process by default). */
export async function ownedContainers(
  engine: DockerEngine,
  owner: Owner = currentOwner(),
): Promise<string[]> {
  const label = ownerLabel(owner);
  return (await engine.listByLabel(`${STEPBOX_LABEL}=1`))
    .filter((c) => c.labels[OWNER_LABEL] === label)
    .map((c) => c.id);
}
