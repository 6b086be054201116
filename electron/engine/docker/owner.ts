import { logger } from '../log.js';
import {
  currentProcessIdentity,
  isProcessGone,
  type ForeignHostRule,
  type ProcessIdentity,
} from '../process-identity.js';
import type { DockerEngine, LabelledContainer } from './client.js';
import { KEPT_NAME_PREFIX, OWNER_LABEL, STEPBOX_LABEL } from './container-spec.js';

const log = logger('docker');

/** The process that owns a container: if it is gone, the container is an orphan. */
export type Owner = ProcessIdentity;

/**
 * How an owner on another host is judged: never gone, since on a shared remote engine
 * that host may well still be using its containers and this machine cannot see it.
 */
const OWNER_HOST_RULE: ForeignHostRule = 'alive';

/** The owner record of this process. */
export function currentOwner(): Owner {
  return currentProcessIdentity();
}

/** The owner label value of this process (JSON). */
export function ownerLabel(owner: Owner = currentOwner()): string {
  return JSON.stringify(owner);
}

/** An owner label as written by stepbox before 0.1 shared the trace's identity record. */
interface LegacyOwner {
  readonly host: string;
  readonly boot_id: string;
  readonly pid: number;
  readonly start: number;
}

/** The owner a label names, or null when it is unreadable. */
function parseOwner(label: string | undefined): Owner | null {
  let owner: Partial<Owner & LegacyOwner>;
  try {
    owner = JSON.parse(label ?? '') as Partial<Owner & LegacyOwner>;
  } catch {
    return null;
  }
  if (typeof owner !== 'object' || owner === null || typeof owner.pid !== 'number') return null;
  if (typeof owner.start === 'number')
    return {
      pid: owner.pid,
      host: String(owner.host),
      boot_id: owner.boot_id === 'unknown' ? null : (owner.boot_id ?? null),
      start_time: owner.start === 0 ? null : String(owner.start),
    };
  return {
    pid: owner.pid,
    host: String(owner.host),
    boot_id: owner.boot_id ?? null,
    start_time: owner.start_time ?? null,
  };
}

/**
 * Whether the owner of a container is gone (see {@link isProcessGone}); containers of
 * another host are never judged gone. An unreadable label is an orphan.
 */
export function ownerGone(label: string | undefined): boolean {
  const owner = parseOwner(label);
  return owner === null || isProcessGone(owner, OWNER_HOST_RULE);
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
