import type { WideningKind } from '../../../shared/isolation-policy.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { EpisodeParts } from '../episode-parts.js';
import { logger } from '../log.js';
import { MemorySnapshotStore } from '../sandbox/memory-snapshot-store.js';
import type { SandboxSupply } from '../sandbox/sandbox.js';
import { createMemory } from '../tools/memory.js';
import type { EpisodeStore } from '../trace/trace-store.js';
import { HarnessError } from './harness-error.js';
import { sandboxAt, stateAt } from './state-at.js';

const log = logger('what-if');

/** What a what-if call returned, and the workspace's tree hash after it (null when it could not be taken). */
export interface WhatIfResult {
  readonly result: ToolResult;
  readonly treeHashAfter: string | null;
}

/**
 * "What if…": runs one tool call with edited arguments in a THROWAWAY sandbox at the
 * state before step `step` (stateAt `step - 1`: the workspace, memory and shell state the
 * step's call saw, the task through the recorded-task policy), taken from the one
 * supply and given back after. The live sandbox and the trace are never touched.
 */
export async function runWhatIf(options: {
  readonly store: EpisodeStore;
  readonly parts: EpisodeParts;
  readonly supply: SandboxSupply;
  readonly id: string;
  readonly step: number;
  readonly call: { readonly name: string; readonly arguments: Record<string, unknown> };
  readonly consent?: readonly WideningKind[];
}): Promise<WhatIfResult> {
  const { store, supply, step, call } = options;
  if (!Number.isInteger(step) || step < 1)
    throw new HarnessError('invalid_input', `what-if needs a step of 1 or more (got ${step})`);
  const state = stateAt(store, options.id, step - 1, options.consent);
  const task = state.task;
  const sandbox = await sandboxAt(store, state, supply);
  try {
    const outcome = await options.parts.tools(task).call(call.name, call.arguments, {
      sandbox,
      memory: createMemory(state.memory),
      task,
      hardTimeoutMs: task.timeouts.step_hard * 1000,
      step,
      callIndex: 0,
    });
    const treeHashAfter = await sandbox
      .snapshot(new MemorySnapshotStore())
      .then((s) => s.treeHash)
      .catch((e: unknown) => {
        log.warn(`tree hash after the what-if: ${e instanceof Error ? e.message : String(e)}`);
        return null;
      });
    return { result: outcome.result, treeHashAfter };
  } finally {
    await supply
      .release(sandbox)
      .catch((e: unknown) => log.warn(`releasing the what-if sandbox: ${String(e)}`));
  }
}
