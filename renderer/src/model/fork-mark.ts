/**
 * A fork's mark in the timeline's narrow MARKS cell: `fork …a1b2`, the id's random tail (ids
 * are `b-YYYYMMDD-HHMMSS-xxxx`; the date part is the same for every fork of a day, so it
 * told nothing while it pushed the tail out of view). The full id is the mark's title.
 */
export function forkMarkText(branch: string): string {
  const parts = branch.split('-');
  return parts.length >= 3 ? `fork …${parts[parts.length - 1]}` : `fork ${branch}`;
}
