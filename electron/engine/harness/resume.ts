import { openBranchController, type EpisodeEnv } from './episode-factory.js';
import type { EpisodeRunner } from './episode-runner.js';
import { HarnessError } from './harness-error.js';
import { lastSnapshot, readLineage, type Lineage } from '../trace/lineage.js';

/**
 * Continues an `interrupted` branch from its last complete step (its last snapshot) in a
 * fresh sandbox: workspace, session, memory and conversation restored, the same agent
 * continuing (a scripted agent skips the lines already consumed).
 *
 * Policy: the interrupted trace is closed (its `end` appended by the next stepbox
 * process, and compressed) and stays untouched as the record of what happened; the
 * continuation is a NEW branch forked at that step with `resume_of` in its header. The
 * episode timeout starts afresh for the continuation.
 */
export async function resumeEpisode(options: EpisodeEnv & { readonly id: string }): Promise<EpisodeRunner> {
  const store = options.store;
  store.markInterrupted();
  const info = store.resolve(options.id);
  const lineage = readLineage(store, info);
  const end = lineage.trace.end;
  if (!end) throw new HarnessError('busy', `${info.branch} is still being written by a live stepbox process`);
  if (end.status !== 'interrupted') {
    throw new HarnessError(
      'conflict',
      `${info.branch} ended ${end.status} (${end.end_reason}); only interrupted episodes resume. Fork it instead: stepbox fork ${info.branch} --at K`,
    );
  }
  const at = resumeStep(lineage);
  return openBranchController({
    ...options,
    store,
    id: info.branch,
    at,
    branchNow: true,
    headerExtra: { resume_of: info.branch },
  });
}

/** The step a resume continues from: the branch's last complete step (its last snapshot), else 0. */
export function resumeStep(lineage: Lineage): number {
  return lastSnapshot(lineage.events)?.step ?? 0;
}
