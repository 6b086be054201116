import { describe, expect, it } from 'vitest';
import type { DockerEngine, LabelledContainer } from '../../electron/engine/docker/client.js';
import { KEPT_NAME_PREFIX, OWNER_LABEL, STEPBOX_LABEL } from '../../electron/engine/docker/container-spec.js';
import { currentOwner, ownerLabel, sweepOrphans } from '../../electron/engine/docker/owner.js';

/** An engine whose listing is a step behind: names as they were before a rename. */
function engineWith(listed: LabelledContainer[], currentNames: Record<string, string>) {
  const removed: string[] = [];
  const engine = {
    listByLabel: async () => listed,
    nameOf: async (id: string) => currentNames[id] ?? null,
    remove: async (id: string) => {
      removed.push(id);
    },
  } as unknown as DockerEngine;
  return { engine, removed };
}

// A pid no process has: the owner is gone.
const deadOwner = ownerLabel({ ...currentOwner(), pid: 4_194_000 });
const container = (id: string, name: string): LabelledContainer => ({
  id,
  labels: { [STEPBOX_LABEL]: '1', [OWNER_LABEL]: deadOwner },
  state: 'running',
  names: [name],
});

describe('orphan sweep', () => {
  it('leaves a sandbox renamed kept after the listing, and removes a real orphan', async () => {
    const { engine, removed } = engineWith(
      [container('kept', 'quirky_name'), container('orphan', 'other_name')],
      {
        kept: `${KEPT_NAME_PREFIX}kept`,
        orphan: 'other_name',
      },
    );
    expect(await sweepOrphans(engine)).toEqual(['orphan']);
    expect(removed).toEqual(['orphan']);
  });
});
