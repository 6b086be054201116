import { execFileSync } from 'node:child_process';
import { lstatSync, readdirSync, readlinkSync, type Stats } from 'node:fs';
import { isAbsolute, join, posix, relative, sep } from 'node:path';
import { sortedByPath, type TreeEntry } from '../../../shared/tree-hash.js';

/**
 * Which files of a project folder become a workspace (`stepbox run DIR`, `workspace.from`):
 * in a git checkout the files git sees (tracked and untracked, `.gitignore`d ones left out)
 * plus `.git` itself, so agents can use git; otherwise every file. Nothing on the host is
 * ever followed through a symlink: links that stay inside the folder are kept as links,
 * the rest — links leaving it, devices, sockets, fifos — are skipped and listed.
 */

/** A path of the folder left out of the workspace, and why (shown to the user, recorded as a warning). */
export interface SkippedPath {
  readonly path: string;
  readonly why: string;
}

/** A folder's files as they will be in the workspace (the content is read at import). */
export interface FolderListing {
  /** The folder, absolute. */
  readonly root: string;
  /** `git`: the files git sees (and `.git`); `all`: every file. */
  readonly mode: 'git' | 'all';
  /** Entries sorted by path; files carry their size, not yet their hash. */
  readonly entries: readonly TreeEntry[];
  readonly skipped: readonly SkippedPath[];
  /** Bytes of every file listed. */
  readonly bytes: number;
  /** What a person should know about how the folder was read (one line each). */
  readonly notes: readonly string[];
  /** True when the listing stopped at `stopAfterBytes`: the folder holds more than `bytes`. */
  readonly truncated: boolean;
}

/** Options of {@link listFolder}. */
export interface ListFolderOptions {
  /** Paths relative to the root left out (the task file that names the folder is not part of its world). */
  readonly exclude?: readonly string[];
  /** How git is run; tests pass a missing binary to see the fallback. Default `git`. */
  readonly git?: string;
  /**
   * Stop listing once the files seen hold more than this many bytes (`truncated` then says
   * so): a folder over the import limit is refused anyway, and `stepbox run ~` must not walk
   * a whole home folder first.
   */
  readonly stopAfterBytes?: number;
}

/** Lists `root` (an existing folder, absolute) by the rules above. */
export function listFolder(root: string, options: ListFolderOptions = {}): FolderListing {
  const listing = new Lister(root, new Set(options.exclude ?? []), options.stopAfterBytes ?? Infinity);
  const git = gitPaths(root, options.git ?? 'git');
  if (git.kind === 'paths') {
    for (const p of git.paths) if (!listing.full()) listing.addPath(p);
    if (git.top) listing.addGitDir();
    else listing.notes.push(`${root} is inside a git checkout: the files git sees there, without .git`);
  } else {
    if (git.kind === 'failed') listing.notes.push(git.note);
    listing.walk('');
  }
  return listing.result(git.kind === 'paths' ? 'git' : 'all');
}

type GitAnswer =
  { kind: 'paths'; paths: string[]; top: boolean } | { kind: 'none' } | { kind: 'failed'; note: string };

/**
 * The paths git sees in `root` (relative, `/`-separated), or none when `root` is not in a
 * checkout. `core.fsmonitor` is off: listing must never run a hook the folder configures.
 */
