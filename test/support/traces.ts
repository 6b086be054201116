/**
 * Hand-made, realistic traces for tests (trace/store, QA, UI): a builder that drives the
 * real store and writer, so what it writes is exactly what the harness would.
 *
 *   const store = openEpisodeStore(tmpHome, { skipMarkInterrupted: true });
 *   const ep = await writeSampleEpisode(store, { steps: 4, task: 'fix-tests' });
 *   const fork = await writeSampleFork(store, ep, { at: 2, steps: 2 });
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { HeaderFields, DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import type { EndFields, FileTraceWriter } from '../../electron/engine/trace/trace-writer.js';
import type {
  SnapshotManifest,
  ManifestEntry,
  SnapshotStore,
} from '../../electron/engine/sandbox/snapshot-store.js';
import type { ToolResult } from '../../shared/tool-result.js';
import type { ChangedPath, HeaderEvent } from '../../shared/trace-events.js';
import { treeHashText } from '../../shared/tree-hash.js';
import { TRACE_SCHEMA } from '../../shared/constants.js';

/** One step of a sample episode; every field optional (default: a shell call writing `step-K.txt`). */
export interface SampleStep {
  /** A tool call (default `execute_shell`). */
  readonly tool?: string;
  readonly args?: Record<string, unknown>;
  /** Overrides of the tool result (default ok, exit 0). */
  readonly result?: Partial<ToolResult>;
  /** A final answer instead of a tool call. */
  readonly final?: string;
  /** Unparseable model output instead of an action. */
  readonly parseError?: string;
  /** Files this step writes into the workspace (default `step-K.txt`); null deletes. */
  readonly files?: Record<string, string | null>;
  /** A memory write made by this step's tool. */
  readonly memory?: {
    key: string;
    after: unknown;
    before?: unknown;
    writer?: string;
    corruption?: string | null;
  };
  /** A user message injected before this step's decision. */
  readonly inject?: string;
  /** After a hard timeout: what the tool really returned (the `result` is then the fallback the agent saw). */
  readonly real?: Partial<ToolResult>;
  /** Replace the result the agent sees (the tool ran; `real` stays in the trace). */
  readonly override?: Partial<ToolResult>;
  /** A command a person typed in the terminal during this step. */
  readonly human?: string;
  /**
   * A hard timeout inside this step: the agent is shown `result` as a fallback, `real` is
   * what the tool returned, and the step records a rollback to step k-1 before it goes on.
   */
  readonly hardTimeout?: { readonly real: Partial<ToolResult> };
  /** A non-fatal error event at this step. */
  readonly error?: { code: string; message: string; fatal?: boolean };
  /** Step reward components (default `{format: 0.1}`); a list writes one reward event each (a re-decided step). */
  readonly reward?: Record<string, number> | readonly Record<string, number>[];
}

/** Options of {@link writeSampleEpisode}. */
export interface SampleEpisodeOptions {
  /** Number of steps when `script` is not given (default 3): shell calls, then a final answer. */
  readonly steps?: number;
  /** Explicit steps; overrides `steps`. */
  readonly script?: readonly SampleStep[];
  readonly task?: string;
  readonly agent?: string;
  /** The header's `recipe` (`codex@0.171.0`), as the engine records a recipe's agent; none by default. */
  readonly recipe?: string;
  /** How the branch ends; `null` leaves the trace open (writer returned, still open). Default succeeded. */
  readonly end?: Omit<EndFields, 'step'> | null;
  /** `created` of the header (default now). */
  readonly created?: number;
  /** More header fields, as a recorded (untrusted) header may hold them. */
  readonly headerExtra?: Record<string, unknown>;
  /** More fields of the header's task (its `verifier`, say); none by default. */
  readonly taskFields?: Record<string, unknown>;
}

/** What a sample episode wrote. */
export interface SampleEpisode {
  readonly episode: string;
  readonly branch: string;
  /** Still open when `end: null`; otherwise closed. */
  readonly writer: FileTraceWriter;
  /** Manifest id of snapshot k, by k. */
  readonly manifests: readonly string[];
  /** The workspace after the last step. */
  readonly files: Readonly<Record<string, string>>;
}

