import { createHash, randomInt } from 'node:crypto';
import { lstat, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readOpened } from '../read-opened.js';
import {
  appendFileSync,
  closeSync,
  rename as renameCb,
  rm as rmCb,
  writeFile as writeFileCb,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  SnapshotCorruptError,
  type BlobWriter,
  type OwnBlob,
  type SnapshotManifest,
  type SnapshotStore,
  type StoredBlob,
} from './snapshot-store.js';
import { sha256Hex, sha256HexOfParts } from '../sha256.js';
import { textBatches } from '../text-batches.js';
import { manifestId, manifestParts } from './manifest.js';

const HEX64 = /^[0-9a-f]{64}$/;
/** Files up to this size are written, and ranges up to it read, synchronously (see writeAtomic). */
const SYNC_WRITE_MAX = 1024 * 1024;
/** Manifests kept in memory once read or written (see getManifest). */
const MANIFESTS_KEPT = 4;
/** A blob key as listed: a hash, or a partial write `<hash>.<pid>.<rand>.tmp` (see writeAtomic). */
const BLOB_KEY = /^[0-9a-f]{64}(\.\d+\.[0-9a-f]{8}\.tmp)?$/;

/** Blob files written at once by {@link DiskSnapshotStore.putOwnBlobs} (the thread pool runs four). */
const OWN_WRITES_AT_ONCE = 8;

/**
 * Blobs of at most this size, given {@link PACK_MIN} or more at once to putOwnBlobs (a
 * folder import's chunk of small files), go into one pack file instead of a file each.
 */
const PACK_BLOB_MAX = 1024 * 1024;
const PACK_MIN = 16;
/** A pack: `packs/<sha256 of its index>.pack`; what a removal took out of it: `….dead`. */
const PACK_NAME = /^([0-9a-f]{64})\.pack$/;
/** A pack's partial write (listed for gc, as a blob's is): `packs/<id>.pack.<pid>.<8 hex>.tmp`. */
const PACK_TMP_KEY = /^packs\/[0-9a-f]{64}\.pack\.\d+\.[0-9a-f]{8}\.tmp$/;

/** Where a packed blob lies. */
interface Packed {
  readonly pack: string;
  readonly offset: number;
  readonly size: number;
}

/**
 * A pack's bytes: a 4-byte big-endian length, the index (JSON `[[hash, size], …]`, the
 * blobs in order), then the blobs one after another. Its name is the index's sha256.
 */
function packHead(blobs: readonly OwnBlob[]): { id: string; head: Buffer } {
  const index = Buffer.from(JSON.stringify(blobs.map((b) => [b.hash, b.content.length])));
  const head = Buffer.allocUnsafe(4 + index.length);
  head.writeUInt32BE(index.length, 0);
  index.copy(head, 4);
  return { id: sha256Hex(index), head };
}

/** The blobs a pack file holds, by hash, read from its index; none when it is damaged. */
function readPackIndex(path: string, pack: string): Map<string, Packed> {
  const found = new Map<string, Packed>();
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return found;
  }
  try {
    const total = fstatSync(fd).size;
    const len = Buffer.alloc(4);
    if (readSync(fd, len, 0, 4, 0) !== 4) return found;
    const n = len.readUInt32BE(0);
    if (n > total - 4) return found;
    const index = Buffer.allocUnsafe(n);
    if (readSync(fd, index, 0, n, 4) !== n) return found;
    // Named by its index's hash: a pack whose index was damaged is not read at all.
    if (sha256Hex(index) !== pack) return found;
    const list = JSON.parse(index.toString('utf8')) as unknown;
    if (!Array.isArray(list)) return found;
    let offset = 4 + n;
    for (const item of list) {
      if (!Array.isArray(item)) return new Map();
      const [hash, size] = item as unknown[];
      if (
        typeof hash !== 'string' ||
        !HEX64.test(hash) ||
        !Number.isSafeInteger(size) ||
        (size as number) < 0
      )
        return new Map();
      found.set(hash, { pack, offset, size: size as number });
      offset += size as number;
    }
    // Cut short: none of it (each blob is checked against its hash on read anyway).
    return offset <= total ? found : new Map();
  } catch {
    return new Map();
  } finally {
    closeSync(fd);
  }
}