function gitPaths(root: string, git: string): GitAnswer {
  const run = (args: string[]) =>
    execFileSync(git, ['-c', 'core.fsmonitor=false', '-C', root, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1024 ** 3,
    });
  let top = false;
  try {
    top = lstatSync(join(root, '.git')).isDirectory() || lstatSync(join(root, '.git')).isFile();
  } catch {
    top = false;
  }
  try {
    const inside = run(['rev-parse', '--is-inside-work-tree']).toString('utf8').trim();
    if (inside !== 'true') return { kind: 'none' };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && top)
      return {
        kind: 'failed',
        note: `${root} is a git checkout but git is not installed: every file is copied (ignored ones too); install git to leave .gitignore'd files out`,
      };
    if (top)
      return {
        kind: 'failed',
        note: `${root} has a .git that git does not read (${firstLine(e)}): every file is copied`,
      };
    return { kind: 'none' };
  }
  try {
    const out = run(['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
    const paths = out
      .toString('utf8')
      .split('\0')
      .filter((p) => p !== '');
    return { kind: 'paths', paths: [...new Set(paths)], top };
  } catch (e) {
    return { kind: 'failed', note: `git ls-files failed in ${root} (${firstLine(e)}): every file is copied` };
  }
}

function firstLine(e: unknown): string {
  const stderr = (e as { stderr?: Buffer }).stderr?.toString('utf8').trim();
  return (stderr || (e as Error).message).split('\n')[0];
}

class Lister {
  readonly entries = new Map<string, TreeEntry>();
  readonly skipped: SkippedPath[] = [];
  readonly notes: string[] = [];
  private seen = 0;

  constructor(
    readonly root: string,
    private readonly exclude: ReadonlySet<string>,
    private readonly stopAfter: number,
  ) {}

  /** Whether the files listed so far hold more than the caller wants to know about. */
  full(): boolean {
    return this.seen > this.stopAfter;
  }

  /** A path git listed: the entry itself, its parent folders, and a folder (a submodule, a nested checkout) whole. */
  addPath(listed: string): void {
    const rel = listed.replace(/\/+$/, '');
    if (rel === '' || rel.split('/').some((part) => part === '' || part === '.' || part === '..')) return;
    if (this.badName(rel)) return;
    const stat = this.lstat(rel);
    // Listed by git but gone from the working tree (deleted, sparse): the workspace is what is on disk.
    if (!stat) return;
    this.addParents(rel);
    if (this.add(rel, stat) && stat.isDirectory()) this.walk(rel);
  }

  /** `.git` itself, whole: agents use git in the sandbox. */
  addGitDir(): void {
    const stat = this.lstat('.git');
    if (!stat) return;
    if (stat.isFile()) {
      this.skipped.push({
        path: '.git',
        why: 'a link to a repository elsewhere (a git worktree or submodule): git will not work in the sandbox; run from the main checkout to have it',
      });
      return;
    }
    if (this.add('.git', stat) && stat.isDirectory()) this.walk('.git');
  }

  /** Every entry below `rel` ('' = the root), depth first. */
  walk(rel: string): void {
    const stack = [rel];
    while (stack.length && !this.full()) {
      const dir = stack.pop()!;
      let names: string[];
      try {
        names = readdirSync(this.abs(dir));
      } catch (e) {
        this.skipped.push({ path: dir || '.', why: `cannot be read (${(e as NodeJS.ErrnoException).code})` });
        if (dir) this.entries.delete(dir);
        continue;
      }
      for (const name of names) {
        if (this.full()) break;
        const child = dir ? `${dir}/${name}` : name;
        if (this.badName(child)) continue;
        const stat = this.lstat(child);
        if (stat && this.add(child, stat) && stat.isDirectory()) stack.push(child);
      }
    }
  }

  /**
   * Whether `rel` came from a name that is not valid UTF-8 (read as U+FFFD): skipped and
   * listed. Checked before its lstat, which cannot find the decoded name on disk (the
   * entry was dropped without a word).
   */
  private badName(rel: string): boolean {
    if (!rel.includes('\uFFFD')) return false;
    this.skipped.push({ path: rel, why: 'its name is not valid UTF-8' });
    return true;
  }

  /** Adds one entry; false when it was skipped (or excluded). */
  private add(rel: string, stat: Stats): boolean {
    if (this.exclude.has(rel)) return false;
    if (this.entries.has(rel)) return false;
    // Permission bits only: set-id and sticky bits mean nothing in the sandbox.
    const mode = stat.mode & 0o777;
    if (stat.isFile()) {
      this.entries.set(rel, { path: rel, type: 'file', mode, size: stat.size });
      this.seen += stat.size;
      return true;
    }
    if (stat.isDirectory()) {
      this.entries.set(rel, { path: rel, type: 'dir', mode, size: 0 });
      return true;
    }
    if (stat.isSymbolicLink()) {
      const target = this.linkTarget(rel);
      if (target === null) return false;
      this.entries.set(rel, {
        path: rel,
        type: 'symlink',
        mode: 0o777,
        size: Buffer.byteLength(target),
        target,
      });
      return true;
    }
    const kind = stat.isSocket()
      ? 'a socket'
      : stat.isFIFO()
        ? 'a fifo'
        : stat.isCharacterDevice() || stat.isBlockDevice()
          ? 'a device'
          : 'not a file, folder or symlink';
    this.skipped.push({ path: rel, why: `${kind}: only files, folders and symlinks are copied` });
    return false;
  }

  /**
   * A symlink's target as it will be in the sandbox, or null (skipped) when it leaves the
   * folder. An absolute target inside the folder is made relative: the folder's host path
   * does not exist in the sandbox.
   */
  private linkTarget(rel: string): string | null {
    let target: string;
    try {
      target = readlinkSync(this.abs(rel));
    } catch (e) {
      this.skipped.push({ path: rel, why: `its link cannot be read (${(e as NodeJS.ErrnoException).code})` });
      return null;
    }
    const parent = posix.dirname(rel);
    if (isAbsolute(target)) {
      const inside = relative(this.root, target).split(sep).join('/');
      if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
        this.skipped.push({ path: rel, why: `a symlink to ${target}, outside the folder` });
        return null;
      }
      return posix.relative(parent === '.' ? '' : parent, inside) || '.';
    }
    const resolved = posix.normalize(posix.join(parent, target));
    if (resolved === '..' || resolved.startsWith('../') || target.includes('\0')) {
      this.skipped.push({ path: rel, why: `a symlink to ${target}, outside the folder` });
      return null;
    }
    return target;
  }

  /** The folders above `rel`, which a manifest must list for a restore to make them. */
  private addParents(rel: string): void {
    for (let cut = rel.indexOf('/'); cut > 0; cut = rel.indexOf('/', cut + 1)) {
      const dir = rel.slice(0, cut);
      if (this.entries.has(dir)) continue;
      const stat = this.lstat(dir);
      if (stat?.isDirectory())
        this.entries.set(dir, { path: dir, type: 'dir', mode: stat.mode & 0o777, size: 0 });
    }
  }

  private lstat(rel: string): Stats | null {
    try {
      return lstatSync(this.abs(rel));
    } catch {
      return null;
    }
  }

  private abs(rel: string): string {
    return rel ? join(this.root, rel) : this.root;
  }

  result(mode: 'git' | 'all'): FolderListing {
    // A path below a skipped one cannot be: the walk never enters what it skips, and git
    // lists no path below a symlink. Entries whose parent folder is missing (unreadable) go.
    const entries = sortedByPath([...this.entries.values()]).filter((e) => {
      const cut = e.path.lastIndexOf('/');
      return cut < 0 || this.entries.get(e.path.slice(0, cut))?.type === 'dir';
    });
    return {
      root: this.root,
      mode,
      entries,
      skipped: [...this.skipped].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      bytes: entries.reduce((n, e) => n + (e.type === 'file' ? e.size : 0), 0),
      notes: this.notes,
      truncated: this.full(),
    };
  }
}

/** The biggest top-level paths of a listing (a folder counts what it holds), largest first. */
export function biggestPaths(listing: FolderListing, count = 5): { path: string; bytes: number }[] {
  const sums = new Map<string, number>();
  const dirs = new Set(listing.entries.filter((e) => e.type === 'dir').map((e) => e.path));
  for (const e of listing.entries) {
    if (e.type !== 'file') continue;
    const top = e.path.split('/')[0];
    sums.set(top, (sums.get(top) ?? 0) + e.size);
  }
  return [...sums.entries()]
    .map(([path, bytes]) => ({ path: dirs.has(path) ? `${path}/` : path, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, count);
}
