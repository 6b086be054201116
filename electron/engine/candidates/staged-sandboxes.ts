import type { WideningKind } from '../../../shared/isolation-policy.js';
import { sandboxAt, stateAt } from '../harness/state-at.js';
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
 * a person writes candidates): the state at K read through the recorded-task policy
 * (a task wider than the defaults needs `consent`), each sandbox taken from `supply` and restored to K, so a
 * fork's own restore finds every file in place and only checks it. A fork beyond
 * `count` gets a sandbox from `supply` as usual.
 */
export async function stageSandboxes(options: {
  readonly store: EpisodeStore;
  readonly id: string;
  readonly at: number;
  readonly count: number;
  readonly supply: SandboxSupply;
  /** What the user consented to the recorded task widening (recorded-task policy). */
  readonly consent?: readonly WideningKind[];
}): Promise<StagedSandboxes> {
  const { store, supply } = options;
  const state = stateAt(store, options.id, options.at, options.consent);
  const staged: Sandbox[] = [];
  // The pool refills after these are restored, not while (the refill would take their cores).
  const resume = supply.holdRefills?.() ?? (() => undefined);
  await Promise.all(
    Array.from({ length: options.count }, async () => staged.push(await sandboxAt(store, state, supply))),
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
