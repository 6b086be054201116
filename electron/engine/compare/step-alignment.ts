import type { PairVerdict, WorkspaceVerdict } from '../../../shared/contract/models.js';
import { alignKeys } from './align.js';
import { resultDifference } from '../../../shared/tool-result.js';
import { canonicalJson } from '../../../shared/jcs.js';
import { countOf } from '../../../shared/count-of.js';
import type { DecidedAction } from '../../../shared/step-summary.js';
import type { StepFacts } from './step-facts.js';

/** Two steps matched by alignment; a null side is a step the other branch inserted. */
export interface StepPair {
  readonly a_step: number | null;
  readonly b_step: number | null;
  readonly verdict: PairVerdict;
  /**
   * What differs, in words: for a different action the tool or its arguments
   * (`tool: execute_shell vs write_file`, `execute_shell arguments: command differs`), for a
   * different result the result (`execute_shell: exit 0 vs 1`); else empty.
   */
  readonly differs: readonly string[];
  /** The two workspaces after the steps: the same, different, a side with no step, or a step with no snapshot. */
  readonly workspace_verdict: WorkspaceVerdict;
}

/** Two branches' steps aligned, and where they first diverged. */
export interface StepAlignment {
  readonly pairs: StepPair[];
  /** The first step, in A's numbering, whose action or what-the-agent-saw differs; null when none. */
  readonly diverged_at: number | null;
  /**
   * The index in `pairs` of that first difference; null when none. Its pair says what
   * `diverged_at` cannot: whether A has that step at all (a step only B took has A's next number).
   */
  readonly diverged_pair: number | null;
}

/**
 * The workspaces after two aligned steps: a missing side is said as such, never `same`
 * (a step only the other branch took left no workspace here to be the same as), and a
 * step that never completed (no snapshot) is `unknown`.
 */
export function workspaceVerdict(x: StepFacts | null, y: StepFacts | null): WorkspaceVerdict {
  if (!x) return 'only_b';
  if (!y) return 'only_a';
  if (x.treeHash === null || y.treeHash === null) return 'unknown';
  return x.treeHash === y.treeHash ? 'same' : 'differs';
}

/**
 * Aligns two branches' agent steps by their decisions (not by index: a step inserted in
 * one branch does not shift the rest) and marks each pair: a different action, a
 * different result (what the agent saw — overrides and injections count — or what
 * really happened), different files (the workspaces after the step), or the same.
 */
export function alignSteps(a: readonly StepFacts[], b: readonly StepFacts[]): StepAlignment {
  const aligned = alignKeys(
    a.map((s) => s.action),
    b.map((s) => s.action),
  );
  const pairs: StepPair[] = [];
  let divergedAt: number | null = null;
  let divergedPair: number | null = null;
  let lastA = 0;
  for (const p of aligned) {
    const x = p.a === null ? null : a[p.a];
    const y = p.b === null ? null : b[p.b];
    let verdict: PairVerdict;
    let diverges: boolean;
    if (!x || !y || x.action !== y.action) {
      verdict = 'different_action';
      diverges = true;
    } else if (x.seen !== y.seen || x.real !== y.real) {
      verdict = 'different_result';
      diverges = x.seen !== y.seen;
    } else {
      verdict = x.treeHash === y.treeHash ? 'same' : 'different_files';
      diverges = false;
    }
    // A step only B took sits between A's steps: in A's numbering it is the step after the last one.
    if (diverges && divergedAt === null) {
      divergedAt = x ? x.step : lastA + 1;
      divergedPair = pairs.length;
    }
    if (x) lastA = x.step;
    const differs =
      x && y && verdict === 'different_result'
        ? whatDiffers(x, y)
        : x && y && verdict === 'different_action'
          ? actionDifference(x.decision, y.decision)
          : [];
    pairs.push({
      a_step: x?.step ?? null,
      b_step: y?.step ?? null,
      verdict,
      differs,
      workspace_verdict: workspaceVerdict(x, y),
    });
  }
  return { pairs, diverged_at: divergedAt, diverged_pair: divergedPair };
}

/**
 * What differs between two steps with the same action, by the one definition of the same
 * result ({@link resultDifference}): per call what the agent saw, then what really
 * happened; an injection or a parse error the results do not explain is named as such.
 */
export function whatDiffers(x: StepFacts, y: StepFacts): string[] {
  const out: string[] = [];
  const perCall = (xs: StepFacts['seenResults'], ys: StepFacts['seenResults'], prefix: string): void => {
    const many = Math.max(xs.length, ys.length) > 1;
    for (let i = 0; i < Math.max(xs.length, ys.length); i++) {
      const [ra, rb] = [xs[i], ys[i]];
      if (!ra || !rb) {
        out.push(`${prefix}${ra ? 'only this' : 'only the other'} has call ${i + 1}`);
        continue;
      }
      const name = many ? `${ra[0]} (call ${i + 1}): ` : '';
      for (const d of resultDifference(ra[1], rb[1])) out.push(`${prefix}${name}${d}`);
    }
  };
  if (x.seen !== y.seen) {
    perCall(x.seenResults, y.seenResults, '');
    if (out.length === 0) out.push('what the agent was shown differs (an injection or a parse error)');
  } else if (x.real !== y.real) perCall(x.realResults, y.realResults, 'really: ');
  return out;
}

/** What one decision is, for naming it beside another: `final answer`, `unreadable answer` or the tool. */
function decisionKind(d: DecidedAction): string {
  if (d.parse_error) return 'an answer that could not be read';
  if (d.calls.length === 0) return 'final answer';
  return d.calls.map((c) => c.name).join(' + ');
}

/**
 * What differs between two different decisions, per call: the tool (`tool: execute_shell vs
 * write_file`) or, the tool the same, which arguments (`execute_shell arguments: command
 * differs`); a final answer or an unreadable answer against a call says so.
 */
export function actionDifference(x: DecidedAction, y: DecidedAction): string[] {
  const [kx, ky] = [decisionKind(x), decisionKind(y)];
  if (x.parse_error || y.parse_error || x.calls.length === 0 || y.calls.length === 0) {
    if (kx !== ky) return [`${kx} vs ${ky}`];
    return [x.parse_error ? 'the unreadable text differs' : 'the final answer differs'];
  }
  if (x.calls.length !== y.calls.length)
    return [`${countOf(x.calls.length, 'call')} vs ${countOf(y.calls.length, 'call')}: ${kx} vs ${ky}`];
  const many = x.calls.length > 1;
  const out: string[] = [];
  x.calls.forEach((a, i) => {
    const b = y.calls[i];
    const which = many ? ` (call ${i + 1})` : '';
    if (a.name !== b.name) {
      out.push(`tool${which}: ${a.name} vs ${b.name}`);
      return;
    }
    const keys = [...new Set([...Object.keys(a.arguments), ...Object.keys(b.arguments)])].filter(
      (k) => canonicalJson(a.arguments[k] ?? null) !== canonicalJson(b.arguments[k] ?? null),
    );
    if (keys.length)
      out.push(`${a.name}${which} arguments: ${keys.join(', ')} ${keys.length > 1 ? 'differ' : 'differs'}`);
  });
  return out;
}
