/**
 * Episode bundles: one file holding an episode's meta, every branch trace (bytes as
 * stored), and the snapshot manifests and blobs those traces reference — enough to hand
 * a reproduction to a colleague.
 *
 * Format `stepbox.bundle/1`: a gzip'd JSONL file, one JSON object per line:
 * ```
 * {"format":"stepbox.bundle/1","episode":"ep-…","created":<ms>}          always first
 * {"kind":"meta","meta":{…meta.json…}}
 * {"kind":"trace","branch":"…","file":"<branch>.jsonl.gz","sha256":"…","base64":"…"}   per branch
 * {"kind":"manifest","id":"<sha256 of canonical JSON>","manifest":{…}}                   per snapshot
 * {"kind":"blob","hash":"<sha256 of content>","base64":"…"}                              per file content
 * {"kind":"end","traces":n,"manifests":n,"blobs":n}                                       always last
 * ```
 * The `end` line catches a truncated copy. Import inflates the file as a stream under a
 * cap ({@link BUNDLE_LIMITS}), verifies every trace's and blob's sha256 and every
 * manifest's id in a temporary folder, and renames it into place only when all checked out.
 */
import { widerThanDefaults, type Widening } from '../../../shared/isolation-policy.js';
import { parseTask } from '../../../shared/task.js';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { gunzipLines, InflateError, MAX_TEXT_BYTES, type InflateLimits } from './bounded-gunzip.js';
import { logger } from '../log.js';
import type { SnapshotManifest } from '../sandbox/snapshot-store.js';
import { manifestProblem } from '../sandbox/manifest.js';
import { writeFileAtomic } from './durable-fs.js';
import { EpisodeMeta, StoreError, type DiskEpisodeStore } from './episode-store.js';
import { isSafeId } from './episode-ids.js';
import { readTraceFile } from './trace-reader.js';
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

/**
 * Writes one episode (given by any of its ids or a unique prefix) to `file`. A running
 * episode is exported as it is on disk at this moment.
 */
export async function exportBundle(
  store: DiskEpisodeStore,
  id: string,
  file: string,
): Promise<BundleSummary> {
  const { episode } = store.resolve(id);
  const meta = store.meta(episode);
  const snaps = store.snapshots(episode);
  const lines: string[] = [JSON.stringify({ format: BUNDLE_FORMAT, episode, created: Date.now() })];
  lines.push(JSON.stringify({ kind: 'meta', meta }));
  const branches = store.listBranches(episode);
  for (const b of branches) {
    const path = store.currentTracePath(b);
    const data = readFileSync(path);
    lines.push(
      JSON.stringify({
        kind: 'trace',
        branch: b.branch,
        file: basename(path),
        sha256: sha256Hex(data),
        base64: data.toString('base64'),
      }),
    );
  }
  const blobs = new Set<string>();
  const manifests = referencedManifests(store, episode);
  for (const mid of manifests) {
    const manifest = await snaps.getManifest(mid);
    lines.push(JSON.stringify({ kind: 'manifest', id: mid, manifest }));
    for (const e of manifest.entries) if (e.type === 'file' && e.hash) blobs.add(e.hash);
  }
  for (const hash of [...blobs].sort()) {
    const data = Buffer.from(await snaps.getBlob(hash));
    lines.push(JSON.stringify({ kind: 'blob', hash, base64: data.toString('base64') }));
  }
  lines.push(
    JSON.stringify({ kind: 'end', traces: branches.length, manifests: manifests.length, blobs: blobs.size }),
  );
  const gz = gzipSync(lines.join('\n') + '\n');
  writeFileAtomic(file, gz);
  return {
    episode,
    branches: branches.map((b) => b.branch),
    manifests: manifests.length,
    blobs: blobs.size,
    bytes: gz.length,
  };
}

type Entry =
  | { kind: 'meta'; meta: unknown }
  | { kind: 'trace'; branch: string; file: string; sha256: string; base64: string }
  | { kind: 'manifest'; id: string; manifest: SnapshotManifest }
  | { kind: 'blob'; hash: string; base64: string }
  | { kind: 'end'; traces: number; manifests: number; blobs: number };

/** The caps of an import: inflated size of the whole bundle, and of one entry. */
export const BUNDLE_LIMITS: InflateLimits = {
  totalBytes: 4 * 1024 ** 3,
  lineBytes: Math.min(512 * 1024 ** 2, MAX_TEXT_BYTES),
};

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
    !['meta', 'trace', 'manifest', 'blob', 'end'].includes(kind as string)
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
    for await (const line of lines) {
      n += 1;
      if (line.length === 0) continue;
      if (end) throw invalid(file, `line ${n} comes after the end line`);
      const e = parseEntry(file, line, n);
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
          typeof e.base64 !== 'string' ||
          !isSafeId(e.branch) ||
          !/^[A-Za-z0-9_-]+\.jsonl(\.gz)?$/.test(e.file) ||
          !e.file.startsWith(`${e.branch}.`)
        )
          throw invalid(file, `trace entry ${JSON.stringify(e.file)} has a bad name`);
        const data = Buffer.from(e.base64, 'base64');
        if (sha256Hex(data) !== e.sha256) throw invalid(file, `trace ${e.file} does not match its sha256`);
        const path = join(staging, 'branches', e.file);
        writeFileSync(path, data);
        const { header } = readTraceFile(path); // throws trace_corrupt on a bad trace (its inflate is capped too)
        if (header.episode !== episode || header.branch !== e.branch)
          throw invalid(file, `trace ${e.file} belongs to ${header.episode}/${header.branch}`);
        const task = parseTask(header.task);
        if (task.ok)
          for (const w of widerThanDefaults(task.value.sandbox)) asks.set(`${w.field}=${w.asked}`, w);
        branches.push(e.branch);
      } else if (e.kind === 'blob') {
        if (typeof e.base64 !== 'string' || typeof e.hash !== 'string' || !/^[0-9a-f]{64}$/.test(e.hash))
          throw invalid(file, `line ${n} is a blob without a sha256 hash and base64 content`);
        const data = Buffer.from(e.base64, 'base64');
        if (sha256Hex(data) !== e.hash) throw invalid(file, `blob ${e.hash} does not match its content hash`);
        await snaps.putBlob(e.hash, data);
        blobs.add(e.hash);
      } else {
        if (typeof e.manifest !== 'object' || e.manifest === null || !Array.isArray(e.manifest.entries))
          throw invalid(file, `manifest ${JSON.stringify(e.id)} has no entries`);
        const problem = manifestProblem(e.manifest);
        if (problem) throw invalid(file, `manifest ${e.id} is unsafe: ${problem}`);
        manifests.push({ id: e.id, manifest: e.manifest });
      }
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
