import { parseTask } from '../../../shared/task.js';
import type { SandboxSource } from '../harness/episode-factory.js';
import { HarnessError } from '../harness/harness-error.js';
import { readLineage, snapshotAt } from '../harness/lineage.js';
import { restoreSandbox } from '../harness/rollback.js';
import { sandboxConfig } from '../sandbox/limits.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { EpisodeStore } from '../trace/trace-store.js';

/** Sandboxes already holding snapshot K, handed to candidate forks first. */
export interface StagedSandboxes extends SandboxSource {
  /** How many staged sandboxes are still unused. */
  readonly ready: () => number;
  /** Gives back (destroys or pools) the staged sandboxes no fork took. */
  close(): Promise<void>;
}

/**
 * Stages `count` sandboxes at snapshot K of a branch ahead of a candidates request (while
 * a person writes candidates): each is created from `source` and restored to K, so a
 * fork's own restore finds every file in place and only checks it. A fork beyond
 * `count` gets a sandbox from `source` as usual.
 */
export async function stageSandboxes(options: {
  readonly store: EpisodeStore;
  readonly id: string;
  readonly at: number;
  readonly count: number;
  readonly source: SandboxSource;
}): Promise<StagedSandboxes> {
  const { store, source } = options;
  const info = store.resolve(options.id);
  const lineage = readLineage(store, info);
  const task = parseTask(lineage.trace.header.task, `the task recorded in ${info.branch}`);
  if (!task.ok) throw new HarnessError('invalid_task', task.error.message);
  const snap = snapshotAt(lineage.events, options.at);
  if (!snap) throw new HarnessError('not_found', `${info.branch} has no complete step ${options.at}`);
  const config = sandboxConfig(task.value.sandbox);
  const release = source.release ?? ((s: Sandbox) => s.destroy());
  const staged: Sandbox[] = [];
  await Promise.all(
    Array.from({ length: options.count }, async () => {
      const box = await source.provider.create(config);
      try {
        await restoreSandbox(box, store.snapshots(info.episode), snap);
        staged.push(box);
      } catch (e) {
        await release(box);
        throw e;
      }
    }),
  );
  return {
    provider: {
      backend: source.provider.backend,
      create: async (c) => staged.pop() ?? source.provider.create(c),
    },
    release,
    ready: () => staged.length,
    async close() {
      await Promise.all(staged.splice(0).map((s) => release(s)));
    },
  };
}
