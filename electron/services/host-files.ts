import { lstat, readdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { ServiceError } from './service-error.js';

/** One entry of a folder the start form's file picker shows. */
export interface HostEntry {
  readonly name: string;
  readonly type: 'file' | 'dir';
  readonly size: number;
}

/** A folder inside a picker root: its path from the root, its absolute path, its entries. */
export interface HostListing {
  /** The root's real absolute path. */
  readonly root: string;
  /** The folder listed, relative to the root (`''` for the root itself). */
  readonly path: string;
  /** The folder's absolute path (root + path), as the form shows it before a start. */
  readonly absolute: string;
  readonly entries: HostEntry[];
}

const MAX_ENTRIES = 1000;

/** True when `p` is `root` or inside it (both real, absolute). */
function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * Why `rel` is refused before the disk is touched, or null. A picker path names a folder
 * below a root by its segments: no `..` (nor its percent-encoded forms: a path is never
 * URL-decoded, and a literal `%2e%2e` folder is no reason to allow one), no NUL, and an
 * absolute path only when it names the root or a folder inside it (checked after realpath).
 */
function refusal(rel: string): string | null {
  if (rel.includes('\0')) return 'the path contains a NUL byte';
  for (const seg of rel.split(/[/\\]+/)) {
    let decoded = seg;
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      // Not valid percent-encoding: the segment is taken as it is.
    }
    if (seg === '..' || decoded === '..' || decoded.includes('\0'))
      return `"${rel.replace(/\0/g, '\\0')}" leaves the folder (no ".." in a picker path)`;
  }
  return null;
}

/**
 * Lists the folder `rel` below `root` for the start form's picker: never a path outside
 * the root, whether by `..`, an absolute path, or a symlink whose target leaves it (such
 * entries are left out of the listing; a symlinked folder that stays inside is followed).
 * Only names, types and sizes: no file content is ever read.
 */
export async function listInside(root: string, rel: string, rootName: string): Promise<HostListing> {
  const why = refusal(rel);
  if (why) throw new ServiceError('invalid_input', `${why}: choose a folder inside ${rootName}`);
  let realRoot: string;
  try {
    realRoot = await realpath(root);
  } catch {
    throw new ServiceError('not_found', `${rootName} (${root}) does not exist`);
  }
  const wanted = isAbsolute(rel) ? rel : join(realRoot, rel);
  let real: string;
  try {
    real = await realpath(wanted);
  } catch {
    throw new ServiceError('not_found', `no folder "${rel}" in ${rootName}`);
  }
  if (!inside(realRoot, real))
    throw new ServiceError('invalid_input', `"${rel}" is outside ${rootName}: choose a folder inside it`);
  if (!(await stat(real)).isDirectory())
    throw new ServiceError('invalid_input', `"${rel}" is a file, not a folder: choose it from its folder`);
  const entries: HostEntry[] = [];
  for (const d of await readdir(real, { withFileTypes: true })) {
    if (entries.length >= MAX_ENTRIES) break;
    const full = join(real, d.name);
    let target = full;
    if (d.isSymbolicLink()) {
      try {
        target = await realpath(full);
      } catch {
        continue; // A dangling link names nothing to pick.
      }
      if (!inside(realRoot, target)) continue;
    }
    try {
      const s = d.isSymbolicLink() ? await stat(target) : await lstat(full);
      if (s.isDirectory()) entries.push({ name: d.name, type: 'dir', size: 0 });
      else if (s.isFile()) entries.push({ name: d.name, type: 'file', size: s.size });
    } catch {
      // Gone between readdir and stat: left out.
    }
  }
  entries.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === 'dir' ? -1 : 1));
  const path = relative(realRoot, real).split(sep).join('/');
  return { root: realRoot, path, absolute: real, entries };
}
