import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** The file `case import` writes into an imported case's folder (a bundle cannot carry it). */
export const IMPORTED_MARKER = '.imported.json';

/**
 * Whether the task file `taskFile` belongs to a case imported from a bundle: the marker
 * beside it, or (a `fixed/` variant's task) in the case folder above.
 */
export function isImportedCaseTask(taskFile: string): boolean {
  const dir = dirname(taskFile);
  if (existsSync(join(dir, IMPORTED_MARKER))) return true;
  return basename(dir) === 'fixed' && existsSync(join(dirname(dir), IMPORTED_MARKER));
}
