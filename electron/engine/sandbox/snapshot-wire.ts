import type { ChangedPath } from '../../../shared/trace-events.js';
import { sha256Hex } from '../sha256.js';
import type { Logger } from '../log.js';
import {
  BLOB_CHUNK_BYTES,
  BlobChanged,
  blobChunks,
  fetchBlobs,
  readChunk,
  stageBlobs,
  type ChunkPart,
} from './blob-transfer.js';
import { HelperError } from './helper-client.js';
import type { HelperCall, HelperReply, HelperRequest, HelperResponse, WireEntry } from './helper-protocol.js';
import { sortedByPath } from '../../../shared/tree-hash.js';
import { sameEntry, treeHashOf } from './manifest.js';
import { SandboxFailure, type VerifyMode } from './sandbox.js';
import type { ManifestEntry, SnapshotManifest, SnapshotStore } from './snapshot-store.js';

/**
 * How a snapshot crosses the helper channel: a scan's answer (whole, or a delta against the
 * tree the helper last told the host about) turned into the workspace's tree with its blobs
 * stored, and a restore sent as a delta with the content the helper lacks inline or staged.
 */

/**
 * The tree the helper last told the host about (its last scan, or a verified restore's
 * target), under the helper's id for it: scans answer with a delta against it and restores
 * send one. `store` holds the blob of every file in it (the snapshot stored them, or the
 * restore came from there).
 */
export interface HelperTree {
  readonly id: string;
  readonly entries: ReadonlyMap<string, ManifestEntry>;
  readonly store: SnapshotStore;
}

function toEntry(w: WireEntry): ManifestEntry {
  const [path, type, mode, size, content] = w;
  if (type === 'file') return { path, type, mode, size, hash: content ?? '' };
  if (type === 'symlink') return { path, type, mode, size, target: content ?? '' };
  return { path, type, mode, size: 0 };
}

function toWire(e: ManifestEntry): WireEntry {
  return [
    e.path,
    e.type,
    e.mode,
    e.size,
    e.type === 'file' ? (e.hash ?? '') : e.type === 'symlink' ? (e.target ?? '') : null,
  ];
}

/** What turns `base` into `target`: entries new or different, and paths gone. */
function targetDelta(
  base: ReadonlyMap<string, ManifestEntry>,
  target: readonly ManifestEntry[],
): { changed: ManifestEntry[]; removed: string[] } {
  const changed: ManifestEntry[] = [];
  const kept = new Set<string>();
  for (const e of target) {
    kept.add(e.path);
    const b = base.get(e.path);
    if (!b || !sameEntry(b, e)) changed.push(e);
  }
  const removed = [...base.keys()].filter((p) => !kept.has(p));
  return { changed, removed };
}

/** Stores the blobs a scan sent inline (`inline: [[hash, size], …]`); resolves with their bytes. */
async function storeInline(store: SnapshotStore, scan: HelperResponse<'scan'>): Promise<number> {
  let off = 0;
  const blobs = (scan.header.inline ?? []).map(([hash, size]) => {
    const blob = scan.payload.subarray(off, off + size);
    off += size;
    if (sha256Hex(blob) !== hash)
      throw new BlobChanged(`the file with content ${hash} changed while it was captured`);
    return { hash, blob };
  });
  // Written at once: each is its own file (the manifest naming them is written after).
  await Promise.all(blobs.map(({ hash, blob }) => store.putBlob(hash, blob)));
  return off;
}

/** The tree a scan answered: its entries whole, or its delta applied to the base it names. */
function treeFromScan(
  scan: HelperReply<'scan'>,
  base: HelperTree | undefined,
): {
  tree: Map<string, ManifestEntry>;
  changed: readonly WireEntry[] | undefined;
  /** What differs from `base` (a delta's changed and removed paths, sorted); undefined when answered whole. */
  changes: ChangedPath[] | undefined;
} {
  if (scan.entries)
    return {
      tree: new Map(scan.entries.map((w) => [w[0], toEntry(w)])),
      changed: undefined,
      changes: undefined,
    };
  if (!base || scan.since !== base.id || !scan.changed || !scan.removed)
    throw new SandboxFailure(
      'snapshot_failed',
      'the helper answered a delta against a tree the host does not have',
    );
  const tree = new Map(base.entries);
  const changes: ChangedPath[] = [];
  for (const path of scan.removed) if (tree.delete(path)) changes.push({ path, change: 'deleted' });
  for (const w of scan.changed) {
    const e = toEntry(w);
    const was = base.entries.get(e.path);
    if (!was) changes.push({ path: e.path, change: 'added' });
    else if (!sameEntry(was, e)) changes.push({ path: e.path, change: 'modified' });
    tree.set(e.path, e);
  }
  changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { tree, changed: scan.changed, changes };
}

