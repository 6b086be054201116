import { randomBytes } from 'node:crypto';

/** The prefix of episode ids; the main branch's id equals its episode's. */
export const EPISODE_PREFIX = 'ep-';
/** The prefix of fork branch ids. */
export const BRANCH_PREFIX = 'b-';

/** A short sortable id: `<prefix>YYYYMMDD-HHMMSS-xxxx` (UTC, 4 random hex digits). */
export function newId(prefix: string, now: Date = new Date()): string {
  const iso = now.toISOString(); // 2026-11-29T08:45:12.345Z
  const date = iso.slice(0, 10).replace(/-/g, '');
  const time = iso.slice(11, 19).replace(/:/g, '');
  return `${prefix}${date}-${time}-${randomBytes(2).toString('hex')}`;
}

/** True for a string that can be an id or id prefix (no path separators or dots to escape the store). */
export function isSafeId(id: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(id);
}
