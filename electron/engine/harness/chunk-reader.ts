import * as fs from 'node:fs';
import { constants } from 'node:fs';
import { hash } from 'node:crypto';
import { Worker } from 'node:worker_threads';

/**
 * Reading a folder import's chunks of small files (see folder-import.ts) on a thread of its
 * own: each file read straight into the chunk's buffer and hashed there, while the main
 * thread sends the chunk before to the sandbox and the store. On this 2-core machine the
 * main thread was the import's bottleneck (reads and hashes of 10,000 files, then the sends
 * and writes, one after another); the reads and hashes now take the other core's gaps.
 */

/** What became of one file of a chunk: read at `at` and hashed, why not, or `'again'` (its size changed). */
export type ChunkFile = { at: number; size: number; hash: string } | { why: string } | 'again';

/** A chunk read: its buffer (the files at their places, in order) and each file's outcome. */
export interface ReadChunk {
  readonly slab: Buffer;
  readonly files: readonly ChunkFile[];
}

/** Reads chunks of files, at most a few ahead; `close` lets its thread go. */
export interface ChunkReader {
  read(paths: readonly string[], sizes: readonly number[]): Promise<ReadChunk>;
  /** Whether reads go to the thread from now: true once it is up, false when it could not start. */
  readonly threaded: Promise<boolean>;
  close(): void;
}

/** O_NOFOLLOW: a symlink put where a listed file was is never followed; O_NONBLOCK: a fifo never blocks the open. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * `readFiles(paths, sizes)` as source text, the one copy both this thread and the worker run
 * (a worker started from a string has no module to import it from; a function's own source
 * is not it either: a test runner rewrites its imports). It reads each file straight into one
 * buffer at its place (listed sizes, in order), synchronously: the four calls a file takes
 * cost microseconds each, while a trip through the thread pool each cost ~3x the CPU (10,000
 * files). It names only `fs`, `hash` and `READ_FLAGS`, given to it.
 */
const READ_FILES_SOURCE = `
function readInto(path, slab, at, size) {
  let fd;
  try { fd = fs.openSync(path, READ_FLAGS); } catch (e) { return { why: 'cannot be read (' + e.code + ')' }; }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return { why: 'it is no longer a file' };
    if (stat.size !== size) return 'again';
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, slab, at + got, size - got, got);
      // Shorter than it said: it changed while read.
      if (n === 0) return 'again';
      got += n;
    }
    return 'read';
  } catch (e) {
    return { why: 'cannot be read (' + e.code + ')' };
  } finally {
    fs.closeSync(fd);
  }
}
function readFiles(paths, sizes) {
  // Its own memory (not the pool's): the worker transfers it.
  const slab = Buffer.allocUnsafeSlow(sizes.reduce((a, b) => a + b, 0));
  let at = 0;
  const files = paths.map((path, k) => {
    const size = sizes[k];
    const r = readInto(path, slab, at, size);
    at += size;
    return r === 'read' ? { at: at - size, size, hash: hash('sha256', slab.subarray(at - size, at), 'hex') } : r;
  });
  return { slab, files };
}
`;

/** The files into one buffer, each at its place, on this thread (see READ_FILES_SOURCE). */
export const readFiles = new Function('fs', 'hash', 'READ_FLAGS', `${READ_FILES_SOURCE}\nreturn readFiles;`)(
  fs,
  hash,
  READ_FLAGS,
) as (paths: readonly string[], sizes: readonly number[]) => ReadChunk;

/**
 * The worker: {@link READ_FILES_SOURCE} after the names it uses (run with `eval`: no file to
 * find next to the compiled one, in the CLI, the app or the tests alike). Each request
 * `{ id, paths, sizes }` is answered `{ id, slab, files }`, the buffer transferred, not copied.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { hash } = require('node:crypto');
const READ_FLAGS = ${READ_FLAGS};
${READ_FILES_SOURCE}
parentPort.on('message', ({ id, paths, sizes }) => {
  const { slab, files } = readFiles(paths, sizes);
  parentPort.postMessage({ id, slab: slab.buffer, files }, [slab.buffer]);
});
`;

/**
 * A reader on a thread of its own; until the thread is up (a thread's start took 30 ms
 * quiet, 400 ms on a loaded machine), or when it cannot be had (or dies), chunks are read
 * here, as {@link readFiles} does.
 */
export function chunkReader(): ChunkReader {
  let worker: Worker | undefined;
  let online = false;
  let threaded: Promise<boolean>;
  try {
    const w = (worker = new Worker(WORKER_SOURCE, { eval: true }));
    w.unref();
    threaded = new Promise((resolve) => {
      w.once('online', () => resolve((online = true)));
      w.once('exit', () => resolve(false));
    });
  } catch {
    worker = undefined;
    threaded = Promise.resolve(false);
  }
  let next = 0;
  const waiting = new Map<
    number,
    { paths: readonly string[]; sizes: readonly number[]; resolve: (r: ReadChunk) => void }
  >();
  // The thread gone: what it was asked and did not answer is read here.
  const fallBack = () => {
    worker = undefined;
    for (const [id, w] of waiting) {
      waiting.delete(id);
      w.resolve(readFiles(w.paths, w.sizes));
    }
  };
  worker?.on('message', (m: { id: number; slab: ArrayBuffer; files: ChunkFile[] }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    w?.resolve({ slab: Buffer.from(m.slab), files: m.files });
  });
  worker?.on('error', fallBack);
  worker?.on('exit', fallBack);
  return {
    threaded,
    read(paths, sizes) {
      if (!worker || !online) return Promise.resolve(readFiles(paths, sizes));
      const id = next++;
      return new Promise((resolve) => {
        waiting.set(id, { paths, sizes, resolve });
        worker!.postMessage({ id, paths, sizes });
      });
    },
    close() {
      const w = worker;
      worker = undefined;
      void w?.terminate();
    },
  };
}
