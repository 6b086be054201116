import type { TraceEventOf } from '../../../shared/trace-events.js';
import type { RestoreInfo, Sandbox } from '../sandbox/sandbox.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';

/**
 * Puts a live sandbox back to snapshot k: leftover processes killed and every writable
 * place outside /workspace emptied (/tmp, $HOME, /dev/shm, …: what a fork would not have),
 * /workspace restored from the manifest (its tree hash re-computed inside the
 * container), and the shell session's cwd and exported environment as recorded. Memory
 * and conversation are rebuilt from the trace by the caller (state-at.ts).
 */
export async function restoreSandbox(
  sandbox: Sandbox,
  snapshots: SnapshotStore,
  snapshot: TraceEventOf<'snapshot'>,
): Promise<RestoreInfo> {
  await sandbox.killStrays();
  const restored = await sandbox.restore(snapshots, await snapshots.getManifest(snapshot.manifest));
  if (snapshot.session) await sandbox.setSessionState(snapshot.session);
  return restored;
}
