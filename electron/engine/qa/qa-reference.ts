import { SANDBOX_IMAGE } from '../../../shared/constants.js';
import type Database from 'better-sqlite3';
import { openSqlite } from '../trace/sqlite.js';
import { existsSync } from 'node:fs';
import type { QaReference } from '../../../shared/qa/qa-input.js';
import { workspacePath } from '../../../shared/qa/qa-input.js';
import type { Task } from '../../../shared/task.js';
import type { TraceEvent } from '../../../shared/trace-events.js';
import { logger } from '../log.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import { indexPath } from '../trace/episode-index.js';
import { median } from '../../../shared/median.js';
import { sha256Hex } from '../sha256.js';

const log = logger('qa');

/** The median, or null when there is nothing to take it of (no earlier episodes of the task). */
function medianOrNull(values: readonly number[]): number | null {
  return values.length ? median(values) : null;
}

/** The median steps and duration of a task's closed main branches in the index, excluding one branch. */
export function taskMedians(
  home: string,
  task: string,
  exclude: string,
): { medianSteps: number | null; medianDurationMs: number | null; samples: number } {
  const path = indexPath(home);
  const none = { medianSteps: null, medianDurationMs: null, samples: 0 };
  if (!existsSync(path)) return none;
  let db: Database.Database | null = null;
  try {
    db = openSqlite(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    const rows = db
      .prepare(
        `SELECT b.steps AS steps, b.ended - b.created AS duration FROM branches b JOIN episodes e ON e.id = b.episode
         WHERE e.task = ? AND b.id = b.episode AND b.id != ? AND b.status NOT IN ('running', 'interrupted')`,
      )
      .all(task, exclude) as { steps: number; duration: number | null }[];
    return {
      medianSteps: medianOrNull(rows.map((r) => r.steps)),
      medianDurationMs: medianOrNull(rows.flatMap((r) => (r.duration === null ? [] : [r.duration]))),
      samples: rows.length,
    };
  } catch (e) {
    // The efficiency rule then falls back to qa.expected_steps; the other rules are unaffected.
    log.warn(
      `cannot read task medians from ${path}: ${(e as Error).message}; \`stepbox reindex\` rebuilds the index`,
    );
    return none;
  } finally {
    db?.close();
  }
}

/**
 * The task's declared initial workspace as path → sha256, when the task alone defines it
 * (no setup commands, which could write anything, no `from` folder, whose files are the
 * folder's as it was at the start, and no image of the task's own, whose files in the working
 * directory are part of snapshot 0); otherwise null.
 */
export function declaredFiles(task: Task): Record<string, string> | null {
  if (task.workspace.setup.length > 0 || task.workspace.from !== undefined) return null;
  if (task.sandbox.build !== undefined || task.sandbox.workdir !== undefined) return null;
  if (task.sandbox.image !== SANDBOX_IMAGE) return null;
  const out: Record<string, string> = {};
  for (const [path, file] of Object.entries(task.workspace.files)) {
    const bytes = typeof file === 'string' ? Buffer.from(file, 'utf8') : Buffer.from(file.base64, 'base64');
    out[workspacePath(path)] = sha256Hex(bytes);
  }
  return out;
}

/** Snapshot 0's files as path → sha256, from its manifest in the episode's snapshot store; null if unavailable. */
export async function snapshot0Files(
  events: readonly TraceEvent[],
  store: SnapshotStore,
): Promise<Record<string, string> | null> {
  const snap = events.find((e) => e.type === 'snapshot' && e.step === 0);
  if (!snap || snap.type !== 'snapshot') return null;
  try {
    const manifest = await store.getManifest(snap.manifest);
    const out: Record<string, string> = {};
    for (const e of manifest.entries) if (e.type === 'file' && e.hash) out[workspacePath(e.path)] = e.hash;
    return out;
  } catch (e) {
    log.warn(
      `snapshot 0 manifest ${snap.manifest} unreadable (${(e as Error).message}); state_leak not checked`,
    );
    return null;
  }
}

/** Everything the engine knows beyond a trace for its QA: medians from the index, the declared and actual initial workspace. */
export async function qaReference(options: {
  readonly home: string | null;
  readonly task: Task;
  readonly branch: string;
  readonly events: readonly TraceEvent[];
  readonly snapshots: SnapshotStore | null;
  /** False to ignore the index (case runs: a case's fix must not be judged by its broken runs). */
  readonly useIndex?: boolean;
}): Promise<QaReference> {
  const medians =
    options.home && options.useIndex !== false
      ? taskMedians(options.home, options.task.name, options.branch)
      : {};
  const declared = declaredFiles(options.task);
  const actual =
    declared && options.snapshots ? await snapshot0Files(options.events, options.snapshots) : null;
  return { ...medians, declaredFiles: declared, snapshot0Files: actual };
}
