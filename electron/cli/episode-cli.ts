import type { ContextPolicy } from '../engine/agents/openai-agent.js';
import type { EpisodeEnv } from '../engine/harness/episode-factory.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import { openEngine, type Engine } from '../engine/open-engine.js';
import type { DiskEpisodeStore } from '../engine/trace/episode-store.js';
import { branchOutcome } from '../engine/trace/branch-outcome.js';
import { readLineage } from '../engine/trace/lineage.js';
import type { TraceEvent } from '../../shared/trace-events.js';
import { verifierWords } from '../../shared/end-words.js';
import { actionText, argsSummary, oneLineJson, resultLine } from '../../shared/step-summary.js';
import { oneLine } from '../../shared/one-line.js';
import type { CliIo } from './command.js';
import { EXIT, InfraError, UsageError } from './command.js';
import { DEFAULT_FIXES, engineError, isInputError } from '../engine/engine-error.js';
import { onInterrupt } from '../engine/interrupt.js';

/**
 * The engine over the store under $STEPBOX_HOME (orphaned traces are marked `interrupted`
 * on open); Docker is connected on first use; cold starts unless `pool` sandboxes are kept warm.
 */
export function cliEngine(io: CliIo, options: { pool?: number } = {}): Engine {
  return openEngine({ env: io.env, ...options });
}

/** The engine's sandbox supply (cold starts), or the infrastructure error naming the fix. */
export async function cliEpisodeEnv(engine: Engine, io?: CliIo): Promise<EpisodeEnv> {
  try {
    const env = await engine.episodeEnv();
    // A task's image build reports on stderr (stdout stays the one --json document).
    return io ? { ...env, onImageProgress: (p) => io.stderr.write(p.line + '\n') } : env;
  } catch (e) {
    throw cliError(e);
  }
}

/**
 * Maps engine errors to CLI errors through the engine's one mapping ({@link engineError},
 * which the services use too): bad input → usage (exit 2), the machine → infrastructure
 * (exit 3, with its fix). Anything else is passed on (an internal error).
 */
export function cliError(e: unknown): unknown {
  const mapped = engineError(e);
  if (!mapped) return e;
  return isInputError(mapped)
    ? new UsageError(mapped.message)
    : new InfraError(mapped.message, mapped.fix ?? DEFAULT_FIXES[mapped.code]);
}

/**
 * Ctrl+C and SIGTERM close the open trace as `interrupted` and destroy the sandbox
 * (Contracts: CLI). Returns the uninstall function.
 */
export function closeOnSignals(
  io: CliIo,
  controller: () => EpisodeRunner | null,
  engine: { close(): Promise<void> },
): () => void {
  return onInterrupt((signal) => {
    io.stderr.write(`\nstepbox: ${signal}: closing the trace as interrupted and destroying the sandbox\n`);
    const c = controller();
    void (async () => {
      try {
        if (c) await c.dispose();
        await engine.close();
      } catch (e) {
        io.stderr.write(`stepbox: cleanup after ${signal} failed: ${(e as Error).message}\n`);
      } finally {
        process.exit(130);
      }
    })();
  });
}

/** The summary `run`, `fork` and `resume` print (`--json` keys at the top level). */
export function episodeSummary(store: DiskEpisodeStore, c: EpisodeRunner): Record<string, unknown> {
  const end = c.ended();
  const info = store.resolve(c.branch);
  const lineage = readLineage(store, info);
  const outcome = branchOutcome(lineage.header, [...lineage.events, ...lineage.partial], end);
  return {
    episode: c.episode,
    branch: c.branch,
    status: end?.status ?? 'interrupted',
    end_reason: end?.end_reason ?? 'stopped',
    steps: outcome.steps,
    verifier: end?.verifier
      ? {
          success: end.verifier.success,
          exit_code: end.verifier.exit_code,
          ...(end.verifier.reward !== undefined ? { reward: end.verifier.reward } : {}),
          ...(end.verifier.error ? { error: end.verifier.error } : {}),
        }
      : null,
    trace: store.currentTracePath(info),
    return: outcome.return,
    final_reward: outcome.final_reward,
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
      return `step ${e.step}  → ${e.name} ${argsSummary(e.arguments, 100)}`;
    case 'tool_result':
      return `step ${e.step}  ← ${e.name} ${resultLine(e.result, 80)}${e.result.fallback ? '  [fallback]' : ''}`;
    case 'action':
      // Calls are told by their tool_call events; a final answer only here.
      return e.final !== null ? `step ${e.step}  ${actionText({ final: e.final, calls: [] }, 120)}` : null;
    case 'parse_error':
      return `step ${e.step}  ${actionText({ final: null, parse_error: e.message, calls: [] }, 120)}`;
    case 'injected':
      return `step ${e.step}  injected ${e.role}: ${oneLine(e.content, 100)}`;
    case 'override':
      return `step ${e.step}  override of ${e.call_id}`;
    case 'memory_write':
      return `step ${e.step}  memory ${e.key} = ${oneLineJson(e.after, 60, 'undefined')}${e.corruption ? `  [corruption: ${e.corruption}]` : ''}`;
    case 'warning':
      return `step ${e.step}  warning ${e.code}: ${e.message}`;
    case 'rollback':
      return `step ${e.step}  rollback to step ${e.to_step} (${e.reason})`;
    case 'human_command':
      return `step ${e.step}  human: ${e.command}`;
    case 'edit':
      return `step ${e.step}  edited by a person before ${e.stage === 'before_answer' ? 'the agent got it' : 'it ran'}${e.call_id ? ` (${e.call_id})` : ''}`;
    case 'error':
      return `step ${e.step}  ${e.fatal ? 'FATAL ' : ''}error ${e.code}: ${e.message}`;
    case 'end':
      return `end: ${e.status} (${e.end_reason})${e.verifier ? `, ${verifierWords(e.verifier)}` : ''}`;
    default:
      return null;
  }
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
