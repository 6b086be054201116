import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import { performance } from 'node:perf_hooks';
import { SANDBOX_ENV } from '../../../shared/constants.js';
import type { ToolError } from '../../../shared/errors.js';
import type { Result } from '../../../shared/result.js';
import { toolFailure, type DirEntry, type ToolResult } from '../../../shared/tool-result.js';
import type { ChangedPath } from '../../../shared/trace-events.js';
import { MemoryFs, type MemNode } from './fs.js';
import { CallOutput, runShell, type ShellState } from './shell.js';
import {
  SandboxFailure,
  type ExecRequest,
  type RestoreInfo,
  type Sandbox,
  type SandboxConfig,
  type SessionState,
  type SnapshotInfo,
  type SnapshotOptions,
  type VerifyMode,
} from '../../../electron/engine/sandbox/sandbox.js';
import type {
  ManifestEntry,
  SnapshotManifest,
  SnapshotStore,
} from '../../../electron/engine/sandbox/snapshot-store.js';
import { sha256Hex } from '../../../electron/engine/sha256.js';
import { treeHashOf } from '../../../electron/engine/sandbox/manifest.js';

const WORKSPACE = '/workspace';
/** The per-file snapshot cap, as the Docker backend's (SNAPSHOT_FILE_CAP_BYTES). */
const FILE_CAP_BYTES = 512 * 1024 * 1024;
const BASE_ENV: Readonly<Record<string, string>> = { ...SANDBOX_ENV, PATH: '/usr/local/bin:/usr/bin:/bin' };
const utf8 = new TextDecoder('utf-8', { fatal: true });
const lenient = new TextDecoder('utf-8');

function freshState(): ShellState {
  return { cwd: WORKSPACE, env: { ...BASE_ENV }, vars: {} };
}

/** A stream as the Contracts want it: text (U+FFFD where not UTF-8) plus base64 when not UTF-8. */
function streamFields(name: 'stdout' | 'stderr', bytes: Uint8Array): Partial<ToolResult> {
  try {
    return { [name]: utf8.decode(bytes) };
  } catch {
    return { [name]: lenient.decode(bytes), [`${name}_b64`]: Buffer.from(bytes).toString('base64') };
  }
}

/** Every entry under /workspace, paths relative and `/`-separated, as the tree hash sees them. */
function workspaceEntries(root: MemNode): ManifestEntry[] {
  const out: ManifestEntry[] = [];
  const walk = (node: MemNode, rel: string) => {
    if (node.type !== 'dir') return;
    for (const [name, child] of node.children) {
      const path = rel ? `${rel}/${name}` : name;
      if (child.type === 'file') {
        out.push({
          path,
          type: 'file',
          mode: child.mode,
          size: child.data.byteLength,
          hash: sha256Hex(child.data),
        });
      } else if (child.type === 'symlink') {
        out.push({
          path,
          type: 'symlink',
          mode: child.mode,
          size: Buffer.byteLength(child.target),
          target: child.target,
        });
      } else {
        out.push({ path, type: 'dir', mode: child.mode, size: 0 });
        walk(child, path);
      }
    }
  };
  walk(root, '');
  return out;
}

function sameEntry(a: ManifestEntry, b: ManifestEntry): boolean {
  return (
    a.type === b.type && a.mode === b.mode && a.size === b.size && a.hash === b.hash && a.target === b.target
  );
}

/**
 * A sandbox held entirely in memory: a file tree with modes and symlinks, and a shell
 * subset for `exec` (see `runShell`). Fast and deterministic, for unit tests of the
 * harness and tools; it passes the same conformance suite as the Docker backend.
 */
export class MemorySandbox implements Sandbox {
  readonly id = `mem-${randomUUID().slice(0, 12)}`;
  readonly backend = 'memory';
  private fs: MemoryFs;
  private session = freshState();
  private baseline = new Map<string, ManifestEntry>();
  private destroyed = false;

