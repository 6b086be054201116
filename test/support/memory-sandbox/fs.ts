import { posix } from 'node:path';
import type { ToolError } from '../../../shared/errors.js';
import { err, ok, type Result } from '../../../shared/result.js';
import type { DirEntry } from '../../../shared/tool-result.js';

/** A directory of the in-memory tree. */
export interface MemDir {
  readonly type: 'dir';
  mode: number;
  readonly children: Map<string, MemNode>;
}
/** A regular file of the in-memory tree. */
export interface MemFile {
  readonly type: 'file';
  mode: number;
  data: Uint8Array;
}
/** A symbolic link of the in-memory tree. */
export interface MemLink {
  readonly type: 'symlink';
  mode: number;
  readonly target: string;
}
/** A node of the in-memory tree. */
export type MemNode = MemDir | MemFile | MemLink;

/** A result with a tool error. */
export type FsResult<T> = Result<T, ToolError>;

const MAX_LINKS = 40;

function fail(code: ToolError['code'], message: string): { ok: false; error: ToolError } {
  return err({ code, message });
}

/** A new empty directory. */
export function newDir(mode = 0o755): MemDir {
  return { type: 'dir', mode, children: new Map() };
}

/**
 * A file tree held in memory, with modes, symlinks and the sandbox's writable roots
 * (everything else is read-only, as the container's root filesystem). Paths are absolute.
 */
export class MemoryFs {
  readonly root: MemDir = newDir();

  constructor(
    private readonly writableRoots: readonly string[],
    private readonly diskBytes: number,
  ) {
    for (const dir of ['/workspace', '/tmp', '/home/agent', '/etc', '/usr/bin']) this.mkdirp(dir, true);
    this.dirAt('/tmp').mode = 0o1777;
  }

  private dirAt(path: string): MemDir {
    const r = this.lookup(path, true);
    if (!r.ok || r.value.type !== 'dir') throw new Error(`memory fs: ${path} is not a directory`);
    return r.value;
  }

  /** True when `path` lies under one of the writable roots. */
  writable(path: string): boolean {
    return this.writableRoots.some((r) => path === r || path.startsWith(r + '/'));
  }

  /** Resolves `path` to a node, following symlinks (the last one only when `follow`). */
  lookup(path: string, follow: boolean): FsResult<MemNode> {
    const r = this.resolve(path, follow, 0);
    return r.ok ? ok(r.value.node) : r;
  }

  /** The real path of `path` (symlinks in the parents resolved; the last one when `follow`). */
  realPath(path: string, follow: boolean): FsResult<string> {
    const r = this.resolve(path, follow, 0);
    return r.ok ? ok(r.value.path) : r;
  }

  private resolve(path: string, follow: boolean, depth: number): FsResult<{ node: MemNode; path: string }> {
    if (depth > MAX_LINKS) return fail('not_found', `${path}: too many levels of symbolic links`);
    const parts = posix.resolve('/', path).split('/').filter(Boolean);
    let node: MemNode = this.root;
    let real = '/';
    for (let i = 0; i < parts.length; i++) {
      if (node.type !== 'dir') return fail('not_a_directory', `${real} is not a directory`);
      const child = node.children.get(parts[i]);
      if (!child) return fail('not_found', `${posix.resolve('/', path)}: no such file or directory`);
      const childPath = posix.join(real, parts[i]);
      const last = i === parts.length - 1;
      if (child.type === 'symlink' && (!last || follow)) {
        const target = posix.resolve(real, child.target);
        const rest = parts.slice(i + 1).join('/');
        return this.resolve(rest ? posix.join(target, rest) : target, follow, depth + 1);
      }
      node = child;
      real = childPath;
    }
    return ok({ node, path: real });
  }

  /** The parent directory of `path` and the entry name, parents' symlinks resolved. */
  private parentOf(path: string): FsResult<{ dir: MemDir; name: string; path: string }> {
    const abs = posix.resolve('/', path);
    const parent = this.resolve(posix.dirname(abs), true, 0);
    if (!parent.ok) return parent;
    if (parent.value.node.type !== 'dir')
      return fail('not_a_directory', `${parent.value.path} is not a directory`);
    const name = posix.basename(abs);
    return ok({ dir: parent.value.node, name, path: posix.join(parent.value.path, name) });
  }

  private checkWritable(path: string): { ok: false; error: ToolError } | null {
    return this.writable(path)
      ? null
      : fail(
          'permission_denied',
          `${path}: read-only file system (only /workspace, /tmp and $HOME are writable)`,
        );
  }

  /** Bytes used by files under the writable roots (the tmpfs quota). */
  usedBytes(): number {
    let total = 0;
    const walk = (d: MemDir) => {
      for (const c of d.children.values()) {
        if (c.type === 'file') total += c.data.byteLength;
        else if (c.type === 'dir') walk(c);
      }
    };
    for (const r of this.writableRoots) {
      const n = this.lookup(r, true);
      if (n.ok && n.value.type === 'dir') walk(n.value);
    }
    return total;
  }

  /** Reads a file (following symlinks). */
  readFile(path: string): FsResult<Uint8Array> {
    const r = this.lookup(path, true);
    if (!r.ok) return r;
    if (r.value.type === 'dir')
      return fail('is_directory', `${path} is a directory; use list_dir to see its entries`);
    return ok((r.value as MemFile).data);
  }

