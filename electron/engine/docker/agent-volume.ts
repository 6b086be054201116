import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import { STEPBOX_LABEL } from './container-spec.js';
import type { DockerEngine } from './client.js';
import { AGENT_FILES_MARK, listAgentFiles, type AgentFile, type AgentFiles } from '../sandbox/agent-files.js';
import { logger } from '../log.js';
import { pruneUnusedVolumes, type VolumePrune } from './volume-prune.js';
import { tarHeader } from './tar-writer.js';

const log = logger('agent-volume');

/** The label naming the content hash of an agent volume. */
export const AGENT_VOLUME_LABEL = 'stepbox.agent-files';

/** The volume holding an agent directory's contents (by hash: the same files are copied once per engine). */
export function agentVolumeName(files: AgentFiles): string {
  return `stepbox-agent-${files.hash.slice(0, 24)}`;
}

/** A header for a regular file or directory owned by root. */
function header(name: string, size: number, mode: number, type: '0' | '5'): Buffer {
  return tarHeader({ name, size, mode, type: type === '5' ? 'dir' : 'file' });
}

/** The block size sparse files are scanned in: a block of zeros is a hole. */
const SPARSE_BLOCK = 64 * 1024;
/** Where a sparse file's data regions wait in the volume until the finishing command puts them in place. */
const SPARSE_DIR = '.stepbox-sparse';
const ZEROS = Buffer.alloc(SPARSE_BLOCK);

/** A file that is sparse on the host: its data regions (block-aligned), the rest holes. */
interface SparseFile {
  readonly file: AgentFile;
  readonly regions: readonly { offset: number; length: number }[];
}

/**
 * The data regions of a file that is sparse on the host (fewer blocks allocated than its
 * size), found by reading it (holes read as zeros); null for a file that is not sparse.
 */
function sparseRegions(f: AgentFile): SparseFile['regions'] | null {
  if (f.size < 2 * SPARSE_BLOCK || statSync(f.full).blocks * 512 >= f.size) return null;
  const regions: { offset: number; length: number }[] = [];
  const buf = Buffer.alloc(SPARSE_BLOCK);
  const fd = openSync(f.full, 'r');
  try {
    for (let offset = 0; offset < f.size; offset += SPARSE_BLOCK) {
      const n = readSync(fd, buf, 0, Math.min(SPARSE_BLOCK, f.size - offset), offset);
      if (n <= 0) throw new Error(`${f.full} shrank while it was read`);
      if (buf.subarray(0, n).equals(ZEROS.subarray(0, n))) continue;
      const last = regions.at(-1);
      if (last && last.offset + last.length === offset) last.length += n;
      else regions.push({ offset, length: n });
    }
  } finally {
    closeSync(fd);
  }
  return regions;
}

/** One entry of the tar: a whole file, or a data region of a sparse one (under SPARSE_DIR). */
interface TarEntry {
  readonly name: string;
  readonly full: string;
  readonly offset: number;
  readonly size: number;
  readonly mode: number;
}

