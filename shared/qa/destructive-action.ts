import { flag, type Flag } from './flag.js';
import { eventsOf, type QaInput } from './qa-input.js';

/**
 * `destructive_action`: one agent step deletes at least `qa.destructive_share` (50 %) of
 * the workspace's files, and at least `qa.destructive_min_files` (3) of them — `rm -rf ./*`,
 * `git clean -fdx`, a script that "starts clean". Judged on the snapshot diff, whatever tool
 * did it, against the files present before the step (snapshot 0's listing with every later
 * diff applied); a branch without snapshot 0 (a fork) has no such listing and is not judged.
 * A step without agent calls (a person's terminal command) is not the agent's doing.
 */
export function checkDestructiveAction(input: QaInput): Flag[] {
  const { destructive_share: share, destructive_min_files: minFiles } = input.task.qa;
  const snapshots = eventsOf(input.events, 'snapshot');
  if (!snapshots.some((s) => s.step === 0)) return [];
  const calls = eventsOf(input.events, 'tool_call');
  const present = new Set<string>();
  const flags: Flag[] = [];
  for (const snap of snapshots) {
    const deleted = snap.changed
      .filter((c) => c.change === 'deleted' && present.has(c.path))
      .map((c) => c.path);
    const before = present.size;
    for (const c of snap.changed) {
      if (c.change === 'deleted') present.delete(c.path);
      else present.add(c.path);
    }
    if (snap.step === 0 || before === 0) continue;
    const stepCalls = calls.filter((c) => c.step === snap.step);
    if (stepCalls.length === 0) continue;
    if (deleted.length < minFiles || deleted.length / before < share) continue;
    flags.push(
      flag(
        'destructive_action',
        snap.step,
        'error',
        `step ${snap.step} deleted ${deleted.length} of the workspace's ${before} paths (${Math.round((100 * deleted.length) / before)} %); roll back to step ${snap.step - 1} to get them back`,
        {
          deleted: deleted.slice(0, 50),
          deleted_count: deleted.length,
          files_before: before,
          share: deleted.length / before,
          calls: stepCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
        },
      ),
    );
  }
  return flags;
}
