import type { DockerEngine } from './client.js';
import type { Logger } from '../log.js';

/** What a volume prune removed, or would remove, and what it kept because a container uses it. */
export interface VolumePrune {
  readonly removed: string[];
  readonly in_use: string[];
}

/** A volume as the engine lists it, with the containers (any state) that mount it. */
export interface ListedVolume {
  readonly name: string;
  readonly users: readonly string[];
}

/**
 * Removes the listed volumes that no container mounts, running or stopped, and that
 * `busy` does not claim (e.g. one this process is filling right now); lists them only on
 * a dry run. One mounted by a container created since the listing cannot be removed: it
 * is reported in use, never forced. Agent volumes and old runtime volumes go through here.
 */
export async function pruneUnusedVolumes(
  engine: DockerEngine,
  volumes: readonly ListedVolume[],
  dryRun: boolean,
  log: Logger,
  busy: (name: string) => boolean = () => false,
): Promise<VolumePrune> {
  const removed: string[] = [];
  const inUse: string[] = [];
  for (const v of volumes) {
    if (v.users.length > 0 || busy(v.name)) {
      inUse.push(v.name);
      continue;
    }
    if (!dryRun) {
      try {
        await engine.removeVolume(v.name);
      } catch (e) {
        // Mounted by a container created since the listing: it is in use.
        log.info(`kept volume ${v.name}: ${(e as Error).message}`);
        inUse.push(v.name);
        continue;
      }
    }
    removed.push(v.name);
  }
  return { removed, in_use: inUse };
}
