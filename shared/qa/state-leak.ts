import { flag, type Flag } from './flag.js';
import { eventsOf, type QaInput } from './qa-input.js';

/**
 * `state_leak`: snapshot 0 (the workspace after setup) differs from the task's declared
 * initial workspace — by tree hash when the engine knows the declared one, otherwise by
 * comparing snapshot 0's files with the task's files (tasks without setup commands).
 * Forks start from their parent's snapshot, so only main branches are checked.
 */
export function checkStateLeak(input: QaInput): Flag[] {
  const header = input.events[0];
  if (header?.type !== 'header' || header.fork_step !== null) return [];
  const snap0 = eventsOf(input.events, 'snapshot').find((s) => s.step === 0);
  const ref = input.reference;
  if (!snap0 || !ref) return [];
  if (ref.declaredTreeHash && ref.declaredTreeHash !== snap0.tree_hash) {
    return [
      flag(
        'state_leak',
        0,
        'error',
        "the workspace after setup differs from the task's declared initial workspace",
        {
          tree_hash: snap0.tree_hash,
          declared: ref.declaredTreeHash,
          ...(ref.snapshot0Files && ref.declaredFiles ? fileDiff(ref.declaredFiles, ref.snapshot0Files) : {}),
        },
      ),
    ];
  }
  if (!ref.declaredTreeHash && ref.declaredFiles && ref.snapshot0Files) {
    const diff = fileDiff(ref.declaredFiles, ref.snapshot0Files);
    if (diff.extra.length + diff.missing.length + diff.modified.length === 0) return [];
    const parts = [
      diff.extra.length ? `unexpected ${diff.extra.join(', ')}` : '',
      diff.modified.length ? `modified ${diff.modified.join(', ')}` : '',
      diff.missing.length ? `missing ${diff.missing.join(', ')}` : '',
    ].filter(Boolean);
    return [
      flag(
        'state_leak',
        0,
        'error',
        `the workspace after setup is not the task's declared one (${parts.join('; ')}): state leaked from an earlier episode?`,
        { tree_hash: snap0.tree_hash, ...diff },
      ),
    ];
  }
  return [];
}

function fileDiff(
  declared: Readonly<Record<string, string>>,
  actual: Readonly<Record<string, string>>,
): { extra: string[]; missing: string[]; modified: string[] } {
  const extra = Object.keys(actual)
    .filter((p) => !(p in declared))
    .sort();
  const missing = Object.keys(declared)
    .filter((p) => !(p in actual))
    .sort();
  const modified = Object.keys(declared)
    .filter((p) => p in actual && actual[p] !== declared[p])
    .sort();
  return { extra, missing, modified };
}