/** A header as the harness would write it (for writer tests that bypass the store). */
export function sampleHeader(
  episode: string,
  branch: string,
  task = 'sample-task',
): Omit<HeaderEvent, 'seq' | 't' | 'type' | 'source' | 'step'> {
  return {
    ...sampleHeaderFields(task, 'scripted:agent.jsonl', Date.now()),
    schema: TRACE_SCHEMA,
    episode,
    branch,
  };
}

function sampleHeaderFields(task: string, agent: string, created: number, recipe?: string): HeaderFields {
  return {
    task: { name: task, goal: `Do the ${task} thing`, max_steps: 30 },
    task_path: `resources/tasks/${task}/task.json`,
    // A recipe runs as a `sandbox` agent (sandbox-agent.ts describe()).
    agent:
      recipe === undefined
        ? { spec: agent, kind: agent.split(':')[0] }
        : { spec: agent, kind: 'sandbox', recipe },
    image: 'stepbox-sandbox:1',
    created,
    parent_branch: null,
    fork_step: null,
  };
}

const sha = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');

async function snapshot(
  store: SnapshotStore,
  files: Record<string, string>,
): Promise<{ id: string; treeHash: string; bytes: number }> {
  const entries: ManifestEntry[] = [];
  let bytes = 0;
  // Folders are listed like the helper lists them (a manifest names every parent it uses).
  const dirs = new Set<string>();
  for (const path of Object.keys(files))
    for (let cut = path.indexOf('/'); cut > 0; cut = path.indexOf('/', cut + 1)) dirs.add(path.slice(0, cut));
  for (const dir of [...dirs].sort()) entries.push({ path: dir, type: 'dir', mode: 0o755, size: 0 });
  for (const [path, content] of Object.entries(files).sort()) {
    const data = Buffer.from(content);
    const hash = sha(data);
    if (!(await store.hasBlob(hash))) {
      await store.putBlob(hash, data);
      bytes += data.length;
    }
    entries.push({ path, type: 'file', mode: 0o644, size: data.length, hash });
  }
  const manifest: SnapshotManifest = { treeHash: sha(treeHashText(entries)), entries };
  return { id: await store.putManifest(manifest), treeHash: manifest.treeHash, bytes };
}

function defaultScript(n: number): SampleStep[] {
  return Array.from({ length: n }, (_, i) =>
    i === n - 1 && n > 1
      ? { final: 'All done.' }
      : { args: { command: `echo ${i + 1} > step-${i + 1}.txt` } },
  );
}