  constructor(
    readonly config: SandboxConfig,
    /** Files larger than this are left out of a snapshot (tests set it small). */
    private readonly fileCapBytes = FILE_CAP_BYTES,
  ) {
    this.fs = this.newFs();
  }

  private newFs(): MemoryFs {
    return new MemoryFs([WORKSPACE, '/tmp', '/home/agent'], this.config.limits.diskBytes);
  }

  private alive(): void {
    if (this.destroyed)
      throw new SandboxFailure('sandbox_lost', `sandbox ${this.id} was destroyed; create a new one`);
  }

  private abs(path: string): string {
    return posix.resolve(WORKSPACE, path);
  }

  async exec(request: ExecRequest): Promise<ToolResult> {
    this.alive();
    const start = performance.now();
    const state = request.fresh ? freshState() : this.session;
    const output = new CallOutput(this.config.limits.outputBytes);
    const end = await runShell(this.fs, state, request.command, output, start + request.timeoutMs);
    const fields: Partial<ToolResult> = {
      ...streamFields('stdout', output.bytes(1)),
      ...streamFields('stderr', output.bytes(2)),
      ...(output.truncated(1) || output.truncated(2)
        ? { truncated: { stdout: output.truncated(1), stderr: output.truncated(2) } }
        : {}),
      bytes: output.written[0] + output.written[1],
    };
    const ms = performance.now() - start;
    if (end.kind === 'timeout') {
      return toolFailure(
        'timeout',
        `command timed out after ${request.timeoutMs / 1000}s and was killed`,
        ms,
        fields,
      );
    }
    return { ok: true, exit_code: end.code, ...fields, duration_ms: ms, bytes: fields.bytes ?? 0 };
  }

  async readFile(path: string): Promise<Result<Uint8Array, ToolError>> {
    this.alive();
    const r = this.fs.readFile(this.abs(path));
    return r.ok ? { ok: true, value: Uint8Array.from(r.value) } : r;
  }

  async writeFile(
    path: string,
    content: Uint8Array,
    mode?: number,
  ): Promise<Result<{ bytes: number }, ToolError>> {
    this.alive();
    return this.fs.writeFile(this.abs(path), content, mode);
  }

  async listDir(path: string): Promise<Result<DirEntry[], ToolError>> {
    this.alive();
    return this.fs.listDir(this.abs(path));
  }

  async sessionState(): Promise<SessionState> {
    this.alive();
    return { cwd: this.session.cwd, env: { ...this.session.env } };
  }

  async setSessionState(state: SessionState): Promise<void> {
    this.alive();
    this.session = { cwd: state.cwd, env: { ...state.env }, vars: {} };
  }

  async snapshot(store: SnapshotStore, options?: SnapshotOptions): Promise<SnapshotInfo> {
    this.alive();
    const start = performance.now();
    const ws = this.fs.lookup(WORKSPACE, true);
    if (!ws.ok) throw new SandboxFailure('snapshot_failed', `cannot read ${WORKSPACE}: ${ws.error.message}`);
    const cap = options?.fileCapBytes ?? this.fileCapBytes;
    const all = workspaceEntries(ws.value);
    options?.onTaken?.();
    // As on Docker: a file over the cap is in no manifest, only listed as skipped.
    const skipped = all
      .filter((e) => e.type === 'file' && e.size > cap)
      .map((e) => ({ path: e.path, size: e.size }));
    const entries = all.filter((e) => !(e.type === 'file' && e.size > cap));
    let bytes = 0;
    for (const e of entries) {
      if (e.type !== 'file' || !e.hash || (await store.hasBlob(e.hash))) continue;
      const data = this.fs.readFile(posix.join(WORKSPACE, e.path));
      if (!data.ok) throw new SandboxFailure('snapshot_failed', data.error.message);
      await store.putBlob(e.hash, data.value);
      bytes += data.value.byteLength;
    }
    const treeHash = treeHashOf(entries);
    const manifest = await store.putManifest({ treeHash, entries });
    const current = new Map(entries.map((e) => [e.path, e]));
    const changed: ChangedPath[] = [];
    for (const e of entries) {
      const before = this.baseline.get(e.path);
      if (!before) changed.push({ path: e.path, change: 'added' });
      else if (!sameEntry(before, e)) changed.push({ path: e.path, change: 'modified' });
    }
    for (const path of this.baseline.keys())
      if (!current.has(path)) changed.push({ path, change: 'deleted' });
    this.baseline = current;
    return {
      manifest,
      treeHash,
      changed,
      bytes,
      durationMs: performance.now() - start,
      ...(skipped.length ? { skipped } : {}),
    };
  }

