import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Writes one of the store's own state files (`projects.json`, `chosen-files.json`) whole or not
 * at all: to a temporary file beside it, then renamed over it, so a crash mid-write leaves the
 * old list, never half a one. `mode` applies to a file it creates (0o600 for grants).
 */
export async function writeStoreFile(file: string, value: unknown, mode = 0o644): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  await writeFile(tmp, JSON.stringify(value, null, 2) + '\n', { mode });
  await rename(tmp, file);
}
