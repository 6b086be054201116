/**
 * Episode bundles: one file holding an episode's meta, every branch trace (bytes as
 * stored), and the snapshot manifests and blobs those traces reference — enough to hand
 * a reproduction to a colleague.
 *
 * Format `stepbox.bundle/1`: a gzip'd JSONL file, one JSON object per line:
 * ```
 * {"format":"stepbox.bundle/1","episode":"ep-…","created":<ms>}          always first
 * {"kind":"meta","meta":{…meta.json…}}
 * {"kind":"trace","branch":"…","file":"<branch>.jsonl.gz","sha256":"…","size":n,"chunks":k}  per branch
 * {"kind":"chunk","base64":"…"}             × k: the content, ≤ 1 MiB each, right after its entry
 * {"kind":"manifest","id":"<sha256 of canonical JSON>","manifest":{…}}                   per snapshot
 * {"kind":"blob","hash":"<sha256 of content>","size":n,"chunks":k}                        per file content
 * {"kind":"chunk","base64":"…"}             × k
 * {"kind":"end","traces":n,"manifests":n,"blobs":n}                                       always last
 * ```
 * Content travels in chunks so no line is large: import caps every line at
 * {@link BUNDLE_LINE_BYTES} and streams chunks to disk (a blob straight into the snapshot
 * store, hashed as it goes), so importing any bundle holds a few MiB, whatever its size.
 * Bundles written before chunks (`"base64":"…"` inline in the trace or blob entry) still
 * import when each such line is under the cap. The `end` line catches a truncated copy.
 * Import inflates the file as a stream under a cap ({@link BUNDLE_LIMITS}), verifies every
 * trace's and blob's sha256 and every manifest's id in a temporary folder, and renames it
 * into place only when all checked out.
 */
import { widerThanDefaults, type Widening } from '../../../shared/isolation-policy.js';
import { parseTask } from '../../../shared/task.js';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  closeSync,
  createWriteStream,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { gunzipLines, InflateError, type InflateLimits } from './bounded-gunzip.js';
import { logger } from '../log.js';
import type { SnapshotManifest, SnapshotStore } from '../sandbox/snapshot-store.js';
import { manifestProblem } from '../sandbox/manifest.js';
import { fsyncDir, tempPathOf } from './durable-fs.js';
import { EpisodeMeta, StoreError, type DiskEpisodeStore } from './episode-store.js';
import { isSafeId } from './episode-ids.js';
import { readTraceHeader } from './trace-reader.js';
import { sha256Hex } from '../sha256.js';

const log = logger('bundle');

/** The bundle format identifier. */
export const BUNDLE_FORMAT = 'stepbox.bundle/1';

/** What an export or import moved. */
export interface BundleSummary {
  readonly episode: string;
  readonly branches: readonly string[];
  readonly manifests: number;
  readonly blobs: number;
  /** Size of the bundle file. */
  readonly bytes: number;
}

/** What importing a bundle did, and what its recorded tasks ask for beyond the defaults. */
export interface ImportSummary extends BundleSummary {
  /** Wider than the defaults (network, image, limits): opening, replaying, forking or resuming needs consent. */
  readonly asks: readonly Widening[];
}

/** The manifest ids referenced by `snapshot` events of an episode's branches (partial steps included). */
function referencedManifests(store: DiskEpisodeStore, episode: string): string[] {
  const ids = new Set<string>();
  for (const b of store.listBranches(episode)) {
    const trace = store.readTrace(b);
    for (const e of [...trace.events, ...trace.partial]) if (e.type === 'snapshot') ids.add(e.manifest);
  }
  return [...ids].sort();
}

/** The content bytes one `chunk` line carries at most (its line is 4/3 of it in base64). */
export const BUNDLE_CHUNK_BYTES = 1024 * 1024;

/**
 * Writes one episode (given by any of its ids or a unique prefix) to `file`. A running
 * episode is exported as it is on disk at this moment. The bundle is written as a gzip
 * stream to a temporary file (renamed into place at the end), reading each trace and blob
 * in chunks, so memory stays bounded however large the episode is.
 */