  async restore(
    store: SnapshotStore,
    manifest: SnapshotManifest,
    _verify: VerifyMode = 'touched',
  ): Promise<RestoreInfo> {
    this.alive();
    const start = performance.now();
    const ws = this.fs.lookup(WORKSPACE, true);
    if (!ws.ok) throw new SandboxFailure('restore_failed', ws.error.message);
    const current = new Map(workspaceEntries(ws.value).map((e) => [e.path, e]));
    const wanted = new Map(manifest.entries.map((e) => [e.path, e]));
    let removed = 0;
    let written = 0;
    // Deepest first, so a directory's children go before it.
    for (const [path, e] of [...current].reverse()) {
      const want = wanted.get(path);
      if (want && want.type === e.type && (e.type !== 'symlink' || want.target === e.target)) continue;
      if (!this.fs.lookup(posix.join(WORKSPACE, path), false).ok) continue;
      const r = this.fs.remove(posix.join(WORKSPACE, path), true);
      if (!r.ok) throw new SandboxFailure('restore_failed', r.error.message);
      removed++;
    }
    const sorted = [...manifest.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const e of sorted) {
      const abs = posix.join(WORKSPACE, e.path);
      const have = current.get(e.path);
      const present = this.fs.lookup(abs, false).ok;
      if (present && have && sameEntry(have, e)) continue;
      const r = await this.restoreEntry(store, e, abs, present);
      if (!r.ok) throw new SandboxFailure('restore_failed', `${e.path}: ${r.error.message}`);
      written++;
    }
    // Every file is re-hashed: in memory a full verify costs next to nothing.
    const after = workspaceEntries(ws.value);
    const treeHash = treeHashOf(after);
    if (treeHash !== manifest.treeHash) {
      throw new SandboxFailure(
        'verify_failed',
        `restored workspace hashes to ${treeHash}, not the recorded ${manifest.treeHash}; a blob in the store is damaged`,
      );
    }
    this.baseline = new Map(after.map((e) => [e.path, e]));
    return { treeHash, written, removed, durationMs: performance.now() - start };
  }

  private async restoreEntry(
    store: SnapshotStore,
    e: ManifestEntry,
    abs: string,
    present: boolean,
  ): Promise<Result<unknown, ToolError>> {
    if (e.type === 'dir') {
      const made = present ? { ok: true as const, value: undefined } : this.fs.mkdir(abs, true);
      return made.ok ? this.fs.chmod(abs, e.mode) : made;
    }
    if (e.type === 'symlink')
      return present ? { ok: true, value: undefined } : this.fs.symlink(e.target ?? '', abs);
    if (!e.hash)
      return { ok: false, error: { code: 'internal_error', message: 'file entry without a content hash' } };
    const data = await store.getBlob(e.hash);
    return this.fs.writeFile(abs, data, e.mode);
  }

  async killStrays(): Promise<void> {
    this.alive();
    // As the Docker helper: every writable place outside /workspace this fs has.
    this.fs.clear('/tmp');
    this.fs.clear('/home/agent');
  }

  async reset(): Promise<void> {
    this.alive();
    this.fs = this.newFs();
    this.session = freshState();
    this.baseline = new Map();
  }

  async destroy(): Promise<void> {
    this.destroyed = true;
  }
}