async function writeSteps(
  writer: FileTraceWriter,
  snaps: SnapshotStore,
  script: readonly SampleStep[],
  firstStep: number,
  workspace: Record<string, string>,
  manifests: string[],
): Promise<void> {
  for (const [i, s] of script.entries()) {
    const step = firstStep + i;
    if (s.inject)
      writer.append({ type: 'injected', step, source: 'injected', role: 'user', content: s.inject });
    const req = writer.append({
      type: 'model_request',
      step,
      source: 'harness',
      request: { model: 'scripted', n: step },
    });
    const callId = `call_${step}`;
    const tool = s.tool ?? 'execute_shell';
    const args = s.args ?? { command: `echo ${step} > step-${step}.txt` };
    const raw =
      s.parseError ?? (s.final !== undefined ? s.final : JSON.stringify({ name: tool, arguments: args }));
    const out = writer.append({
      type: 'model_output',
      step,
      source: 'agent',
      cause: req.seq,
      raw,
      usage: null,
    });
    if (s.parseError !== undefined) {
      writer.append({
        type: 'parse_error',
        step,
        source: 'harness',
        cause: out.seq,
        message: 'not a tool call',
        raw,
      });
    } else if (s.final !== undefined) {
      writer.append({ type: 'action', step, source: 'agent', cause: out.seq, calls: [], final: s.final });
    } else {
      const act = writer.append({
        type: 'action',
        step,
        source: 'agent',
        cause: out.seq,
        calls: [{ id: callId, name: tool, arguments: args }],
        final: null,
      });
      const call = writer.append({
        type: 'tool_call',
        step,
        source: 'agent',
        cause: act.seq,
        call_id: callId,
        name: tool,
        arguments: args,
      });
      const result = {
        ok: true,
        exit_code: 0,
        stdout: '',
        stderr: '',
        duration_ms: 4 + step,
        bytes: 0,
        ...s.result,
      } as ToolResult;
      writer.append({
        type: 'tool_result',
        step,
        source: 'environment',
        cause: call.seq,
        call_id: callId,
        name: tool,
        result,
        ...(s.real
          ? { real: { ...result, ...s.real } as ToolResult }
          : s.hardTimeout
            ? {
                real: {
                  ok: false,
                  error: { code: 'timeout', message: 'killed after the step limit' },
                  duration_ms: 1000,
                  bytes: 0,
                  ...s.hardTimeout.real,
                } as ToolResult,
              }
            : {}),
      });
      if (s.hardTimeout)
        writer.append({
          type: 'rollback',
          step,
          source: 'harness',
          to_step: step - 1,
          reason: 'hard_timeout',
          tree_hash: 'restored',
        });
      if (s.override) {
        const shown = { ...result, ...s.override } as ToolResult;
        writer.append({ type: 'override', step, source: 'injected', call_id: callId, real: result, shown });
      }
      if (s.memory)
        writer.append({
          type: 'memory_write',
          step,
          source: 'environment',
          key: s.memory.key,
          before: s.memory.before ?? null,
          after: s.memory.after,
          writer: s.memory.writer ?? tool,
          corruption: s.memory.corruption ?? null,
        });
    }
    if (s.human)
      writer.append({
        type: 'human_command',
        step,
        source: 'human',
        command: s.human,
        cwd: '/workspace',
        exit_code: 0,
      });
    if (s.error)
      writer.append({
        type: 'error',
        step,
        source: 'harness',
        code: s.error.code,
        message: s.error.message,
        fatal: s.error.fatal ?? false,
      });
    const rewards = s.reward ?? { format: 0.1 };
    // Array.isArray does not narrow a readonly array's union (TypeScript #17002).
    for (const components of (Array.isArray(rewards) ? rewards : [rewards]) as readonly Record<
      string,
      number
    >[])
      writer.append({
        type: 'reward',
        step,
        source: 'harness',
        components,
        total: Object.values(components).reduce((a, b) => a + b, 0),
        final: false,
      });
    const before = { ...workspace };
    const files =
      s.files ??
      (s.final === undefined && s.parseError === undefined ? { [`step-${step}.txt`]: `${step}\n` } : {});
    for (const [p, c] of Object.entries(files)) {
      if (c === null) delete workspace[p];
      else workspace[p] = c;
    }
    const changed: ChangedPath[] = Object.keys({ ...before, ...workspace })
      .sort()
      .flatMap((p): ChangedPath[] =>
        !(p in before)
          ? [{ path: p, change: 'added' }]
          : !(p in workspace)
            ? [{ path: p, change: 'deleted' }]
            : before[p] !== workspace[p]
              ? [{ path: p, change: 'modified' }]
              : [],
      );
    const snap = await snapshot(snaps, workspace);
    manifests[step] = snap.id;
    writer.append({
      type: 'snapshot',
      step,
      source: 'harness',
      tree_hash: snap.treeHash,
      manifest: snap.id,
      changed,
      bytes: snap.bytes,
      session: { cwd: '/workspace', env: {} },
    });
    writer.commitStep();
  }
}

/**
 * Writes a realistic episode through the store: header, snapshot 0 (an initial
 * `README.md`), then per step model request/output, action, tool call/result, optional
 * injection/override/human command/memory write/error, a reward and snapshot k
 * (real blobs and manifests in the episode's snapshot store), and an `end`.
 */