export async function exportBundle(
  store: DiskEpisodeStore,
  id: string,
  file: string,
): Promise<BundleSummary> {
  const { episode } = store.resolve(id);
  const meta = store.meta(episode);
  const snaps = store.snapshots(episode);
  const tmp = tempPathOf(file);
  const gzip = createGzip();
  const written = pipeline(gzip, createWriteStream(tmp));
  const line = async (entry: unknown) => {
    if (!gzip.write(JSON.stringify(entry) + '\n')) await once(gzip, 'drain');
  };
  /** `read(offset, length)` → the content in chunk lines. */
  const chunks = async (size: number, read: (offset: number, length: number) => Promise<Uint8Array>) => {
    for (let off = 0; off < size; off += BUNDLE_CHUNK_BYTES) {
      const data = await read(off, Math.min(BUNDLE_CHUNK_BYTES, size - off));
      await line({ kind: 'chunk', base64: Buffer.from(data).toString('base64') });
    }
  };
  try {
    await line({ format: BUNDLE_FORMAT, episode, created: Date.now() });
    await line({ kind: 'meta', meta });
    const branches = store.listBranches(episode);
    for (const b of branches) {
      const path = store.currentTracePath(b);
      // Copied once, so the hash and the chunks are of the same bytes (an open trace grows).
      const data = readFileSync(path);
      await line({
        kind: 'trace',
        branch: b.branch,
        file: basename(path),
        sha256: sha256Hex(data),
        size: data.length,
        chunks: Math.ceil(data.length / BUNDLE_CHUNK_BYTES),
      });
      await chunks(data.length, async (off, len) => data.subarray(off, off + len));
    }
    const blobs = new Set<string>();
    const sizes = new Map<string, number>();
    const manifests = referencedManifests(store, episode);
    for (const mid of manifests) {
      const manifest = await snaps.getManifest(mid);
      await line({ kind: 'manifest', id: mid, manifest });
      for (const e of manifest.entries) if (e.type === 'file' && e.hash) blobs.add(e.hash);
    }
    for (const b of await snaps.listBlobs()) sizes.set(b.hash, b.size);
    for (const hash of [...blobs].sort()) {
      const size = sizes.get(hash);
      if (size === undefined || !snaps.readBlobRange) {
        // A store without ranged reads (or a blob it does not list) is read whole.
        const data = Buffer.from(await snaps.getBlob(hash));
        await line({
          kind: 'blob',
          hash,
          size: data.length,
          chunks: Math.ceil(data.length / BUNDLE_CHUNK_BYTES),
        });
        await chunks(data.length, async (off, len) => data.subarray(off, off + len));
        continue;
      }
      await line({ kind: 'blob', hash, size, chunks: Math.ceil(size / BUNDLE_CHUNK_BYTES) });
      // Ranged reads are not hash-checked as getBlob is: hash what was sent, and on a
      // mismatch let the whole read name the damaged file (the bundle is never renamed in).
      const sent = createHash('sha256');
      await chunks(size, async (off, len) => {
        const data = await snaps.readBlobRange!(hash, off, len);
        sent.update(data);
        return data;
      });
      if (sent.digest('hex') !== hash) {
        await snaps.getBlob(hash);
        throw new Error(`snapshot blob ${hash} changed while it was exported; export again`);
      }
    }
    await line({ kind: 'end', traces: branches.length, manifests: manifests.length, blobs: blobs.size });
    gzip.end();
    await written;
    const fd = openSync(tmp, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
    fsyncDir(dirname(file));
    return {
      episode,
      branches: branches.map((b) => b.branch),
      manifests: manifests.length,
      blobs: blobs.size,
      bytes: statSync(file).size,
    };
  } catch (e) {
    gzip.destroy();
    await written.catch(() => undefined);
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** Content inline (bundles before chunks) or in the `chunks` lines that follow. */
type Content = { base64: string; chunks?: undefined } | { base64?: undefined; size: number; chunks: number };

type Entry =
  | { kind: 'meta'; meta: unknown }
  | ({ kind: 'trace'; branch: string; file: string; sha256: string } & Content)
  | { kind: 'manifest'; id: string; manifest: SnapshotManifest }
  | ({ kind: 'blob'; hash: string } & Content)
  | { kind: 'chunk'; base64: string }
  | { kind: 'end'; traces: number; manifests: number; blobs: number };

/**
 * The cap on one line of a bundle: a manifest, a trace's header, one chunk. Nothing a
 * bundle carries needs a larger line (content comes in {@link BUNDLE_CHUNK_BYTES} chunks).
 */
export const BUNDLE_LINE_BYTES = 8 * 1024 ** 2;

/** The caps of an import: inflated size of the whole bundle, and of one line. */
export const BUNDLE_LIMITS: InflateLimits = {
  totalBytes: 4 * 1024 ** 3,
  lineBytes: BUNDLE_LINE_BYTES,
};

/** Where a chunked entry's content goes as its chunks arrive. */
interface ContentSink {
  write(chunk: Buffer): Promise<void>;
  /** All chunks are in: verify and keep. */
  done(): Promise<void>;
  abort(): Promise<void>;
}

/** A chunked trace or blob being imported: chunks left, bytes so far, where they go. */
interface PendingContent {
  readonly what: string;
  left: number;
  bytes: number;
  readonly size: number;
  readonly sink: ContentSink;
  /** Runs once the content is in and verified. */
  readonly after: () => Promise<void>;
}

/** A trace file written in staging as its chunks arrive, hashed as it goes. */
function traceSink(path: string, sha256: string, what: () => StoreError): ContentSink {
  const fd = openSync(path, 'wx');
  const digest = createHash('sha256');
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    write: async (chunk) => {
      digest.update(chunk);
      for (let off = 0; off < chunk.length;) off += writeSync(fd, chunk, off);
    },
    done: async () => {
      close();
      if (digest.digest('hex') !== sha256) throw what();
    },
    abort: async () => close(),
  };
}

/** A blob streamed into the snapshot store (hash-checked on commit); a store that cannot stream gets it whole. */
async function blobSink(snaps: SnapshotStore, hash: string, what: () => StoreError): Promise<ContentSink> {
  if (!snaps.openBlobWriter) {
    const parts: Buffer[] = [];
    return {
      write: async (chunk) => void parts.push(chunk),
      done: async () => {
        const data = Buffer.concat(parts);
        if (sha256Hex(data) !== hash) throw what();
        await snaps.putBlob(hash, data);
      },
      abort: async () => undefined,
    };
  }
  const w = await snaps.openBlobWriter(hash);
  return {
    write: (chunk) => w.write(chunk),
    done: () =>
      w.commit().catch(() => {
        throw what();
      }),
    abort: () => w.abort(),
  };
}

/** The first of `branches` that an episode of the store other than `episode` already has, if any. */
function branchTakenElsewhere(
  store: DiskEpisodeStore,
  episode: string,
  branches: readonly string[],
): { branch: string; episode: string } | null {
  const own = new Set(branches.filter((b) => b !== episode));
  if (own.size === 0) return null;
  for (const other of store.listEpisodes()) {
    if (other === episode) continue;
    for (const b of store.branchesOrNone(other))
      if (own.has(b.branch)) return { branch: b.branch, episode: other };
  }
  return null;
}

function invalid(file: string, why: string): StoreError {
  return new StoreError('invalid_input', `${file} is not a usable stepbox bundle: ${why}`);
}

/** One entry per line after the head; a line that is not a JSON object is refused by number. */
function parseEntry(file: string, line: string, n: number): Entry {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    throw invalid(file, `line ${n} is not JSON`);
  }
  const kind = (entry as { kind?: unknown } | null)?.kind;
  if (
    typeof entry !== 'object' ||
    entry === null ||
    !['meta', 'trace', 'manifest', 'blob', 'chunk', 'end'].includes(kind as string)
  )
    throw invalid(file, `line ${n} is not a bundle entry (kind ${JSON.stringify(kind)})`);
  return entry as Entry;
}

/**
 * Imports a bundle into `store`. Refuses (`conflict`) when the episode exists unless
 * `overwrite`; verifies every hash (`invalid_input` on any mismatch) in a staging folder
 * that only lands in the store when all of it checked out. The bundle is inflated as a
 * stream under `limits` (a decompression bomb is refused naming the cap, in bounded memory).
 */
export async function importBundle(
  store: DiskEpisodeStore,
  file: string,
  options: { overwrite?: boolean; limits?: InflateLimits } = {},
): Promise<ImportSummary> {
  const limits = options.limits ?? BUNDLE_LIMITS;
  const lines = gunzipLines(
    file,
    limits,
    `bundle ${file}`,
    'if the bundle is genuine, raise it with --max-size',
  );
  let staging: string | null = null;
  const asks = new Map<string, Widening>();
  try {
    const first = await lines.next();
    let head: { format?: string; episode?: string };
    try {
      head = JSON.parse(first.done ? '{}' : first.value);
    } catch {
      throw invalid(file, 'line 1 is not JSON');
    }
    if (head.format !== BUNDLE_FORMAT)
      throw invalid(file, `format is ${JSON.stringify(head.format)}, expected ${BUNDLE_FORMAT}`);
    const episode = head.episode;
    if (typeof episode !== 'string' || !isSafeId(episode)) throw invalid(file, 'no valid episode id');
    const target = store.episodeDir(episode);
    if (existsSync(target) && !options.overwrite)
      throw new StoreError(
        'conflict',
        `episode ${episode} already exists in ${store.home}; pass --force to replace it`,
      );

    staging = join(store.episodesDir, `.importing-${episode}-${process.pid}`);
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(join(staging, 'branches'), { recursive: true });
    mkdirSync(join(staging, 'snapshots'), { recursive: true });
    const snaps = store.snapshotStoreAt(join(staging, 'snapshots'));
    const blobs = new Set<string>();
    const branches: string[] = [];
    const manifests: { id: string; manifest: SnapshotManifest }[] = [];
    let meta: EpisodeMeta | null = null;
    let end: Extract<Entry, { kind: 'end' }> | null = null;
    let n = 1;
    /** The trace or blob whose chunks are arriving (in an object: closures set it). */
    const state: { pending: PendingContent | null } = { pending: null };
    const finish = async () => {
      const p = state.pending!;
      state.pending = null;
      if (p.bytes !== p.size) {
        await p.sink.abort();
        throw invalid(file, `${p.what} has ${p.bytes} bytes in its chunks, not the ${p.size} its entry says`);
      }
      await p.sink.done();
      await p.after();
    };
    /** Content inline (older bundles) is written at once; chunked content is taken from the next lines. */
    const content = async (
      e: Content,
      what: string,
      inline: (data: Buffer) => Promise<void>,
      sink: () => Promise<ContentSink>,
      after: () => Promise<void>,
    ) => {
      if (e.chunks === undefined) {
        if (typeof e.base64 !== 'string')
          throw invalid(file, `${what} has neither base64 content nor chunks`);
        await inline(Buffer.from(e.base64, 'base64'));
        return after();
      }
      if (!Number.isSafeInteger(e.chunks) || e.chunks < 0 || !Number.isSafeInteger(e.size) || e.size < 0)
        throw invalid(file, `${what} has a bad chunk count or size`);
      state.pending = { what, left: e.chunks, bytes: 0, size: e.size, sink: await sink(), after };
      if (e.chunks === 0) await finish();
    };
    const traceHeader = async (path: string, e: { file: string; branch: string }) => {
      // Its header only: the rest of a trace from elsewhere is read (and checked) when it is opened.
      const header = await readTraceHeader(path, limits.lineBytes);
      if (header.episode !== episode || header.branch !== e.branch)
        throw invalid(file, `trace ${e.file} belongs to ${header.episode}/${header.branch}`);
      const task = parseTask(header.task);
      if (task.ok)
        for (const w of widerThanDefaults(task.value.sandbox)) asks.set(`${w.field}=${w.asked}`, w);
      branches.push(e.branch);
    };
    try {
      for await (const line of lines) {
        n += 1;
        if (line.length === 0) continue;
        if (end) throw invalid(file, `line ${n} comes after the end line`);
        const e = parseEntry(file, line, n);
        const p = state.pending;
        if (p !== null) {
          if (e.kind !== 'chunk' || typeof e.base64 !== 'string')
            throw invalid(file, `line ${n}: ${p.what} is missing ${p.left} of its chunks`);
          const data = Buffer.from(e.base64, 'base64');
          p.bytes += data.length;
          if (p.bytes > p.size)
            throw invalid(file, `${p.what} is larger than the ${p.size} bytes its entry says`);
          await p.sink.write(data);
          p.left -= 1;
          if (p.left === 0) await finish();
          continue;
        }
        if (e.kind === 'chunk')
          throw invalid(file, `line ${n} is a chunk that follows no trace or blob entry`);
        if (e.kind === 'end') end = e;
        else if (e.kind === 'meta') {
          const parsed = EpisodeMeta.safeParse(e.meta);
          if (!parsed.success || parsed.data.episode !== episode)
            throw invalid(file, 'its meta does not describe the episode');
          // Marked whatever the bundle says: a recorded exec: command then never runs by itself.
          meta = { ...parsed.data, imported: { at: Date.now(), from: basename(file) } };
        } else if (e.kind === 'trace') {
          if (
            typeof e.branch !== 'string' ||
            typeof e.file !== 'string' ||
            typeof e.sha256 !== 'string' ||
            !isSafeId(e.branch) ||
            !/^[A-Za-z0-9_-]+\.jsonl(\.gz)?$/.test(e.file) ||
            !e.file.startsWith(`${e.branch}.`)
          )
            throw invalid(file, `trace entry ${JSON.stringify(e.file)} has a bad name`);
          const path = join(staging, 'branches', e.file);
          const mismatch = () => invalid(file, `trace ${e.file} does not match its sha256`);
          await content(
            e,
            `trace ${e.file}`,
            async (data) => {
              if (sha256Hex(data) !== e.sha256) throw mismatch();
              writeFileSync(path, data, { flag: 'wx' });
            },
            async () => traceSink(path, e.sha256, mismatch),
            () => traceHeader(path, e),
          );
        } else if (e.kind === 'blob') {
          if (typeof e.hash !== 'string' || !/^[0-9a-f]{64}$/.test(e.hash))
            throw invalid(file, `line ${n} is a blob without a sha256 hash and base64 content`);
          const hash = e.hash;
          const mismatch = () => invalid(file, `blob ${hash} does not match its content hash`);
          await content(
            e,
            `blob ${hash}`,
            async (data) => {
              if (sha256Hex(data) !== hash) throw mismatch();
              await snaps.putBlob(hash, data);
            },
            () => blobSink(snaps, hash, mismatch),
            async () => void blobs.add(hash),
          );
        } else {
          if (typeof e.manifest !== 'object' || e.manifest === null || !Array.isArray(e.manifest.entries))
            throw invalid(file, `manifest ${JSON.stringify(e.id)} has no entries`);
          const problem = manifestProblem(e.manifest);
          if (problem) throw invalid(file, `manifest ${e.id} is unsafe: ${problem}`);
          manifests.push({ id: e.id, manifest: e.manifest });
        }
      }
    } finally {
      await state.pending?.sink.abort();
    }
    if (!end) throw invalid(file, 'it is truncated (no end line)');
    if (branches.length !== end.traces || manifests.length !== end.manifests || blobs.size !== end.blobs)
      throw invalid(file, 'its entry counts do not match its end line');
    if (!meta) throw invalid(file, 'it has no meta entry');
    for (const m of manifests)
      for (const x of m.manifest.entries)
        if (x.type === 'file' && x.hash && !blobs.has(x.hash))
          throw invalid(file, `manifest ${m.id} needs blob ${x.hash}, which is missing`);
    writeFileSync(join(staging, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    for (const m of manifests) {
      const id = await snaps.putManifest(m.manifest);
      if (id !== m.id) throw invalid(file, `manifest ${m.id} hashes to ${id}`);
    }
    // A branch id names one branch in a store: resolving it reads the one episode it was listed
    // in. A bundle carrying a branch id another episode here already has (a crafted one, or
    // a copy of a fork) would make it name two, and which one a window or a fork got would
    // depend on which was listed last.
    const taken = branchTakenElsewhere(store, episode, branches);
    if (taken)
      throw new StoreError(
        'conflict',
        `${file}: its branch ${taken.branch} is already a branch of episode ${taken.episode} in ${store.home}, and a branch id names one branch in a store`,
        `import it into another store (STEPBOX_HOME=<another folder> stepbox import ${basename(file)})`,
      );
    if (existsSync(target)) {
      log.info(`replacing episode ${episode}`);
      store.removeEpisode(episode);
    }
    renameSync(staging, target);
    staging = null;
    return {
      episode,
      branches,
      manifests: manifests.length,
      blobs: blobs.size,
      bytes: statSync(file).size,
      asks: [...asks.values()],
    };
  } catch (e) {
    if (e instanceof InflateError) throw invalid(file, e.message.replace(`bundle ${file} `, 'it '));
    throw e;
  } finally {
    await lines.return(undefined);
    if (staging) rmSync(staging, { recursive: true, force: true });
  }
}
