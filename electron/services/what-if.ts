import type { WideningKind } from '../../shared/isolation-policy.js';
import { recordedTask } from '../engine/harness/recorded-task.js';
import type { ToolResult } from '../../shared/tool-result.js';
import { cutAtStep, readLineage, snapshotAt } from '../engine/trace/lineage.js';
import { restoreSandbox } from '../engine/harness/restore-sandbox.js';
import { memoryFromEvents } from '../engine/harness/state-at.js';
import { logger } from '../engine/log.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import { MemorySnapshotStore } from '../engine/sandbox/memory-snapshot-store.js';
import type { SandboxProvider } from '../engine/sandbox/sandbox.js';
import { createMemory } from '../engine/tools/memory.js';
import type { EpisodeParts } from '../engine/episode-parts.js';
import type { DiskEpisodeStore } from '../engine/trace/episode-store.js';
import { ServiceError } from './service-error.js';

const log = logger('what-if');

/**
 * "What if…": runs one tool call with edited arguments in a THROWAWAY sandbox restored
 * to snapshot `step - 1` (the workspace, memory and shell state the step's call saw),
 * then destroys it. The live sandbox and the trace are never touched.
 */
export async function runWhatIf(
  { store, parts, provider }: { store: DiskEpisodeStore; parts: EpisodeParts; provider: SandboxProvider },
  id: string,
  step: number,
  call: { readonly name: string; readonly arguments: Record<string, unknown> },
  consent: readonly WideningKind[] = [],
): Promise<{ result: ToolResult; treeHashAfter: string | null }> {
  const info = store.resolve(id);
  const lineage = readLineage(store, info);
  const task = recordedTask(lineage.trace.header.task, info.branch, consent);
  const before = snapshotAt(lineage.events, step - 1);
  if (!before) throw new ServiceError('not_found', `${info.branch} has no snapshot ${step - 1} to restore`);
  const sandbox = await provider.create(sandboxConfig(task.sandbox));
  try {
    await restoreSandbox(sandbox, store.snapshots(info.episode), before);
    const memory = createMemory(memoryFromEvents(task, cutAtStep(lineage.events, step - 1)));
    const outcome = await parts.tools(task).call(call.name, call.arguments, {
      sandbox,
      memory,
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
    await sandbox.destroy().catch((e: unknown) => log.warn(`destroying the what-if sandbox: ${String(e)}`));
  }
}
