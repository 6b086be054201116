import type { SnapshotManifest, SnapshotStore } from './snapshot-store.js';

/** Text larger than this is shown as a notice, not loaded into the diff editor. */
const MAX_TEXT_BYTES = 256 * 1024;

/** A file's text in one snapshot: null when absent; `binary` when it is not UTF-8 text. */
export interface SnapshotText {
  readonly text: string | null;
  readonly binary: boolean;
  /** True when the path is a folder there (it has no text: its files are changes of their own). */
  readonly folder?: boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads one file of a manifest as text (absent, binary and oversized files say so). */
export async function textAt(
  store: SnapshotStore,
  manifest: SnapshotManifest | null,
  path: string,
): Promise<SnapshotText> {
  const entry = manifest?.entries.find((e) => e.path === path);
  if (!entry) return { text: null, binary: false };
  if (entry.type === 'dir') return { text: null, binary: false, folder: true };
  if (entry.type === 'symlink') return { text: `→ ${entry.target ?? ''}`, binary: false };
  if (entry.type !== 'file' || !entry.hash) return { text: null, binary: false };
  if (entry.size > MAX_TEXT_BYTES) return { text: `(${entry.size} bytes: too large to show)`, binary: true };
  const bytes = await store.getBlob(entry.hash);
  if (bytes.includes(0)) return { text: null, binary: true };
  try {
    return { text: decoder.decode(bytes), binary: false };
  } catch {
    // Not UTF-8: the inspector shows it as binary rather than as mojibake.
    return { text: null, binary: true };
  }
}