/**
 * Temp names `<final>.<pid>.<8 hex>.tmp` (the form BLOB_KEY lists): a counter from a random
 * start, unique within this process, as the pid is between processes. (Random bytes per
 * name cost a folder import of 10,000 files ~40 ms of the event loop.)
 */
let tmpSeq = randomInt(0x7fffffff);
function tmpName(path: string): string {
  tmpSeq = (tmpSeq + 1) >>> 0;
  return `${path}.${process.pid}.${tmpSeq.toString(16).padStart(8, '0')}.tmp`;
}

/** `content` written to `tmp` then renamed to `path`, in the thread pool (callbacks: no promise per hop). */
function writeThenRename(tmp: string, path: string, content: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    writeFileCb(tmp, content, (e) => {
      if (e) return rmCb(tmp, { force: true }, () => reject(e));
      renameCb(tmp, path, (e2) => (e2 ? rmCb(tmp, { force: true }, () => reject(e2)) : resolve()));
    });
  });
}

function checkHash(hash: string): void {
  if (!HEX64.test(hash)) throw new Error(`"${hash}" is not a sha256 hex digest`);
}

/**
 * Blobs up to this size are read synchronously: the read itself takes microseconds, while
 * an async read is four thread-pool hops (open, stat, read, close), each a wait of its own
 * when the pool is busy (a restore's five 10 KiB blobs took 4.7 ms that way under load).
 */
const SYNC_READ_BYTES = 256 * 1024;

/** The file's bytes when it is small (see SYNC_READ_BYTES), else undefined: the caller reads it async. */
function readSmall(path: string): Buffer | undefined {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > SYNC_READ_BYTES) return undefined;
    return readOpened(fd, size);
  } finally {
    closeSync(fd);
  }
}

/** An fs error as a short phrase: `missing: PATH`, or its code and path. */
function describeFsError(e: unknown, path: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? `missing: ${path}` : `${code ?? (e as Error).message}: ${path}`;
}

