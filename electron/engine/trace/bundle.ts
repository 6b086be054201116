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
 * The `end` line catches a truncated copy. Import verifies every trace's and blob's
 * sha256 and every manifest's id before anything lands in the store, writes into a
 * temporary folder, and renames it into place.
 */
import { widerThanDefaults, type Widening } from '../../../shared/isolation-policy.js';
import { parseTask } from '../../../shared/task.js';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
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

function invalid(file: string, why: string): StoreError {
  return new StoreError('invalid_input', `${file} is not a usable stepbox bundle: ${why}`);
}

function parseBundle(file: string): { episode: string; entries: Entry[] } {
  let text: string;
  try {
    text = gunzipSync(readFileSync(file)).toString('utf8');
  } catch (e) {
    throw invalid(file, `cannot read it as gzip (${(e as Error).message})`);
  }
  const lines = text.split('\n').filter((l) => l.length > 0);
  let head: { format?: string; episode?: string };
  try {
    head = JSON.parse(lines[0] ?? '{}');
  } catch {
    throw invalid(file, 'line 1 is not JSON');
  }
  if (head.format !== BUNDLE_FORMAT)
    throw invalid(file, `format is ${JSON.stringify(head.format)}, expected ${BUNDLE_FORMAT}`);
  if (typeof head.episode !== 'string' || !isSafeId(head.episode)) throw invalid(file, 'no valid episode id');
  const entries = lines.slice(1).map((l, i) => {
    try {
      return JSON.parse(l) as Entry;
    } catch {
      throw invalid(file, `line ${i + 2} is not JSON`);
    }
  });
  const end = entries.at(-1);
  if (end?.kind !== 'end') throw invalid(file, 'it is truncated (no end line)');
  const count = (k: Entry['kind']) => entries.filter((e) => e.kind === k).length;
  if (count('trace') !== end.traces || count('manifest') !== end.manifests || count('blob') !== end.blobs)
    throw invalid(file, 'its entry counts do not match its end line');
  return { episode: head.episode, entries };
}

/**
 * Imports a bundle into `store`. Refuses (`conflict`) when the episode exists unless
 * `overwrite`; verifies every hash first (`invalid_input` on any mismatch, nothing written).
 */
export async function importBundle(
  store: DiskEpisodeStore,
  file: string,
  options: { overwrite?: boolean } = {},
): Promise<ImportSummary> {
  const { episode, entries } = parseBundle(file);
  const target = store.episodeDir(episode);
  if (existsSync(target) && !options.overwrite)
    throw new StoreError(
      'conflict',
      `episode ${episode} already exists in ${store.home}; pass --force to replace it`,
    );

  // Verify everything before writing anything.
  const blobs = new Map<string, Buffer>();
  const traces: { branch: string; file: string; data: Buffer }[] = [];
  const manifests: { id: string; manifest: SnapshotManifest }[] = [];
  let meta: EpisodeMeta | null = null;
  for (const e of entries) {
    if (e.kind === 'meta') {
      const parsed = EpisodeMeta.safeParse(e.meta);
      if (!parsed.success || parsed.data.episode !== episode)
        throw invalid(file, 'its meta does not describe the episode');
      meta = parsed.data;
    } else if (e.kind === 'trace') {
      const data = Buffer.from(e.base64, 'base64');
      if (
        !isSafeId(e.branch) ||
        !/^[A-Za-z0-9_-]+\.jsonl(\.gz)?$/.test(e.file) ||
        !e.file.startsWith(`${e.branch}.`)
      )
        throw invalid(file, `trace entry ${JSON.stringify(e.file)} has a bad name`);
      if (sha256Hex(data) !== e.sha256) throw invalid(file, `trace ${e.file} does not match its sha256`);
      traces.push({ branch: e.branch, file: e.file, data });
    } else if (e.kind === 'blob') {
      const data = Buffer.from(e.base64, 'base64');
      if (sha256Hex(data) !== e.hash) throw invalid(file, `blob ${e.hash} does not match its content hash`);
      blobs.set(e.hash, data);
    } else if (e.kind === 'manifest') {
      const problem = manifestProblem(e.manifest);
      if (problem) throw invalid(file, `manifest ${e.id} is unsafe: ${problem}`);
      manifests.push({ id: e.id, manifest: e.manifest });
    }
  }
  if (!meta) throw invalid(file, 'it has no meta entry');
  for (const m of manifests)
    for (const x of m.manifest.entries)
      if (x.type === 'file' && x.hash && !blobs.has(x.hash))
        throw invalid(file, `manifest ${m.id} needs blob ${x.hash}, which is missing`);

  const asks = new Map<string, Widening>();
  const staging = join(store.episodesDir, `.importing-${episode}-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    mkdirSync(join(staging, 'branches'), { recursive: true });
    mkdirSync(join(staging, 'snapshots'), { recursive: true });
    writeFileSync(join(staging, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    for (const t of traces) {
      writeFileSync(join(staging, 'branches', t.file), t.data);
      const { header } = readTraceFile(join(staging, 'branches', t.file)); // throws trace_corrupt on a bad trace
      if (header.episode !== episode || header.branch !== t.branch)
        throw invalid(file, `trace ${t.file} belongs to ${header.episode}/${header.branch}`);
      const task = parseTask(header.task);
      if (task.ok)
        for (const w of widerThanDefaults(task.value.sandbox)) asks.set(`${w.field}=${w.asked}`, w);
    }
    const snaps = store.snapshotStoreAt(join(staging, 'snapshots'));
    for (const [hash, data] of blobs) await snaps.putBlob(hash, data);
    for (const m of manifests) {
      const id = await snaps.putManifest(m.manifest);
      if (id !== m.id) throw invalid(file, `manifest ${m.id} hashes to ${id}`);
    }
    if (existsSync(target)) {
      log.info(`replacing episode ${episode}`);
      store.removeEpisode(episode);
    }
    renameSync(staging, target);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
  return {
    episode,
    branches: traces.map((t) => t.branch),
    manifests: manifests.length,
    blobs: blobs.size,
    bytes: readFileSync(file).length,
    asks: [...asks.values()],
  };
}
