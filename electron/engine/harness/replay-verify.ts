import {
  COMPARED_FIELDS,
  comparedField,
  type ComparedField,
  type ToolResult,
} from '../../../shared/tool-result.js';
import type { ChangedPath, TraceEvent, TraceEventOf, VerifierResult } from '../../../shared/trace-events.js';
import type { ParsedAction } from '../agents/parse-action.js';
import { diffFiles } from '../sandbox/manifest.js';
import type { SnapshotStore } from '../sandbox/snapshot-store.js';
import { createMemory } from '../tools/memory.js';
import { shellQuote } from '../tools/shell-quote.js';
import { SandboxEnvironment } from './environment.js';
import type { EpisodeEnv } from './episode-factory.js';
import { snapshotAt } from '../trace/lineage.js';
import { sandboxAt, stateAt } from './state-at.js';
import { MaxSteps } from './max-steps.js';
import { OverlaySnapshotStore } from './overlay-snapshot-store.js';
import { StepTimeout } from './step-timeout.js';
import { MemorySink } from './trace-sink.js';
import { runVerifier } from './verifier.js';

/** One differing field of one call. */
export interface FieldDiff {
  readonly call_id: string;
  readonly name: string;
  readonly field: ComparedField | 'calls';
  readonly recorded: unknown;
  readonly replayed: unknown;
}

/** The verdict of one re-executed step. */
export interface StepVerdict {
  readonly step: number;
  /** `match`: every tool result equal; `diverged`: see `diff`; `no_calls`: a final answer or parse error. */
  readonly verdict: 'match' | 'diverged' | 'no_calls';
  readonly diff?: readonly FieldDiff[];
  /** The replayed snapshot's tree hash equals the recorded one. */
  readonly workspace_match: boolean;
  /**
   * When the workspace differs: the files that differ, seen from the recording (`added`:
   * only the re-execution has it; `deleted`: only the recording), at most {@link MAX_FILES}.
   */
  readonly files?: readonly ChangedPath[];
}

/** The most differing files a step's verdict names. */
export const MAX_FILES = 50;

/** The files that differ between the recorded and the replayed snapshot of a step. */
async function differingFiles(
  store: SnapshotStore,
  recorded: string | null,
  replayed: string | null,
): Promise<ChangedPath[]> {
  if (!recorded || !replayed) return [];
  const [a, b] = await Promise.all([store.getManifest(recorded), store.getManifest(replayed)]);
  return diffFiles(a, b).slice(0, MAX_FILES);
}

/** The re-execution report (Contracts: Replay (b)). */
export interface ReplayReport {
  readonly episode: string;
  readonly branch: string;
  readonly steps: readonly StepVerdict[];
  /** The first step whose tool results differ, or null. */
  readonly diverged_at: number | null;
  readonly diff: readonly FieldDiff[] | null;
  /** The first step whose workspace tree hash differs, or null. */
  readonly workspace_diverged_at: number | null;
  /** The verifier's result (success and exit code) equals the recorded one; null when the recording has none to compare. */
  readonly verifier_match: boolean | null;
  readonly recorded_verifier: VerifierResult | null;
  readonly replayed_verifier: VerifierResult | null;
}

/**
 * Re-executes a recorded branch: snapshot 0 restored in a fresh sandbox, the recorded
 * actions run again in order with human commands re-applied at their steps (injections
 * and overrides change what the agent saw, not what ran, so the recorded actions
 * already carry them), every tool result compared with the recording, and every step's
 * workspace tree hash compared apart. Nothing is written to the episode.
 */