/** True when `path` is a folder itself, not a symlink to one (nor absent). */
async function isRealDir(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** The names in a directory; none when it does not exist (yet). */
async function readdirOrEmpty(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/**
 * A content-addressed {@link SnapshotStore} on disk: blobs under `dir/blobs/ab/cdef…` (or,
 * many small ones stored at once, in a pack `dir/packs/<id>.pack`, see writePack),
 * manifests under `dir/manifests/<id>.json` (id = sha256 of the canonical JSON). Every
 * file is written to a temp name and renamed, so a crash never leaves a torn blob; blobs
 * are verified on put (a blob's name is its hash, so a later tamper is caught by the
 * restore's in-container verification, not silently trusted).
 */
export class DiskSnapshotStore implements SnapshotStore {
  private readonly known = new Set<string>();
  /** Blobs in pack files (see putOwnBlobs), as far as read: hash -> where. */
  private readonly packed = new Map<string, Packed>();
  /** Blobs of each pack not removed: a pack none is left of is deleted. */
  private readonly packLive = new Map<string, number>();
  /** Pack files whose index was read; and the packs folder's mtime then (see refreshPacks). */
  private readonly packsRead = new Set<string>();
  private packsStamp = -1;

  constructor(readonly dir: string) {}

  private get packsDir(): string {
    return join(this.dir, 'packs');
  }

  /**
   * Reads the index of every pack not read yet, when the packs folder changed since the
   * last look (one stat: a blob this store lacks costs no more than that).
   */
  private refreshPacks(): void {
    let stamp: number;
    try {
      stamp = statSync(this.packsDir).mtimeMs;
    } catch {
      return;
    }
    if (stamp === this.packsStamp) return;
    this.packsStamp = stamp;
    for (const name of readdirSync(this.packsDir)) {
      const m = PACK_NAME.exec(name);
      if (!m || this.packsRead.has(m[1])) continue;
      this.packsRead.add(m[1]);
      const dead = this.deadOf(m[1]);
      let live = 0;
      for (const [hash, where] of readPackIndex(join(this.packsDir, name), m[1])) {
        if (dead.has(hash) || this.packed.has(hash)) continue;
        this.packed.set(hash, where);
        live++;
      }
      this.packLive.set(m[1], live);
    }
  }

  /** The blobs removed from a pack (its `.dead` list; a torn last line names nothing). */
  private deadOf(pack: string): Set<string> {
    try {
      return new Set(readFileSync(join(this.packsDir, `${pack}.dead`), 'utf8').split('\n'));
    } catch {
      return new Set();
    }
  }

  /** Where a packed blob lies, looking for packs written since the last look when it is not known. */
  private findPacked(hash: string): Packed | undefined {
    const where = this.packed.get(hash);
    if (where) return where;
    this.refreshPacks();
    return this.packed.get(hash);
  }

  /** Bytes [offset, offset + length) of a packed blob, fewer at its end (blobs in packs are small: read at once). */
  private readPacked(where: Packed, offset: number, length: number): Buffer {
    const n = Math.max(0, Math.min(length, where.size - offset));
    const fd = openSync(join(this.packsDir, `${where.pack}.pack`), 'r');
    try {
      const buf = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const bytesRead = readSync(fd, buf, got, n - got, where.offset + offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return buf.subarray(0, got);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Many small blobs as one pack file: one create and one rename instead of one each (a
   * folder import's 10,000 files cost ~1 s of a core as files). Written to a temp name and
   * renamed, as a blob is: a pack is there whole or not at all.
   */
  private async writePack(blobs: readonly OwnBlob[]): Promise<void> {
    const { id, head } = packHead(blobs);
    const dir = this.packsDir;
    if (!this.dirs.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.dirs.add(dir);
    }
    const path = join(dir, `${id}.pack`);
    await writeThenRename(tmpName(path), path, Buffer.concat([head, ...blobs.map((b) => b.content)]));
    // The same index is the same blobs: any removed from an earlier copy are back.
    rmSync(join(dir, `${id}.dead`), { force: true });
    this.packsRead.add(id);
    let offset = head.length;
    let live = 0;
    for (const b of blobs) {
      if (!this.packed.has(b.hash)) {
        this.packed.set(b.hash, { pack: id, offset, size: b.content.length });
        live++;
      }
      offset += b.content.length;
      this.known.add(b.hash);
    }
    this.packLive.set(id, (this.packLive.get(id) ?? 0) + live);
  }

  /** Path of a blob file. */
  blobPath(hash: string): string {
    return join(this.dir, 'blobs', hash.slice(0, 2), hash.slice(2));
  }

  private manifestPath(id: string): string {
    return join(this.dir, 'manifests', `${id}.json`);
  }

  /** Writes `content` (bytes, or text in parts written one after another) to `path` through a temp name. */
  private async writeAtomic(
    path: string,
    dir: string,
    content: Uint8Array | readonly string[],
  ): Promise<void> {
    const tmp = tmpName(path);
    const size = content instanceof Uint8Array ? content.length : content.reduce((n, p) => n + p.length, 0);
    if (size <= SYNC_WRITE_MAX) {
      // Small (the usual blob, a manifest): written at once. Each await of the async path
      // is a trip through libuv's thread pool, several milliseconds on a loaded machine,
      // while these writes take microseconds.
      try {
        if (!this.dirs.has(dir)) mkdirSync(dir, { recursive: true });
        this.dirs.add(dir);
        if (content instanceof Uint8Array) writeFileSync(tmp, content);
        else {
          const fd = openSync(tmp, 'w');
          try {
            // writeFileSync on an fd writes all of each part, from where the last one ended.
            for (const part of content) writeFileSync(fd, part);
          } finally {
            closeSync(fd);
          }
        }
        renameSync(tmp, path);
      } catch (e) {
        rmSync(tmp, { force: true });
        throw e;
      }
      return;
    }
    await mkdir(dir, { recursive: true });
    try {
      if (content instanceof Uint8Array) await writeFile(tmp, content);
      else {
        const file = await open(tmp, 'w');
        try {
          for (const part of content) await file.writeFile(part);
        } finally {
          await file.close();
        }
      }
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw e;
    }
  }

  /** Directories this store made (or found) already. */
  private readonly dirs = new Set<string>();

  /** Whether the store holds a blob. */
  async hasBlob(hash: string): Promise<boolean> {
    checkHash(hash);
    if (this.known.has(hash) || this.packed.has(hash)) return true;
    // One stat, at once: a trip through the thread pool costs far more than the stat.
    if (!existsSync(this.blobPath(hash)) && !this.findPacked(hash)) return false;
    this.known.add(hash);
    return true;
  }

  /** Stores a blob after checking that its content hashes to `hash`. */
  async putBlob(hash: string, content: Uint8Array): Promise<void> {
    checkHash(hash);
    const actual = sha256Hex(content);
    if (actual !== hash) throw new Error(`blob content hashes to ${actual}, not ${hash}`);
    if (await this.hasBlob(hash)) return;
    await this.writeAtomic(this.blobPath(hash), join(this.dir, 'blobs', hash.slice(0, 2)), content);
    this.known.add(hash);
  }

  /**
   * Stores blobs hashed by the caller from these bytes in this process (see
   * {@link SnapshotStore.putOwnBlobs}): not hashed again (the hash is of the caller's own
   * reads; nothing outside the process touched the bytes). {@link PACK_MIN} or more small
   * ones go into one pack (see writePack); the others each to a temp name and renamed as
   * putBlob does, {@link OWN_WRITES_AT_ONCE} at once in the thread pool, so the event loop
   * goes on (a folder import sends the same bytes to the sandbox meanwhile).
   */
  async putOwnBlobs(blobs: readonly OwnBlob[]): Promise<void> {
    let todo: OwnBlob[] = [];
    const seen = new Set<string>();
    for (const b of blobs) {
      checkHash(b.hash);
      if (seen.has(b.hash) || this.known.has(b.hash) || this.packed.has(b.hash)) continue;
      seen.add(b.hash);
      todo.push(b);
    }
    const small = todo.filter((b) => b.content.length <= PACK_BLOB_MAX);
    let packing: Promise<void> | undefined;
    if (small.length >= PACK_MIN) {
      packing = this.writePack(small);
      todo = todo.filter((b) => b.content.length > PACK_BLOB_MAX);
    }
    let next = 0;
    const worker = async () => {
      while (next < todo.length) {
        const { hash, content } = todo[next++];
        const dir = join(this.dir, 'blobs', hash.slice(0, 2));
        if (!this.dirs.has(dir)) {
          mkdirSync(dir, { recursive: true });
          this.dirs.add(dir);
        }
        const path = this.blobPath(hash);
        // Written again when it is there already: the same bytes, renamed over atomically
        // (a stat first would cost every new blob a syscall to spare the rare old one a write).
        await writeThenRename(tmpName(path), path, content);
        this.known.add(hash);
      }
    };
    await Promise.all([
      packing,
      ...Array.from({ length: Math.min(OWN_WRITES_AT_ONCE, todo.length) }, worker),
    ]);
  }

  /**
   * The blob's content, checked against its name: a blob that is missing or damaged on
   * disk rejects with {@link SnapshotCorruptError} naming the file.
   */
  async getBlob(hash: string): Promise<Uint8Array> {
    if (!HEX64.test(hash))
      throw new SnapshotCorruptError(`snapshot blob id "${hash}" is not a sha256 digest`);
    let path = this.blobPath(hash);
    let where = this.packed.get(hash);
    let content: Buffer;
    try {
      if (!where && !existsSync(path)) where = this.findPacked(hash);
      if (where) path = join(this.packsDir, `${where.pack}.pack`);
      content = where ? this.readPacked(where, 0, where.size) : (readSmall(path) ?? (await readFile(path)));
    } catch (e) {
      throw new SnapshotCorruptError(`snapshot blob ${hash} cannot be read (${describeFsError(e, path)})`);
    }
    if (where && content.length !== where.size)
      throw new SnapshotCorruptError(`snapshot blob ${hash} in ${path} is damaged: it is cut short`);
    const actual = sha256Hex(content);
    if (actual !== hash)
      throw new SnapshotCorruptError(`snapshot blob ${path} is damaged: its content hashes to ${actual}`);
    return content;
  }

  /**
   * Streams a blob to a temp file, hashing as it goes; commit renames it into place only
   * when the content hashes to `hash` (memory stays one chunk whatever the blob's size).
   */
  async openBlobWriter(hash: string): Promise<BlobWriter> {
    checkHash(hash);
    const dir = join(this.dir, 'blobs', hash.slice(0, 2));
    await mkdir(dir, { recursive: true });
    const path = this.blobPath(hash);
    const tmp = tmpName(path);
    const file = await open(tmp, 'w');
    const digest = createHash('sha256');
    let open_ = true;
    const close = async () => {
      if (open_) {
        open_ = false;
        await file.close();
      }
    };
    return {
      write: async (chunk) => {
        digest.update(chunk);
        await file.write(chunk);
      },
      commit: async () => {
        await close();
        const actual = digest.digest('hex');
        if (actual !== hash) {
          await rm(tmp, { force: true });
          throw new Error(`blob content hashes to ${actual}, not ${hash}`);
        }
        await rename(tmp, path);
        this.known.add(hash);
      },
      abort: async () => {
        await close();
        await rm(tmp, { force: true });
      },
    };
  }

  /**
   * Bytes [offset, offset + length) of a blob, fewer at its end. Reads of the same range
   * under way at once are one read (branches forked from one step stage the same blobs).
   */
  readBlobRange(hash: string, offset: number, length: number): Promise<Uint8Array> {
    checkHash(hash);
    const key = `${hash}:${offset}:${length}`;
    let read = this.reading.get(key);
    if (!read) {
      read = this.readRange(hash, offset, length);
      this.reading.set(key, read);
      const done = () => this.reading.delete(key);
      read.then(done, done);
    }
    return read;
  }

  private readonly reading = new Map<string, Promise<Uint8Array>>();

  private async readRange(hash: string, offset: number, length: number): Promise<Uint8Array> {
    const where =
      this.packed.get(hash) ?? (existsSync(this.blobPath(hash)) ? undefined : this.findPacked(hash));
    if (where) return this.readPacked(where, offset, length);
    if (length <= SYNC_WRITE_MAX) return this.readSmallRange(hash, offset, length);
    const file = await open(this.blobPath(hash), 'r');
    try {
      // No bigger than what is there: a 10 KiB blob read for a 4 MiB chunk's room gets 10 KiB.
      const n = Math.max(0, Math.min(length, (await file.stat()).size - offset));
      const buf = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await file.read(buf, got, n - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return buf.subarray(0, got);
    } finally {
      await file.close();
    }
  }

  /**
   * A small range read at once (see writeAtomic: a restore stages a thousand small blobs,
   * and four trips through the thread pool each would cost far more than the reads).
   */
  private readSmallRange(hash: string, offset: number, length: number): Uint8Array {
    const fd = openSync(this.blobPath(hash), 'r');
    try {
      const n = Math.max(0, Math.min(length, fstatSync(fd).size - offset));
      const buf = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const bytesRead = readSync(fd, buf, got, n - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return buf.subarray(0, got);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Every blob file, with its size. Partial writes of an interrupted process are listed
   * too, under their temp name: no manifest references them, so gc removes them. Only
   * real folders and files count: a symlink planted anywhere under `dir` is never
   * followed (gc deletes what this lists, and must not delete outside the store).
   */
  async listBlobs(): Promise<readonly StoredBlob[]> {
    const root = join(this.dir, 'blobs');
    if (!(await isRealDir(this.dir))) return [];
    const blobs: StoredBlob[] = [];
    for (const prefix of (await isRealDir(root)) ? await readdirOrEmpty(root) : []) {
      if (!(await isRealDir(join(root, prefix)))) continue;
      for (const rest of await readdirOrEmpty(join(root, prefix))) {
        const hash = prefix + rest;
        if (!BLOB_KEY.test(hash)) continue;
        const st = await lstat(join(root, prefix, rest));
        if (st.isFile()) blobs.push({ hash, size: st.size });
      }
    }
    if (await isRealDir(this.packsDir)) {
      this.refreshPacks();
      const loose = new Set(blobs.map((b) => b.hash));
      for (const [hash, where] of this.packed) if (!loose.has(hash)) blobs.push({ hash, size: where.size });
      for (const name of await readdirOrEmpty(this.packsDir)) {
        const key = `packs/${name}`;
        if (!PACK_TMP_KEY.test(key)) continue;
        const st = await lstat(join(this.dir, key));
        if (st.isFile()) blobs.push({ hash: key, size: st.size });
      }
    }
    return blobs;
  }

  /** Deletes a blob (or a listed partial write); absent blobs are no error, nor is anything reached through a symlink touched. */
  async removeBlob(hash: string): Promise<void> {
    if (PACK_TMP_KEY.test(hash)) {
      if ((await isRealDir(this.dir)) && (await isRealDir(this.packsDir)))
        await rm(join(this.dir, hash), { force: true });
      return;
    }
    if (!BLOB_KEY.test(hash)) throw new Error(`"${hash}" is not a sha256 hex digest`);
    this.known.delete(hash);
    if ((await isRealDir(this.dir)) && (await isRealDir(this.packsDir))) this.removePacked(hash);
    const folder = join(this.dir, 'blobs', hash.slice(0, 2));
    if (
      !(await isRealDir(this.dir)) ||
      !(await isRealDir(join(this.dir, 'blobs'))) ||
      !(await isRealDir(folder))
    )
      return;
    await rm(this.blobPath(hash), { force: true });
  }

  /**
   * Takes a packed blob out: listed in its pack's `.dead` (the pack file is not rewritten;
   * its space comes back when the last of its blobs is removed and the pack with it).
   */
  private removePacked(hash: string): void {
    const where = this.findPacked(hash);
    if (!where) return;
    this.packed.delete(hash);
    const live = (this.packLive.get(where.pack) ?? 1) - 1;
    this.packLive.set(where.pack, live);
    const pack = join(this.packsDir, `${where.pack}.pack`);
    const dead = join(this.packsDir, `${where.pack}.dead`);
    if (live > 0) {
      appendFileSync(dead, `${hash}\n`);
      return;
    }
    rmSync(pack, { force: true });
    rmSync(dead, { force: true });
    this.packLive.delete(where.pack);
  }

  /** The ids of every manifest held. */
  async listManifests(): Promise<readonly string[]> {
    return (await readdirOrEmpty(join(this.dir, 'manifests')))
      .filter((n) => n.endsWith('.json'))
      .map((n) => n.slice(0, -'.json'.length));
  }

  /** Stores a manifest under its canonical id. */
  async putManifest(manifest: SnapshotManifest): Promise<string> {
    // The canonical text is both the id's input and the file (one serialisation, not two),
    // in batches (see textBatches): a 1,000-file manifest is never one string.
    const batches = textBatches(manifestParts(manifest));
    const id = sha256HexOfParts(batches);
    const path = this.manifestPath(id);
    if (!existsSync(path)) await this.writeAtomic(path, join(this.dir, 'manifests'), batches);
    this.keepManifest(id, Promise.resolve(manifest));
    return id;
  }

  /**
   * The manifest with `id`, checked against it: an id that is not a digest (a damaged
   * trace names it), a missing file, bad JSON or a hash mismatch reject with
   * {@link SnapshotCorruptError} naming what is wrong and where.
   */
  getManifest(id: string): Promise<SnapshotManifest> {
    // Manifests lately read or written, by id: branches forked at once from one step (and a
    // fork right after its snapshot) get the one checked object, not a read, a parse and a
    // hash of its JSON each (a 1,000-file manifest is 136 KB). Manifests are readonly.
    const kept = this.manifests.get(id);
    if (kept) return kept;
    const read = this.readManifest(id);
    this.keepManifest(id, read);
    // A failed read is not kept: the next one reads again.
    read.catch(() => this.manifests.delete(id));
    return read;
  }

  /** Manifests lately read or written (see getManifest), at most MANIFESTS_KEPT. */
  private readonly manifests = new Map<string, Promise<SnapshotManifest>>();

  private keepManifest(id: string, manifest: Promise<SnapshotManifest>): void {
    this.manifests.delete(id);
    this.manifests.set(id, manifest);
    while (this.manifests.size > MANIFESTS_KEPT) this.manifests.delete(this.manifests.keys().next().value!);
  }

  private async readManifest(id: string): Promise<SnapshotManifest> {
    if (!HEX64.test(id))
      throw new SnapshotCorruptError(`snapshot manifest id ${JSON.stringify(id)} is not a sha256 digest`);
    const path = this.manifestPath(id);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (e) {
      throw new SnapshotCorruptError(`snapshot manifest ${id} cannot be read (${describeFsError(e, path)})`);
    }
    let manifest: SnapshotManifest;
    try {
      manifest = JSON.parse(text) as SnapshotManifest;
    } catch {
      throw new SnapshotCorruptError(`snapshot manifest ${path} is damaged: not JSON`);
    }
    if (typeof manifest !== 'object' || manifest === null || !Array.isArray(manifest.entries))
      throw new SnapshotCorruptError(`snapshot manifest ${path} is damaged: it has no entries`);
    const actual = manifestId(manifest);
    if (actual !== id)
      throw new SnapshotCorruptError(`snapshot manifest ${path} is damaged: it hashes to ${actual}`);
    return manifest;
  }
}
