import { AgentFailure } from '../engine/agents/agent.js';
import type { ContextPolicy } from '../engine/agents/openai-agent.js';
import { HarnessError } from '../engine/harness/harness-error.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import { DiskSnapshotStore } from '../engine/sandbox/disk-snapshot-store.js';
import { createDockerProvider, type DockerSandboxProvider } from '../engine/sandbox/docker-provider.js';
import { SandboxFailure } from '../engine/sandbox/sandbox.js';
import { openEpisodeStore, StoreError, type DiskEpisodeStore } from '../engine/trace/episode-store.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import type { CliIo } from './command.js';
import { EXIT, InfraError, UsageError } from './command.js';
import { infraError } from './sandbox-exec.js';

/** The store under $STEPBOX_HOME; orphaned traces are marked `interrupted` on open. */
export function cliStore(io: CliIo): DiskEpisodeStore {
  const store = openEpisodeStore(io.env.STEPBOX_HOME || undefined, {
    snapshotStore: (d) => new DiskSnapshotStore(d),
  });
  store.markInterrupted();
  return store;
}

/** A Docker provider, or the infrastructure error naming the fix. */
export async function cliProvider(): Promise<DockerSandboxProvider> {
  try {
    return await createDockerProvider();
  } catch (e) {
    throw infraError(e);
  }
}

/** Maps engine errors to CLI errors: bad input → usage (2), infrastructure → exit 3. */
export function cliError(e: unknown): unknown {
  if (e instanceof SandboxFailure) return infraError(e);
  if (e instanceof AgentFailure) return new UsageError(e.message);
  if (e instanceof StoreError || e instanceof HarnessError) {
    if (
      e.code === 'not_found' ||
      e.code === 'invalid_input' ||
      e.code === 'conflict' ||
      e.code === 'invalid_task' ||
      e.code === 'consent_required'
    )
      return new UsageError(e.message);
    return new InfraError(e.message);
  }
  return e;
}

/**
 * Ctrl+C and SIGTERM close the open trace as `interrupted` and destroy the sandbox
 * (Contracts: CLI). Returns the uninstall function.
 */
export function closeOnSignals(
  io: CliIo,
  controller: () => EpisodeRunner | null,
  provider: DockerSandboxProvider,
): () => void {
  let handling = false;
  const handler = (signal: NodeJS.Signals) => {
    if (handling) return;
    handling = true;
    io.stderr.write(`\nstepbox: ${signal}: closing the trace as interrupted and destroying the sandbox\n`);
    const c = controller();
    void (async () => {
      try {
        if (c) await c.dispose();
        await provider.close();
      } catch (e) {
        io.stderr.write(`stepbox: cleanup after ${signal} failed: ${(e as Error).message}\n`);
      } finally {
        process.exit(130);
      }
    })();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

/** The summary `run`, `fork` and `resume` print (`--json` keys at the top level). */
export function episodeSummary(store: DiskEpisodeStore, c: EpisodeRunner): Record<string, unknown> {
  const end = c.ended();
  const info = store.resolve(c.branch);
  return {
    episode: c.episode,
    branch: c.branch,
    status: end?.status ?? 'interrupted',
    end_reason: end?.end_reason ?? 'stopped',
    steps: c.currentStep(),
    verifier: end?.verifier ? { success: end.verifier.success, exit_code: end.verifier.exit_code } : null,
    trace: store.currentTracePath(info),
    return: end?.return ?? null,
  };
}

/** Exit code of an ended episode: 0 succeeded, 1 otherwise. */
export function episodeExit(c: EpisodeRunner): number {
  return c.ended()?.status === 'succeeded' ? EXIT.ok : EXIT.failed;
}

/** One line per notable event, for people watching (stderr in --json mode). */
export function describeEvent(e: TraceEvent): string | null {
  switch (e.type) {
    case 'tool_call':
      return `step ${e.step}  → ${e.name} ${clip(JSON.stringify(e.arguments), 100)}`;
    case 'tool_result': {
      const r = e.result;
      const what = r.error
        ? `error ${r.error.code}: ${clip(r.error.message, 80)}`
        : `${r.exit_code !== undefined ? `exit ${r.exit_code}` : 'ok'}${r.stdout ? `  ${clip(r.stdout.trim(), 80)}` : ''}`;
      return `step ${e.step}  ← ${e.name} ${what}${r.fallback ? '  [fallback]' : ''}`;
    }
    case 'action':
      return e.final !== null ? `step ${e.step}  final answer: ${clip(e.final, 120)}` : null;
    case 'parse_error':
      return `step ${e.step}  parse error: ${clip(e.message, 120)}`;
    case 'injected':
      return `step ${e.step}  injected ${e.role}: ${clip(e.content, 100)}`;
    case 'override':
      return `step ${e.step}  override of ${e.call_id}`;
    case 'memory_write':
      return `step ${e.step}  memory ${e.key} = ${clip(JSON.stringify(e.after), 60)}${e.corruption ? `  [corruption: ${e.corruption}]` : ''}`;
    case 'warning':
      return `step ${e.step}  warning ${e.code}: ${e.message}`;
    case 'rollback':
      return `step ${e.step}  rollback to step ${e.to_step} (${e.reason})`;
    case 'human_command':
      return `step ${e.step}  human: ${e.command}`;
    case 'error':
      return `step ${e.step}  ${e.fatal ? 'FATAL ' : ''}error ${e.code}: ${e.message}`;
    case 'end':
      return `end: ${e.status} (${e.end_reason})${e.verifier ? `, verifier exit ${e.verifier.exit_code}` : ''}`;
    default:
      return null;
  }
}

function clip(text: string, n: number): string {
  const one = text.replace(/\s+/g, ' ');
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

/** Parses a non-negative integer flag; throws a usage error naming it. */
export function intFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new UsageError(`--${name}: "${value}" is not a non-negative integer`);
  return n;
}

/** Parses a number flag; throws a usage error naming it. */
export function numberFlag(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`--${name}: "${value}" is not a number`);
  return n;
}

/**
 * Ends the process leaving a `--keep` sandbox running: the provider's engine event
 * stream would otherwise keep Node alive, and closing the provider would destroy the
 * sandbox. Output is flushed first.
 */
export async function exitKeepingSandbox(io: CliIo, code: number): Promise<never> {
  await new Promise<void>((resolve) => io.stdout.write('', () => resolve()));
  await new Promise<void>((resolve) => io.stderr.write('', () => resolve()));
  process.exit(code);
}

/** Parses `--context-policy`; throws a usage error naming the accepted values. */
export function contextPolicyFlag(value: string | undefined): ContextPolicy | undefined {
  if (value === undefined) return undefined;
  if (value === 'end' || value === 'drop_oldest') return value;
  throw new UsageError(`--context-policy: "${value}" is not end or drop_oldest`);
}