export async function replayVerify(
  options: EpisodeEnv & { readonly id: string; readonly onStep?: (v: StepVerdict) => void },
): Promise<ReplayReport> {
  const store = options.store;
  // Step 0 through the recorded-task policy; the whole lineage is replayed from there.
  const state = stateAt(store, options.id, 0, options.consent);
  const { info, lineage, task, snapshot: snap0 } = state;
  const events = lineage.events;
  const snapshots = new OverlaySnapshotStore(store.snapshots(info.episode));
  const sandbox = await sandboxAt(store, state, options.supply);
  try {
    const sink = new MemorySink();
    const memory = createMemory(task.memory.initial);
    const env = new SandboxEnvironment({
      task,
      sandbox,
      registry: options.parts.tools(task),
      memory,
      snapshots,
      sink,
    });
    env.stable = { step: 0, manifest: snap0.manifest, treeHash: snap0.tree_hash, session: snap0.session };
    const stack = new StepTimeout(
      new MaxSteps(env, Infinity),
      task.timeouts.step_soft,
      task.timeouts.step_hard,
    );
    const recordedSteps = events.filter((e) => e.type === 'snapshot' && e.step > 0).map((e) => e.step);
    const steps: StepVerdict[] = [];
    let divergedAt: number | null = null;
    let firstDiff: FieldDiff[] | null = null;
    let workspaceAt: number | null = null;
    for (const k of recordedSteps) {
      for (const h of events.filter(
        (e): e is TraceEventOf<'human_command'> => e.type === 'human_command' && e.step === k - 1,
      )) {
        const cd = h.cwd ? `cd ${shellQuote(h.cwd)} 2>/dev/null; ` : '';
        await sandbox.exec({
          command: `${cd}${h.command}`,
          timeoutMs: task.timeouts.step_hard * 1000,
          fresh: true,
        });
      }
      const parsed = recordedAction(events, k);
      // A result a person gave instead of running the call is given again: that tool never ran.
      const replaced = new Map(
        events
          .filter(
            (e): e is TraceEventOf<'tool_result'> =>
              e.type === 'tool_result' && e.step === k && e.replaced === true,
          )
          .map((e) => [e.call_id, e.result] as const),
      );
      const outcome = await stack.step({ step: k, parsed, ...(replaced.size > 0 ? { replaced } : {}) });
      const recorded = events.filter(
        (e): e is TraceEventOf<'tool_result'> => e.type === 'tool_result' && e.step === k,
      );
      const diff = compareResults(
        recorded,
        outcome.info.calls.map((c) => ({ id: c.call.id, name: c.call.name, result: c.result })),
      );
      const replayedSnap = [...sink.events].reverse().find((e) => e.type === 'snapshot' && e.step === k);
      const recordedSnap = snapshotAt(events, k);
      const workspaceMatch =
        replayedSnap?.type === 'snapshot' &&
        recordedSnap !== null &&
        replayedSnap.tree_hash === recordedSnap.tree_hash;
      const files = workspaceMatch
        ? []
        : await differingFiles(
            snapshots,
            recordedSnap?.manifest ?? null,
            replayedSnap?.type === 'snapshot' ? replayedSnap.manifest : null,
          );
      const verdict: StepVerdict = {
        step: k,
        verdict:
          parsed.kind !== 'calls' && diff.length === 0 ? 'no_calls' : diff.length ? 'diverged' : 'match',
        ...(diff.length ? { diff } : {}),
        workspace_match: workspaceMatch,
        ...(files.length ? { files } : {}),
      };
      steps.push(verdict);
      options.onStep?.(verdict);
      if (diff.length && divergedAt === null) {
        divergedAt = k;
        firstDiff = diff;
      }
      if (!workspaceMatch && workspaceAt === null) workspaceAt = k;
      if (outcome.info.fatal) break;
    }
    const recordedVerifier = lineage.trace.end?.verifier ?? null;
    const endedNormally =
      lineage.trace.end !== null && ['succeeded', 'failed', 'timeout'].includes(lineage.trace.end.status);
    const replayedVerifier = endedNormally ? await runVerifier(task, sandbox) : null;
    const verifierMatch = !endedNormally
      ? null
      : recordedVerifier === null || replayedVerifier === null
        ? recordedVerifier === replayedVerifier
        : recordedVerifier.success === replayedVerifier.success &&
          recordedVerifier.exit_code === replayedVerifier.exit_code;
    return {
      episode: info.episode,
      branch: info.branch,
      steps,
      diverged_at: divergedAt,
      diff: firstDiff,
      workspace_diverged_at: workspaceAt,
      verifier_match: verifierMatch,
      recorded_verifier: recordedVerifier,
      replayed_verifier: replayedVerifier,
    };
  } finally {
    await options.supply.release(sandbox);
  }
}

/** The action recorded at step k, as the environment takes it. */
function recordedAction(events: readonly TraceEvent[], k: number): ParsedAction {
  for (const e of events) {
    if (e.step !== k) continue;
    if (e.type === 'action') {
      if (e.final !== null && e.calls.length === 0) return { kind: 'final', text: e.final };
      const via = (e.via as 'tool_calls' | 'text' | undefined) ?? 'tool_calls';
      return { kind: 'calls', calls: e.calls, via };
    }
    if (e.type === 'parse_error') {
      const ids = (e.call_ids as string[] | undefined) ?? [];
      return { kind: 'parse_error', message: e.message, callIds: ids, via: 'text' };
    }
  }
  return { kind: 'parse_error', message: `no action recorded at step ${k}`, callIds: [], via: 'empty' };
}

/** Differences between recorded and replayed results, call by call, in the compared fields. */
export function compareResults(
  recorded: readonly TraceEventOf<'tool_result'>[],
  replayed: readonly { id: string; name: string; result: ToolResult }[],
): FieldDiff[] {
  const diffs: FieldDiff[] = [];
  if (recorded.length !== replayed.length) {
    diffs.push({
      call_id: '',
      name: '',
      field: 'calls',
      recorded: recorded.length,
      replayed: replayed.length,
    });
  }
  for (const r of recorded) {
    const again = replayed.find((x) => x.id === r.call_id);
    if (!again) continue;
    for (const field of COMPARED_FIELDS) {
      const a = comparedField(r.result, field);
      const b = comparedField(again.result, field);
      if (a !== b) diffs.push({ call_id: r.call_id, name: r.name, field, recorded: a, replayed: b });
    }
  }
  return diffs;
}
