import { parseTask } from '../../../shared/task.js';
import { HarnessError } from '../harness/harness-error.js';
import { readLineage, snapshotAt } from '../trace/lineage.js';
import { restoreSandbox } from '../harness/restore-sandbox.js';
import { sandboxConfig } from '../sandbox/limits.js';
import type { Sandbox, SandboxSupply } from '../sandbox/sandbox.js';
import type { EpisodeStore } from '../trace/trace-store.js';

/** Sandboxes already holding snapshot K, handed to candidate forks first. */
export interface StagedSandboxes extends SandboxSupply {
  /** How many staged sandboxes are still unused. */
  readonly ready: () => number;
  /** Gives back (to the supply) the staged sandboxes no fork took. */
  close(): Promise<void>;
}

/**
 * Stages `count` sandboxes at snapshot K of a branch ahead of a candidates request (while
 * a person writes candidates): each is taken from `supply` and restored to K, so a
 * fork's own restore finds every file in place and only checks it. A fork beyond
 * `count` gets a sandbox from `supply` as usual.
 */
export async function stageSandboxes(options: {
  readonly store: EpisodeStore;
  readonly id: string;
  readonly at: number;
  readonly count: number;
  readonly supply: SandboxSupply;
}): Promise<StagedSandboxes> {
  const { store, supply } = options;
  const info = store.resolve(options.id);
  const lineage = readLineage(store, info);
  const task = parseTask(lineage.trace.header.task, `the task recorded in ${info.branch}`);
  if (!task.ok) throw new HarnessError('invalid_task', task.error.message);
  const snap = snapshotAt(lineage.events, options.at);
  if (!snap) throw new HarnessError('not_found', `${info.branch} has no complete step ${options.at}`);
  const config = sandboxConfig(task.value.sandbox);
  const staged: Sandbox[] = [];
  // The pool refills after these are restored, not while (the refill would take their cores).
  const resume = supply.holdRefills?.() ?? (() => undefined);
  await Promise.all(
    Array.from({ length: options.count }, async () => {
      const box = await supply.acquire(config);
      try {
        await restoreSandbox(box, store.snapshots(info.episode), snap);
        staged.push(box);
      } catch (e) {
        await supply.release(box);
        throw e;
      }
    }),
  ).finally(resume);
  return {
    acquire: async (c) => staged.pop() ?? supply.acquire(c),
    release: (s) => supply.release(s),
    ready: () => staged.length,
    async close() {
      await Promise.all(staged.splice(0).map((s) => supply.release(s)));
    },
  };
}
