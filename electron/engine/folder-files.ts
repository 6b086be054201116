import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { readOpened } from './read-opened.js';
// A CommonJS module typed as ES: its `default` is the factory both ways (it sets factory.default).
import dockerignore from '@balena/dockerignore';
import { appError, type AppError } from '../../shared/errors.js';
import { err, ok, type Result } from '../../shared/result.js';
import type { WorkspaceFile } from '../../shared/task.js';

/**
 * The most a folder read as task files may hold: they travel in the task, recorded in every
 * trace (a Harbor task's tests/, the oracle's solution/).
 */
export const FOLDER_FILES_MAX_BYTES = 64 * 1024 * 1024;

/**
 * The most a world's own text file may hold (a devcontainer.json, a task.toml, an
 * instruction.md): each is read whole into memory, and the instruction goes into every
 * model request and trace. Far past any real one.
 */
export const WORLD_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Why `path` (a file or folder a world names: a Harbor task's instruction.md or tests/, a
 * devcontainer's build context) is not the world's own: a symbolic link, or a path whose
 * real place lies outside `root` (by `..` or through a link on the way), would read a file of
 * this machine into the task — /proc/self/environ as the goal, ~/.ssh as the verifier's
 * files, the home folder as a build's context. Null when it is inside; a missing path is the
 * caller's to report. `what` names the path for the message, `fix` says what to do instead.
 */
export function outsideWorld(
  root: string,
  path: string,
  what: string,
  fix = `put the ${what.endsWith('/') ? 'folder' : 'file'} itself there`,
): AppError | null {
  const refusal = (shown: string, link: boolean, out: boolean) =>
    appError(
      'invalid_task',
      `${what} is ${link ? `a symbolic link to ${shown}` : shown}${out ? `, outside ${root}` : ''}: stepbox reads nothing of this machine through a world's links or past its folder; ${fix}`,
    );
  // As written first (`..`, an absolute path), before the disk is touched: the refusal reads
  // the same whether the place outside exists or not, so a world cannot probe the machine.
  const written = resolve(root, path);
  if (escapes(relative(resolve(root), written))) return refusal(written, false, true);
  let real: string;
  let link: boolean;
  // realpathSync.native: the JS one folds `here/..` in a link's target by its text, where the
  // kernel (and every read after this check) goes through `here` first and climbs from there.
  try {
    link = lstatSync(path).isSymbolicLink();
    real = realpathSync.native(path);
  } catch {
    return null;
  }
  const out = escapes(relative(realpathSync.native(root), real));
  if (!link && !out) return null;
  return refusal(real, link, out);
}

/**
 * Why the build context `context` (a folder a world names inside `root`: a task file's
 * sandbox.build, a devcontainer's build context, a Harbor task's environment/) is not the
 * world's own to send to the engine: the folder itself is checked as any world path
 * ({@link outsideWorld}), then everything a build would send of it ({@link buildContextEntries}).
 */
export function outsideBuildContext(
  root: string,
  context: string,
  what: string,
  fix: string,
  dockerfile?: string,
): AppError | null {
  const outside = outsideWorld(root, context, what, fix);
  if (outside) return outside;
  const sent = buildContextEntries(context, what, dockerfile);
  return sent.ok ? null : sent.error;
}

/** One path a build sends of its context, as this machine has it. */
export interface BuildContextEntry {
  /** Relative to the context, `/`-separated. */
  readonly path: string;
  readonly full: string;
  readonly kind: 'file' | 'dir' | 'symlink';
  /** Permission bits. */
  readonly mode: number;
  /** Modification time, epoch seconds. */
  readonly mtime: number;
  /** A link's target, as written. */
  readonly target?: string;
}

/** What a special file is, for a refusal naming it. */
function specialKind(st: Stats): string | null {
  if (st.isFIFO()) return 'a fifo (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  return null;
}

/**
 * What a build sends of the context `context`, by Docker's own rules (the `docker build`
 * client's): every path `.dockerignore` keeps, with its `!` exceptions; a left-out folder is
 * walked only when an exception names a path under it, and is not sent itself; `.dockerignore`
 * and the Dockerfile (`dockerfile`, relative to the context) are always sent, the engine
 * dropping them after reading when the rules leave them out. Each folder comes before what it
 * holds. dockerode's own filter matches the rules against absolute paths, so it sent what a
 * rule left out in a nested folder (`secret/**`, `sub/dir/file`), and the engine's classic
 * builder COPYs it into the image: the build sends these entries, no more.
 *
 * Refused, naming the path and the fix (leave it out, or put the file itself there): a symbolic
 * link that leaves the context, as written (`/etc/shadow`, `../../..`) or where this machine
 * resolves it (a chain, a link to a folder on the way) — the engine would get it as a link, but
 * no image needs one; a fifo, socket or device (a tar carries files, folders and links: the
 * engine client failed on them with "unsupported type"); a file or folder this machine cannot
 * read. `.dockerignore` itself is read as a world file (never through a link). An empty list
 * when `context` is not a folder (the build reports that).
 */
export function buildContextEntries(
  context: string,
  what: string,
  dockerfile = 'Dockerfile',
): Result<BuildContextEntry[], AppError> {
  const top = resolve(context);
  let real: string;
  try {
    if (!lstatSync(top).isDirectory()) return ok([]);
    real = realpathSync.native(top);
  } catch {
    return ok([]);
  }
  const ignoreFile = join(top, '.dockerignore');
  let rules: string[] = [];
  try {
    lstatSync(ignoreFile);
    const text = readWorldFile(top, ignoreFile);
    if (!text.ok) return text;
    // As Docker reads it: trimmed lines, `#` comments out.
    rules = text.value
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
  } catch {
    // No .dockerignore: everything is sent.
  }
  const ignore = dockerignore.default({ ignorecase: false }).add(rules);
  const dockerfilePath = dockerfile.split(sep).join('/');
  // The client sends the build's own two files whatever the rules say (TrimBuildFilesFromExcludes).
  for (const own of ['.dockerignore', dockerfilePath])
    if (ignore.ignores(own)) {
      rules.push(`!${own}`);
      ignore.add(`!${own}`);
    }
  const exceptions = rules
    .filter((line) => line.startsWith('!'))
    .map((line) => posix.normalize(line.slice(1).trim()).replace(/^\/+/, ''));
  const leaveOut = (rel: string) => `leave it out of the build with a line ${rel} in ${ignoreFile}`;
  const entries: BuildContextEntry[] = [];
  const walk = (dir: string): AppError | null => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch (e) {
      const rel = relative(top, dir).split(sep).join('/');
      return appError(
        'invalid_task',
        `${what}: the folder ${rel} in the build context cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give yourself the right (chmod u+rx), or ${leaveOut(rel)}`,
      );
    }
    for (const name of names) {
      const path = join(dir, name);
      const rel = relative(top, path).split(sep).join('/');
      const st = lstatSync(path);
      if (ignore.ignores(rel)) {
        // Docker walks a left-out folder only for an exception under it; the folder itself stays out.
        if (st.isDirectory() && exceptions.some((x) => `${x}/`.startsWith(`${rel}/`))) {
          const e = walk(path);
          if (e) return e;
        }
        continue;
      }
      const entry = { path: rel, full: path, mode: st.mode & 0o7777, mtime: Math.floor(st.mtimeMs / 1000) };
      if (st.isDirectory()) {
        entries.push({ ...entry, kind: 'dir' });
        const e = walk(path);
        if (e) return e;
        continue;
      }
      const special = specialKind(st);
      if (special)
        return appError(
          'invalid_task',
          `${what}: ${rel} in the build context is ${special}: a build sends only files, folders and links; delete it, or ${leaveOut(rel)}`,
        );
      if (st.isFile()) {
        try {
          accessSync(path, constants.R_OK);
        } catch (e) {
          return appError(
            'invalid_task',
            `${what}: ${rel} in the build context cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): give yourself the right (chmod u+r), or ${leaveOut(rel)}`,
          );
        }
        entries.push({ ...entry, kind: 'file' });
        continue;
      }
      const target = readlinkSync(path);
      // As written first: the refusal reads the same whether the place outside exists or not.
      const written = resolve(dir, target);
      let place = escapes(relative(top, written)) ? written : null;
      if (!place) {
        try {
          const resolved = realpathSync.native(path);
          if (escapes(relative(real, resolved))) place = resolved;
        } catch {
          // Dangling or a loop: the engine resolves it inside the context, this machine is not read.
        }
      }
      if (place)
        return appError(
          'invalid_task',
          `${what}: ${rel} in the build context is a symbolic link to ${target}${place === written ? '' : ` (${place})`}, outside ${top}: stepbox sends no link out of a world's folder to the engine; put the file itself there (cp --dereference), delete the link, or ${leaveOut(rel)}`,
        );
      entries.push({ ...entry, kind: 'symlink', target });
    }
    return null;
  };
  const e = walk(top);
  return e ? err(e) : ok(entries);
}

