import { assertNever } from '../../../shared/assert-never.js';
import { toolFieldText, type ComparedField } from '../../../shared/tool-result.js';
import type { ChangedPath, VerifierResult } from '../../../shared/trace-events.js';
import type { AgentReplay } from '../agents/agent-driver.js';

/**
 * What `replay --verify` found, one shape for every agent (Contracts: Replay (b)): the
 * harness re-ran the recorded actions, the agent re-ran its own tools (sandbox:), or both
 * the actions and the agent's program (exec:); each step says whether it matched and, if
 * not, what differed and why (`kind`).
 */

/** Why a re-executed step is not as recorded. */
export type StepDifference =
  /**
   * A call's result differs from the recording: in a compared field when the harness re-ran
   * it, in its `output` when the agent re-ran it itself (volatile parts of a recipe ignored).
   */
  | {
      readonly kind: 'tool_result_differs';
      readonly call_id: string;
      readonly name: string;
      readonly field: ComparedField | 'output';
      readonly recorded: unknown;
      readonly replayed: unknown;
    }
  /** The step made another number of tool calls than recorded. */
  | { readonly kind: 'calls_differ'; readonly recorded: number; readonly replayed: number }
  /**
   * The re-run agent asked what the recording cannot answer (another request, another tool
   * call: `field` is the first path that differs); its re-run stops at this step.
   */
  | {
      readonly kind: 'request_unanswerable';
      readonly field: string;
      readonly recorded: unknown;
      readonly replayed: unknown;
    };

/** The verdict of one re-executed step. */
export interface StepVerdict {
  readonly step: number;
  /** `match`: as recorded; `diverged`: see `diff`; `no_calls`: a final answer or parse error, as recorded. */
  readonly verdict: 'match' | 'diverged' | 'no_calls';
  /** What differed (present when the step diverged). */
  readonly diff?: readonly StepDifference[];
  /** The workspace after the step has the recorded tree hash; null when the step was not re-run that far. */
  readonly workspace_match: boolean | null;
  /**
   * When the workspace differs and both snapshots are at hand: the files that differ, seen
   * from the recording (`added`: only the re-execution has it), at most {@link MAX_FILES}.
   */
  readonly files?: readonly ChangedPath[];
}

/** The most differing files a step's verdict names. */
export const MAX_FILES = 50;

/** The re-execution report. */
export interface ReplayReport {
  readonly episode: string;
  readonly branch: string;
  /** How the branch was re-executed (its agent's driver says: agent-driver.ts). */
  readonly replayed: AgentReplay;
  /** `identical` when no step diverged, no workspace differed and the verifier agreed; else `diverged`. */
  readonly verdict: 'identical' | 'diverged';
  readonly steps: readonly StepVerdict[];
  /** The first step that diverged (any kind), or null. */
  readonly diverged_at: number | null;
  /** What differed at that step. */
  readonly diff: readonly StepDifference[] | null;
  /** The first step whose workspace tree hash differs, or null. */
  readonly workspace_diverged_at: number | null;
  /** The verifier's result (success and exit code) equals the recorded one; null when not compared. */
  readonly verifier_match: boolean | null;
  readonly recorded_verifier: VerifierResult | null;
  readonly replayed_verifier: VerifierResult | null;
}

/** The report of `steps`: the first divergences found, and the overall verdict. */
export function replayReport(
  head: Pick<ReplayReport, 'episode' | 'branch' | 'replayed'>,
  steps: readonly StepVerdict[],
  verifier: Pick<ReplayReport, 'verifier_match' | 'recorded_verifier' | 'replayed_verifier'>,
): ReplayReport {
  const first = steps.find((v) => v.verdict === 'diverged') ?? null;
  const workspaceAt = steps.find((v) => v.workspace_match === false)?.step ?? null;
  const identical = first === null && workspaceAt === null && verifier.verifier_match !== false;
  return {
    ...head,
    verdict: identical ? 'identical' : 'diverged',
    steps,
    diverged_at: first?.step ?? null,
    diff: first?.diff ?? null,
    workspace_diverged_at: workspaceAt,
    ...verifier,
  };
}

/**
 * What differed, named once for every reader (the Replay pane, `replay --verify`) in words:
 * `execute_shell's stdout`, `number of calls`, `request messages[0].content`. It read
 * `execute_shell.stdout`, a path into the result.
 */
export function differenceLabel(d: StepDifference): string {
  switch (d.kind) {
    case 'tool_result_differs':
      return toolFieldText(d.name, d.field);
    case 'calls_differ':
      return 'number of calls';
    case 'request_unanswerable':
      return `request ${d.field}`;
    default:
      return assertNever(d, 'step difference');
  }
}