export async function writeSampleEpisode(
  store: DiskEpisodeStore,
  options: SampleEpisodeOptions = {},
): Promise<SampleEpisode> {
  const script = options.script ?? defaultScript(options.steps ?? 3);
  const fields = sampleHeaderFields(
    options.task ?? 'sample-task',
    options.agent ?? 'scripted:agent.jsonl',
    options.created ?? Date.now(),
    options.recipe,
  );
  const { episode, branch, writer } = store.createEpisode({
    ...fields,
    task: { ...fields.task, ...(options.taskFields ?? {}) },
    ...options.headerExtra,
  });
  const snaps = store.snapshots(episode);
  const workspace: Record<string, string> = { 'README.md': '# sample\n' };
  const manifests: string[] = [];
  const s0 = await snapshot(snaps, workspace);
  manifests[0] = s0.id;
  writer.append({
    type: 'snapshot',
    step: 0,
    source: 'harness',
    tree_hash: s0.treeHash,
    manifest: s0.id,
    changed: [{ path: 'README.md', change: 'added' }],
    bytes: s0.bytes,
  });
  writer.commitStep();
  await writeSteps(writer, snaps, script, 1, workspace, manifests);
  await finish(writer, script.length, options.end);
  return { episode, branch, writer, manifests, files: workspace };
}

async function finish(
  writer: FileTraceWriter,
  steps: number,
  end: SampleEpisodeOptions['end'],
): Promise<void> {
  if (end === null) return;
  const e = end ?? {
    status: 'succeeded',
    end_reason: 'final_answer',
    verifier: { success: true, exit_code: 0 },
  };
  if (e.status === 'succeeded')
    writer.append({
      type: 'reward',
      step: steps,
      source: 'harness',
      components: { verifier: 1 },
      total: 1,
      final: true,
    });
  await writer.close({ steps, return: e.status === 'succeeded' ? 1 : 0, ...e, step: steps });
}

/** Writes a fork of `parent` at step `at` with its own steps (numbered from at+1). */
export async function writeSampleFork(
  store: DiskEpisodeStore,
  parent: SampleEpisode,
  options: SampleEpisodeOptions & { at: number; headerExtra?: Record<string, unknown> },
): Promise<SampleEpisode> {
  const script = options.script ?? defaultScript(options.steps ?? 2);
  const header = {
    ...sampleHeaderFields(
      options.task ?? 'sample-task',
      options.agent ?? 'scripted:fork.jsonl',
      options.created ?? Date.now(),
    ),
    ...(options.headerExtra ?? {}),
  };
  const { branch, writer } = store.createBranch(parent.episode, parent.branch, options.at, header);
  const snaps = store.snapshots(parent.episode);
  const manifests = parent.manifests.slice(0, options.at + 1);
  const base = await snaps.getManifest(manifests[options.at]);
  const workspace: Record<string, string> = {};
  for (const e of base.entries)
    if (e.hash) workspace[e.path] = Buffer.from(await snaps.getBlob(e.hash)).toString('utf8');
  writer.append({
    type: 'rollback',
    step: options.at,
    source: 'harness',
    to_step: options.at,
    reason: 'fork',
    tree_hash: base.treeHash,
  });
  await writeSteps(writer, snaps, script, options.at + 1, workspace, manifests);
  await finish(writer, options.at + script.length, options.end);
  return { episode: parent.episode, branch, writer, manifests, files: workspace };
}

/**
 * Makes line `n` (1-based) of a trace fail validation: an unknown event type, as a hand edit
 * leaves it. A closed (gzip) trace is rewritten gzip'd, so the file stays where the store looks.
 */
export function breakLine(path: string, n: number): void {
  const gz = path.endsWith('.gz');
  const raw = readFileSync(path);
  const lines = (gz ? gunzipSync(raw) : raw).toString('utf8').split('\n');
  lines[n - 1] = lines[n - 1].replace(/"type":"[a-z_]+"/, '"type":"tool_reslt"');
  const text = Buffer.from(lines.join('\n'));
  writeFileSync(path, gz ? gzipSync(text) : text);
}