/** A workspace captured into a store: its entries (sorted), the bytes moved, and the helper's tree now. */
export interface Capture {
  readonly treeHash: string;
  readonly entries: readonly ManifestEntry[];
  readonly bytes: number;
  readonly skipped: readonly { readonly path: string; readonly size: number }[];
  readonly walk: 'pruned' | 'full';
  readonly tree: HelperTree;
  /** What differs from the base the capture was given (sorted), when the helper answered a delta against it. */
  readonly changes: readonly ChangedPath[] | undefined;
}

/**
 * Captures /workspace into `store` (its manifest is the caller's to write): the helper
 * rehashes what changed and answers as a delta against `base`, the host fetches only
 * missing blobs, in bounded chunks. Rejects with {@link BlobChanged} when a file changes
 * during the transfer.
 */
export async function captureWorkspace(
  call: HelperCall,
  store: SnapshotStore,
  base: HelperTree | undefined,
  fileCap: number,
  log: Logger,
  /** Called on each scan's answer: the workspace has been read (SnapshotOptions.onTaken). */
  onTaken?: () => void,
): Promise<Capture> {
  let scan: HelperResponse<'scan'>;
  let entries: readonly ManifestEntry[];
  let answered: ReturnType<typeof treeFromScan>;
  let treeHash: string;
  for (;;) {
    const request: HelperRequest<'scan'> = {
      file_cap: fileCap,
      ...(base ? { since: base.id } : {}),
      inline_max: BLOB_CHUNK_BYTES,
    };
    scan = await call('scan', request, undefined, BLOB_CHUNK_BYTES);
    onTaken?.();
    answered = treeFromScan(scan.header, base);
    // In order already after a delta that changed files in place (the map keeps the base's order).
    entries = sortedByPath([...answered.tree.values()]);
    treeHash = treeHashOf(entries);
    if (treeHash === scan.header.tree_hash) break;
    if (base) {
      // A delta that does not add up: once more, answered whole.
      log.warn(
        `snapshot: the helper's delta gave tree ${treeHash}, not ${scan.header.tree_hash}; scanning whole`,
      );
      base = undefined;
      continue;
    }
    throw new SandboxFailure(
      'snapshot_failed',
      `host and helper disagree on the tree hash (${treeHash} vs ${scan.header.tree_hash})`,
    );
  }
  const { tree, changed } = answered;
  // A delta against a base whose blobs are all in this store: only its changed files' can be missing.
  const fresh = base?.store === store && changed ? changed.map((w) => tree.get(w[0])!) : entries;
  // Content of the files the scan hashed anew came with it: stored when it is what its name says.
  let bytes = await storeInline(store, scan);
  const hashes = [...new Set(fresh.flatMap((e) => (e.type === 'file' && e.hash ? [e.hash] : [])))];
  const have = await Promise.all(hashes.map((h) => store.hasBlob(h)));
  const missing = hashes.filter((_, i) => !have[i]);
  bytes += await fetchBlobs(call, store, missing, entries);
  return {
    treeHash,
    entries,
    bytes,
    skipped: scan.header.skipped.map(([path, size]) => ({ path, size })),
    walk: scan.header.walk,
    // Only now: the tree's blobs are all in `store` (a capture cut short leaves the old base).
    tree: { id: scan.header.base, entries: tree, store },
    changes: answered.changes,
  };
}

/** A restore done: what the helper reports, and its tree now (the target). */
export interface Restored {
  readonly treeHash: string;
  readonly written: number;
  readonly removed: number;
  readonly entries: readonly ManifestEntry[];
  readonly tree: HelperTree;
  /** Whether it was written into an empty workspace (see fillWorkspace), or the helper refused that. */
  readonly fill: 'done' | 'refused' | 'not_tried';
}

/**
 * Restores `manifest` into an empty workspace (helper op `fill`): the blobs go in chunks as a
 * stage's do, and the helper writes each straight to its paths, hashed before it is written,
 * with no stage to move them from, no plan and no diff (a fork's pooled sandbox; ten at once
 * spent most of their time on those). The tree hash is recomputed inside as for any restore.
 * Resolves undefined when the helper refuses (`not_pristine`: the workspace holds something,
 * the image's own files say, or a process of the agent runs), before it changed anything.
 */