/** Whether a path relative to a folder (`relative(folder, p)`) leaves it. */
function escapes(inside: string): boolean {
  return inside === '..' || inside.startsWith('../') || isAbsolute(inside);
}

/**
 * A world's own text file (see {@link outsideWorld}): a regular file inside `root`, never
 * read through a link, at most `maxBytes`; errors name the file and the fix.
 */
export function readWorldFile(
  root: string,
  path: string,
  maxBytes: number = WORLD_FILE_MAX_BYTES,
): Result<string, AppError> {
  const outside = outsideWorld(root, path, path);
  if (outside) return err(outside);
  let fd: number;
  try {
    // O_NOFOLLOW: a link put there after the check is not followed; O_NONBLOCK: a fifo never blocks the open.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return err(
      code === 'ENOENT'
        ? appError('not_found', `${path} does not exist`)
        : appError(
            'invalid_task',
            code === 'ELOOP'
              ? `${path} is a symbolic link; put the file itself there`
              : `cannot read ${path} (${code ?? (e as Error).message}): check its permissions`,
          ),
    );
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile())
      return err(appError('invalid_task', `${path} is not a regular file; put the file itself there`));
    if (st.size > maxBytes)
      return err(
        appError(
          'invalid_task',
          `${path} holds ${st.size} bytes, more than the ${maxBytes} a world's ${path.split('/').pop()} may: it is read whole into memory (and an instruction into every request); shorten it`,
        ),
      );
    return ok(readOpened(fd, st.size).toString('utf8'));
  } finally {
    closeSync(fd);
  }
}