  /** Writes a file, creating parents when `parents`; keeps an existing file's mode unless `mode` is given. */
  writeFile(path: string, data: Uint8Array, mode?: number, parents = true): FsResult<{ bytes: number }> {
    const abs = posix.resolve('/', path);
    if (parents) {
      const made = this.mkdir(posix.dirname(abs), true);
      if (!made.ok) return made;
    }
    const p = this.parentOf(abs);
    if (!p.ok) return p;
    const denied = this.checkWritable(p.value.path);
    if (denied) return denied;
    const existing = p.value.dir.children.get(p.value.name);
    let target = existing;
    if (existing?.type === 'symlink') {
      const real = this.realPath(abs, true);
      if (real.ok) return this.writeFile(real.value, data, mode, false);
      const dangling = posix.resolve(posix.dirname(p.value.path), existing.target);
      return this.writeFile(dangling, data, mode, false);
    }
    if (target?.type === 'dir') return fail('is_directory', `${abs} is a directory`);
    const old = target?.type === 'file' ? target.data.byteLength : 0;
    if (this.usedBytes() - old + data.byteLength > this.diskBytes) {
      return fail('disk_full', `${abs}: no space left on device (workspace limit ${this.diskBytes} bytes)`);
    }
    if (target?.type === 'file') {
      target.data = Uint8Array.from(data);
      if (mode !== undefined) target.mode = mode & 0o7777;
    } else {
      target = { type: 'file', mode: (mode ?? 0o644) & 0o7777, data: Uint8Array.from(data) };
      p.value.dir.children.set(p.value.name, target);
    }
    return ok({ bytes: data.byteLength });
  }

  /** Creates a directory (and its parents with `parents`); an existing directory is fine with `parents`. */
  mkdir(path: string, parents: boolean, force = false): FsResult<void> {
    const abs = posix.resolve('/', path);
    const existing = this.lookup(abs, true);
    if (existing.ok) {
      if (existing.value.type === 'dir')
        return parents ? ok(undefined) : fail('permission_denied', `${abs}: file exists`);
      return fail('not_a_directory', `${abs} exists and is not a directory`);
    }
    if (existing.error.code !== 'not_found') return existing;
    if (parents && abs !== '/') {
      const up = this.mkdir(posix.dirname(abs), true, force);
      if (!up.ok) return up;
    }
    const p = this.parentOf(abs);
    if (!p.ok) return p;
    if (!force) {
      const denied = this.checkWritable(p.value.path);
      if (denied) return denied;
    }
    p.value.dir.children.set(p.value.name, newDir());
    return ok(undefined);
  }

  private mkdirp(path: string, force: boolean): void {
    const r = this.mkdir(path, true, force);
    if (!r.ok) throw new Error(`memory fs: cannot create ${path}: ${r.error.message}`);
  }

  /** Creates a symlink at `path` pointing to `target` (not resolved). */
  symlink(target: string, path: string): FsResult<void> {
    const p = this.parentOf(path);
    if (!p.ok) return p;
    const denied = this.checkWritable(p.value.path);
    if (denied) return denied;
    if (p.value.dir.children.has(p.value.name)) return fail('permission_denied', `${path}: file exists`);
    p.value.dir.children.set(p.value.name, { type: 'symlink', mode: 0o777, target });
    return ok(undefined);
  }

  /** Removes a file or symlink, or a directory tree with `recursive`. */
  remove(path: string, recursive: boolean): FsResult<void> {
    const p = this.parentOf(path);
    if (!p.ok) return p;
    const node = p.value.dir.children.get(p.value.name);
    if (!node) return fail('not_found', `${posix.resolve('/', path)}: no such file or directory`);
    const denied = this.checkWritable(p.value.path);
    if (denied) return denied;
    if (node.type === 'dir' && !recursive) return fail('is_directory', `${path}: is a directory`);
    p.value.dir.children.delete(p.value.name);
    return ok(undefined);
  }

  /** Moves a file, link or directory; into `to` when `to` is an existing directory. */
  rename(from: string, to: string): FsResult<void> {
    const src = this.parentOf(from);
    if (!src.ok) return src;
    const node = src.value.dir.children.get(src.value.name);
    if (!node) return fail('not_found', `${from}: no such file or directory`);
    const dest = this.lookup(to, true);
    const target = dest.ok && dest.value.type === 'dir' ? posix.join(to, src.value.name) : to;
    const dst = this.parentOf(target);
    if (!dst.ok) return dst;
    const denied = this.checkWritable(src.value.path) ?? this.checkWritable(dst.value.path);
    if (denied) return denied;
    if (node.type === 'dir' && (dst.value.path + '/').startsWith(src.value.path + '/')) {
      return fail('permission_denied', `cannot move ${from} into itself`);
    }
    if (dst.value.dir.children.get(dst.value.name)?.type === 'dir')
      return fail('is_directory', `${target} is a directory`);
    src.value.dir.children.delete(src.value.name);
    dst.value.dir.children.set(dst.value.name, node);
    return ok(undefined);
  }

  /** Sets permission bits (following symlinks). */
  chmod(path: string, mode: number): FsResult<void> {
    const r = this.lookup(path, true);
    if (!r.ok) return r;
    const real = this.realPath(path, true);
    const denied = real.ok ? this.checkWritable(real.value) : null;
    if (denied) return denied;
    r.value.mode = mode & 0o7777;
    return ok(undefined);
  }

  /** Lists a directory (following symlinks to it); entries as `lstat` sees them. */
  listDir(path: string): FsResult<DirEntry[]> {
    const r = this.lookup(path, true);
    if (!r.ok) return r;
    if (r.value.type !== 'dir')
      return fail('not_a_directory', `${path} is not a directory; use read_file to read it`);
    return ok(
      [...r.value.children].map(([name, n]) => ({
        name,
        type: n.type,
        size: n.type === 'file' ? n.data.byteLength : n.type === 'symlink' ? Buffer.byteLength(n.target) : 0,
      })),
    );
  }

  /** Empties a directory (the workspace on reset, /tmp and $HOME on killStrays). */
  clear(path: string): void {
    this.dirAt(path).children.clear();
  }
}