async function fillWorkspace(
  call: HelperCall,
  store: SnapshotStore,
  manifest: SnapshotManifest,
  verify: VerifyMode,
  log: Logger,
): Promise<Restored | undefined> {
  const started = performance.now();
  const plan = fillPlan(manifest);
  const { chunks } = plan;
  // Sent ahead of their answers, FILL_WINDOW at most: the helper writes one chunk while the
  // next crosses, and the host holds a few chunks, never the tree (a 320 MB file is 80).
  // After a refusal, nothing more is sent (the helper would refuse it: no fill under way).
  const answers: Promise<HelperResponse<'fill'>>[] = [];
  for (let i = 0; i < chunks.length; i++) {
    if (
      i >= FILL_WINDOW &&
      (await answers[i - FILL_WINDOW].then(
        () => false,
        () => true,
      ))
    )
      break;
    const parts = chunks[i];
    const payload = parts.length ? await readChunk(store, parts) : undefined;
    const answer = call(
      'fill',
      {
        parts,
        ...(i === 0 ? { entries: plan.wire, tree_hash: manifest.treeHash, verify } : {}),
        ...(i === chunks.length - 1 ? { last: true } : {}),
        ...(payload && wholeBlobsCheck(payload, parts, plan.sizes) ? { named: true } : {}),
      },
      payload,
    );
    // Settled below with the others; until then a refusal is not unhandled.
    answer.catch(() => undefined);
    answers.push(answer);
  }
  const settled = await Promise.allSettled(answers);
  const first = settled[0];
  if (first.status === 'rejected') {
    const e: unknown = first.reason;
    if (e instanceof HelperError && e.code === 'not_pristine') return undefined;
    throw e;
  }
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const last = settled[settled.length - 1];
  const done = last.status === 'fulfilled' ? last.value.header : {};
  if (!('tree_hash' in done))
    throw new SandboxFailure('restore_failed', 'the helper did not answer the last part of a fill');
  log.debug(
    `restore: ${(performance.now() - started).toFixed(1)} ms into an empty workspace (helper: transfer/dirs/verify ${done.phases_ms.join(',')} ms; ${plan.blobs} blobs in ${chunks.length} chunk(s); ${String(done.reread)} files read back to verify)`,
  );
  return {
    treeHash: done.tree_hash,
    written: done.written,
    removed: done.removed,
    entries: plan.sorted,
    tree: { id: done.base, entries: plan.byPath, store },
    fill: 'done',
  };
}

/** Fill requests sent ahead of their answers, at most (see fillWorkspace). */
const FILL_WINDOW = 2;

/**
 * Whether every blob whole in `payload` (a part at offset 0 of the blob's full size) hashes
 * to its name, worked out once per payload: branches forked at once from one step share one
 * payload (readChunk), so the host hashes it once where ten helpers each hashed it (10 MB:
 * ~11 ms of the host's CPU instead of ~64 ms of the sandboxes'). A fill request says so with
 * `named`, and the helper writes those blobs without hashing them again: the channel is the
 * host's alone, so what it hashed is what arrives. A blob spread over several payloads is
 * still hashed in the helper as it is written. A payload that does not check is sent without
 * `named`: the helper then refuses it as damaged, as it always did (and empties the workspace).
 */
const checkedPayloads = new WeakMap<Uint8Array, boolean>();

function wholeBlobsCheck(
  payload: Uint8Array,
  parts: readonly ChunkPart[],
  sizes: ReadonlyMap<string, number>,
): boolean {
  let ok = checkedPayloads.get(payload);
  if (ok !== undefined) return ok;
  ok = true;
  let off = 0;
  for (const [hash, at, n] of parts) {
    if (at === 0 && n === sizes.get(hash) && sha256Hex(payload.subarray(off, off + n)) !== hash) {
      ok = false;
      break;
    }
    off += n;
  }
  checkedPayloads.set(payload, ok);
  return ok;
}

/** What a fill sends for a manifest and the tree it leaves, worked out once per manifest (see fillPlan). */
interface FillPlan {
  readonly chunks: ChunkPart[][];
  readonly blobs: number;
  /** Each blob's size, by its hash. */
  readonly sizes: ReadonlyMap<string, number>;
  readonly wire: WireEntry[];
  readonly sorted: readonly ManifestEntry[];
  readonly byPath: ReadonlyMap<string, ManifestEntry>;
}

/**
 * Branches forked at once from one step fill from one manifest: its chunks, its entries on
 * the wire and its tree by path are the same for each, made once (a manifest is not changed
 * once made; the maps handed out are only read).
 */
const fillPlans = new WeakMap<SnapshotManifest, FillPlan>();

function fillPlan(manifest: SnapshotManifest): FillPlan {
  const kept = fillPlans.get(manifest);
  if (kept) return kept;
  const sizes = new Map<string, number>();
  for (const e of manifest.entries) if (e.type === 'file' && e.hash) sizes.set(e.hash, e.size);
  const chunks = blobChunks([...sizes].map(([hash, size]) => ({ hash, size })));
  if (!chunks.length) chunks.push([]);
  const sorted = sortedByPath(manifest.entries);
  const plan: FillPlan = {
    chunks,
    blobs: sizes.size,
    sizes,
    wire: manifest.entries.map(toWire),
    sorted,
    byPath: new Map(sorted.map((e) => [e.path, e])),
  };
  fillPlans.set(manifest, plan);
  return plan;
}