/**
 * The files of `dir` (recursively) as task files, text or base64; symlinks and special files
 * are refused, `dir` itself a link or (through one) outside `root` too.
 */
export function readFolderFiles(
  dir: string,
  what: string,
  root: string = dir,
): Result<Record<string, WorkspaceFile>, AppError> {
  const outside = outsideWorld(root, dir, `${what}/`);
  if (outside) return err(outside);
  const files: Record<string, WorkspaceFile> = {};
  let total = 0;
  const walk = (d: string): AppError | null => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      const rel = relative(dir, path).split('\\').join('/');
      const st = lstatSync(path);
      if (st.isDirectory()) {
        const e = walk(path);
        if (e) return e;
        continue;
      }
      if (!st.isFile())
        return appError(
          'invalid_task',
          `${what}/${rel} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}; put the file itself there`,
        );
      total += st.size;
      if (total > FOLDER_FILES_MAX_BYTES)
        return appError(
          'invalid_task',
          `${what} holds more than ${FOLDER_FILES_MAX_BYTES / 1024 / 1024} MiB (at ${rel}); the verifier's files travel in every trace, so keep big data in the image`,
        );
      const bytes = readFileSync(path);
      const text = bytes.toString('utf8');
      files[rel] = Buffer.from(text, 'utf8').equals(bytes) ? text : { base64: bytes.toString('base64') };
    }
    return null;
  };
  const e = walk(dir);
  return e ? err(e) : ok(files);
}