/** Single-quoted for sh. */
function shq(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/**
 * What the volume is filled with: a tar of the files (root's, 0755 when executable else
 * 0644; directories 0755) and, when some are sparse, their data regions plus a command
 * that rebuilds them with holes (`dd` seeking past them), so a sparse file stays sparse
 * in the engine (Docker's archive copy writes every zero). The hash mark comes last: in
 * the tar, or written by that command after the files are whole.
 */
function fillPlan(files: readonly AgentFile[], hash: string): { tar: Readable; finish?: string[] } {
  const dirs = new Set<string>();
  for (const f of files) {
    const parts = f.path.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  const entries: TarEntry[] = [];
  const sparse: SparseFile[] = [];
  for (const f of files) {
    const mode = f.mode & 0o111 ? 0o755 : 0o644;
    const regions = sparseRegions(f);
    if (!regions) {
      entries.push({ name: f.path, full: f.full, offset: 0, size: f.size, mode });
      continue;
    }
    sparse.push({ file: f, regions });
    for (const r of regions)
      entries.push({
        name: `${SPARSE_DIR}/${sparse.length}/${r.offset}`,
        full: f.full,
        offset: r.offset,
        size: r.length,
        mode: 0o600,
      });
  }
  if (sparse.length > 0) dirs.add(SPARSE_DIR);
  sparse.forEach((_, i) => dirs.add(`${SPARSE_DIR}/${i + 1}`));
  const mark = Buffer.from(hash);
  async function* gen(): AsyncGenerator<Buffer> {
    for (const d of [...dirs].sort()) yield header(`${d}/`, 0, 0o755, '5');
    const buf = Buffer.alloc(1024 * 1024);
    for (const e of entries) {
      yield header(e.name, e.size, e.mode, '0');
      const fd = openSync(e.full, 'r');
      let sent = 0;
      try {
        while (sent < e.size) {
          const n = readSync(fd, buf, 0, Math.min(buf.length, e.size - sent), e.offset + sent);
          if (n <= 0) throw new Error(`${e.full} shrank while it was copied`);
          sent += n;
          yield Buffer.from(buf.subarray(0, n));
        }
      } finally {
        closeSync(fd);
      }
      if (e.size % 512) yield Buffer.alloc(512 - (e.size % 512));
    }
    if (sparse.length === 0) {
      yield header(AGENT_FILES_MARK, mark.length, 0o644, '0');
      yield Buffer.concat([mark, Buffer.alloc(512 - (mark.length % 512))]);
    }
    yield Buffer.alloc(1024);
  }
  const tar = Readable.from(gen());
  if (sparse.length === 0) return { tar };
  const lines = ['set -e', 'cd /opt/agent'];
  sparse.forEach((s, i) => {
    const path = shq(s.file.path);
    // A file of the full size with no block allocated, then each region written in place.
    lines.push(`dd if=/dev/null of=${path} bs=1 seek=${s.file.size} 2>/dev/null`);
    for (const r of s.regions)
      lines.push(
        `dd if=${SPARSE_DIR}/${i + 1}/${r.offset} of=${path} bs=${SPARSE_BLOCK} seek=${r.offset / SPARSE_BLOCK} conv=notrunc 2>/dev/null`,
      );
    lines.push(`chmod ${s.file.mode & 0o111 ? '755' : '644'} ${path}`);
  });
  lines.push(`rm -rf ${SPARSE_DIR}`, `printf '%s' ${shq(hash)} > ${AGENT_FILES_MARK}`);
  return { tar, finish: ['sh', '-c', lines.join('\n')] };
}

const filling = new Map<string, Promise<string>>();

/**
 * The volume holding `files`, created and filled on first use (once per engine: later
 * episodes, processes and runs mount it again). The bridge checks the hash mark inside,
 * so a volume left half-filled is found out and refilled.
 */
export function ensureAgentVolume(engine: DockerEngine, image: string, files: AgentFiles): Promise<string> {
  const name = agentVolumeName(files);
  let p = filling.get(name);
  if (!p) {
    p = (async () => {
      if (await engine.hasVolume(name)) return name;
      const t0 = performance.now();
      const plan = fillPlan(listAgentFiles(files.dir), files.hash);
      await engine.fillVolume(
        name,
        image,
        { [STEPBOX_LABEL]: '1', [AGENT_VOLUME_LABEL]: files.hash },
        plan.tar,
        plan.finish,
      );
      log.info(`copied ${files.dir} into volume ${name} in ${Math.round(performance.now() - t0)} ms`);
      return name;
    })();
    filling.set(name, p);
    p.catch(() => filling.delete(name));
  }
  return p;
}

/** What {@link pruneAgentVolumes} removed, or would remove, and what it kept because a container uses it. */
export type AgentVolumePrune = VolumePrune;

/**
 * Removes the agent volumes no container uses (each is a cache of an agent's files by
 * content: the next episode that needs one copies it again). A volume a container mounts,
 * running or stopped, is kept; so is one this process is filling.
 */
export async function pruneAgentVolumes(
  engine: DockerEngine,
  dryRun: boolean,
  /** More labels a volume must carry (`key=value`): a test prunes only its own. */
  alsoLabelled: readonly string[] = [],
): Promise<AgentVolumePrune> {
  const volumes = await engine.volumesByLabel([AGENT_VOLUME_LABEL, ...alsoLabelled]);
  return pruneUnusedVolumes(engine, volumes, dryRun, log, (name) => filling.has(name));
}

/** Forgets a volume found broken (the next use refills it). */
export async function dropAgentVolume(engine: DockerEngine, files: AgentFiles): Promise<void> {
  const name = agentVolumeName(files);
  filling.delete(name);
  await engine.removeVolume(name);
}