/**
 * Restores /workspace to `manifest` (already checked by manifestProblem): sent as a delta
 * against `base` when there is one, the content the helper lacks inline or, when large,
 * staged in bounded chunks first; the tree hash is recomputed inside. `ahead` (hash ->
 * size) are blobs staged already (see DockerSandbox.stageAhead): named, not sent, in the
 * first round; a later round (the stage is emptied after each) sends them from `store`. With
 * `tryFill`, a helper that knows no tree is first asked to fill its workspace as empty
 * ({@link fillWorkspace}); `fill` in the answer says whether it did or refused.
 */
export async function restoreWorkspace(
  call: HelperCall,
  store: SnapshotStore,
  base: HelperTree | undefined,
  manifest: SnapshotManifest,
  verify: VerifyMode,
  log: Logger,
  ahead: ReadonlyMap<string, number> = new Map(),
  tryFill = false,
): Promise<Restored> {
  // A helper that knows no tree (new, or reset) has likely an empty workspace: filled in place.
  if (tryFill && !base && !ahead.size) {
    const filled = await fillWorkspace(call, store, manifest, verify, log);
    if (filled) return filled;
  }
  const refused = tryFill && !base && !ahead.size;
  const started = performance.now();
  // The target as a delta against the helper's tree when it has one; the content it lacks
  // (as far as the host knows) goes along inline, or staged first when it is large.
  const target = base ? targetDelta(base.entries, manifest.entries) : undefined;
  const present = new Set<string>();
  if (base) for (const e of base.entries.values()) if (e.type === 'file' && e.hash) present.add(e.hash);
  const sizes = new Map<string, number>();
  for (const e of manifest.entries) if (e.type === 'file' && e.hash) sizes.set(e.hash, e.size);
  let lacking = [...sizes.keys()].filter((h) => !present.has(h));
  // Sent ahead whole, as the manifest records it: only named in the first round.
  let sentAhead: [string, number][] = [];
  if (ahead.size) {
    sentAhead = lacking.filter((h) => ahead.get(h) === sizes.get(h)).map((h) => [h, sizes.get(h)!]);
    if (sentAhead.length) lacking = lacking.filter((h) => ahead.get(h) !== sizes.get(h));
  }
  let inline: string[] = [];
  let toStage: string[] = [];
  const total = lacking.reduce((a, h) => a + (sizes.get(h) ?? 0), 0);
  if (total <= BLOB_CHUNK_BYTES) inline = lacking;
  else toStage = lacking;
  for (let round = 0; ; round++) {
    // Every restore request ends by clearing the stage, so a second round stages again.
    if (round > 0 && sentAhead.length) {
      toStage = [...sentAhead.map(([h]) => h), ...toStage];
      sentAhead = [];
    }
    const staged = [
      ...sentAhead,
      ...(toStage.length
        ? await stageBlobs(
            call,
            store,
            toStage.map((hash) => ({ hash, size: sizes.get(hash) ?? 0 })),
          )
        : []),
    ];
    const blobs = await Promise.all(inline.map((h) => store.getBlob(h)));
    const request: HelperRequest<'restore'> = {
      ...(base && target && round === 0
        ? { base: base.id, changed: target.changed.map(toWire), removed: target.removed }
        : { entries: manifest.entries.map(toWire) }),
      staged,
      inline: inline.map((h, i) => [h, blobs[i].length]),
      tree_hash: manifest.treeHash,
      verify,
    };
    let r: HelperResponse<'restore'>;
    try {
      r = await call('restore', request, blobs.length ? Buffer.concat(blobs) : undefined);
    } catch (e) {
      // The helper lost that tree (restarted, or a failed restore): once more, whole.
      if (e instanceof HelperError && e.code === 'stale_base' && round === 0) continue;
      throw e;
    }
    const done = r.header;
    if ('need' in done) {
      // The workspace changed since the tree we planned from: send what it lacks, again.
      if (round > 2)
        throw new SandboxFailure('restore_failed', 'the workspace kept changing during the restore');
      toStage = [...toStage, ...done.need];
      continue;
    }
    const entries = sortedByPath(manifest.entries);
    log.debug(
      `restore: ${(performance.now() - started).toFixed(1)} ms (helper: plan/apply/verify ${done.phases_ms.join(',')} ms; ${inline.length} blobs inline, ${toStage.length} staged, ${staged.length - toStage.length} sent ahead, ${round + 1} round(s); ${String(done.reread)} files read back to verify)`,
    );
    return {
      treeHash: done.tree_hash,
      written: done.written,
      removed: done.removed,
      entries,
      tree: { id: done.base, entries: new Map(entries.map((e) => [e.path, e])), store },
      fill: refused ? 'refused' : 'not_tried',
    };
  }
}
