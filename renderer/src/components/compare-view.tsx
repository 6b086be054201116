import { flaggedSuccess, FLAGGED_MARK } from '../../../shared/end-words';
import { ruleLabel, ruleTitle } from '../../../shared/qa/rule-label';
import { memo } from 'react';
import type { CompareRow, FlagSummary } from '../../../shared/contract/models';
import { firstWhy, whyNot } from './why-not';
import { WhySlot } from './why-lines';
import {
  answerAdmitsFailure,
  compareSides,
  fileStatusText,
  verdictText,
  workspaceText,
} from '../model/compare-verdict';
import { compareVerdict, notReached, notReachedText } from '../../../shared/first-difference';
import { branchName } from '../model/branch-name';
import { branchStatusText, branchStatusWord } from '../model/branch-status';
import { selectBusyWhy, selectUnderWay, type Comparison } from '../stores/replay/replay-store';
import { useSlice, useStores } from '../stores/use-stores';
import { discountedReturnText, finalRewardText, stepsText } from '../../../shared/format-outcome';
import { PanelState } from './panel';
import { returnTitle } from '../model/return-title';

function stepText(row: CompareRow['a']): string {
  return row ? `${row.tools.join(', ')} ${row.summary}`.trim() : '';
}

function Flags(props: { readonly flags: readonly FlagSummary[] | undefined }) {
  const flags = props.flags ?? [];
  if (flags.length === 0) return <span className="muted">no QA flags</span>;
  return (
    <ul className="cmp-flags">
      {flags.map((f, i) => (
        <li key={i} className={`sev-${f.severity}`} title={ruleTitle(f.rule)}>
          ⚑ step {f.step} {ruleLabel(f.rule)}: {f.message}
        </li>
      ))}
    </ul>
  );
}

function Side(props: {
  readonly name: string;
  readonly s: Comparison['a'];
  readonly flags?: readonly FlagSummary[];
  /** Its success's final answer admits it did not finish (answerAdmitsFailure), or null. */
  readonly admits?: string | null;
}) {
  const { s } = props;
  const word = branchStatusWord(s);
  const flagged = flaggedSuccess(s.status, props.flags ?? []);
  return (
    <div className="cmp-side" data-testid="compare-side">
      <div>
        <b>{props.name}</b> <span className="mono">{branchName(s)}</span>{' '}
        <span className="mono keep-whole" title={s.branch}>
          {s.branch}
        </span>
      </div>
      <div>
        {/* A success QA flags (reward hacking) reads as flagged, as in the stepper bar (issue 33, item 12). */}
        <span className={`badge st-${flagged ? 'flagged' : word}`} data-testid="compare-status">
          {branchStatusText(s)}
          {flagged ? FLAGGED_MARK : ''}
        </span>
        {/* The end's reason when the word is the plain status (a word of its own says it already). */}
        {s.end_reason && word === s.status ? ` ${s.end_reason.replace(/_/g, ' ')}` : ''} ·{' '}
        {stepsText(s.steps, s.unfinished ?? 0, s.status === null)} ·{' '}
        <span data-testid="compare-return" title={returnTitle(s.gamma)}>
          {discountedReturnText(s.return, s.gamma)}
        </span>{' '}
        · {finalRewardText(s.final_reward)}
      </div>
      {props.admits ? (
        <div className="warn" data-testid="compare-answer-admits">
          ⚠ {props.admits}
        </div>
      ) : null}
      <Flags flags={props.flags} />
    </div>
  );
}

/**
 * Compare in the Replay panel: the button that opens the side-by-side view's compare tab.
 * Memoized: the panel renders again on every step change, which this button does not show.
 */
export const CompareEntry = memo(function CompareEntry(props: { readonly branch: string }) {
  const stores = useStores();
  const others = useSlice('stepper', (s) => s.branches.filter((b) => b.branch !== props.branch).length);
  if (others === 0) return null;
  return (
    <button
      type="button"
      data-testid="compare-open"
      title="this branch and another, step by step: where they first differ, files, rewards and QA flags"
      onClick={() => stores.sideBySide.getState().show('compare')}
    >
      Compare with another branch…
    </button>
  );
});

/**
 * Two branches compared step-aligned, in the side-by-side view: verdict per pair, first
 * divergence, files at the end, rewards and flags; the table wraps its text (no sideways scroll).
 */
export function CompareView(props: { readonly branch: string }) {
  const stores = useStores();
  const branches = useSlice('stepper', (s) => s.branches);
  const other = useSlice('replay', (s) => s.compareWith);
  const comparison = useSlice('replay', (s) => s.comparison);
  const running = useSlice('replay', selectUnderWay);
  const busyWhy = useSlice('replay', selectBusyWhy);
  const error = useSlice('replay', (s) => s.error);
  const names = useSlice('replay', (s) => s.compareNames);
  const a = stores.replay.getState();
  const stepper = stores.stepper.getState();
  const others = branches.filter((b) => b.branch !== props.branch);
  // A run of another episode (a case's other version) is compared too: it is offered by name.
  const outside = other !== '' && !others.some((b) => b.branch === other);
  if (others.length === 0 && !outside)
    return (
      <section className="compare" data-testid="compare">
        <PanelState kind="empty">
          This episode has one branch: fork it, or try candidates, to have another to compare with.
        </PanelState>
      </section>
    );
  const sides = comparison
    ? {
        a: names?.a ?? 'this branch',
        b: names?.b ?? 'the other',
        live: { a: comparison.a.live, b: comparison.b.live },
      }
    : null;
  const verdict = comparison && sides ? compareVerdict(comparison, sides) : null;
  // A step one side has not reached compares nothing: said so, never "different action".
  const behind = comparison ? notReached(comparison.rows) : [];
  return (
    <section className="compare" data-testid="compare" aria-label="compare with another branch">
      <div className="row">
        <select
          value={other}
          onChange={(e) => a.setCompareWith(e.target.value)}
          data-testid="compare-with"
          aria-label="branch to compare with"
        >
          <option value="">choose a branch…</option>
          {outside ? (
            <option value={other}>
              {names?.b ?? 'another episode'} — {other}
            </option>
          ) : null}
          {others.map((b) => (
            <option key={b.branch} value={b.branch}>
              {branchName(b, branches)} — {b.branch}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="primary"
          data-testid="compare-run"
          {...whyNot(
            firstWhy(!other && 'Pick a branch to compare with first.', busyWhy),
            undefined,
            'compare-run-why',
          )}
          onClick={() => void a.compare(props.branch)}
        >
          {running === 'compare' ? 'Comparing…' : 'Compare'}
        </button>
      </div>
      <WhySlot id="compare-run-why" />
      {error ? <PanelState kind="error">{error}</PanelState> : null}
      {comparison ? (
        <>
          <div className={`cmp-verdict ${verdict?.diverged ? 'bad' : 'good'}`} data-testid="compare-verdict">
            {verdict?.text}
            {verdict && verdict.show !== null ? (
              <button
                type="button"
                data-testid="compare-show-step"
                onClick={() => stepper.select(verdict.show)}
              >
                show step {verdict.show}
              </button>
            ) : null}
          </div>
          <div className="cmp-sides" data-testid="compare-sides">
            <Side
              name={names?.a ?? 'this branch'}
              s={comparison.a}
              flags={comparison.a_flags}
              admits={answerAdmitsFailure(comparison.a.status, comparison.rows, 'a')}
            />
            <Side
              name={names?.b ?? 'other'}
              s={comparison.b}
              flags={comparison.b_flags}
              admits={answerAdmitsFailure(comparison.b.status, comparison.rows, 'b')}
            />
          </div>
          {comparison.files_differ && comparison.files_differ.length > 0 ? (
            <div data-testid="compare-files">
              Files that differ {comparison.a.live || comparison.b.live ? 'now' : 'at the end'}:{' '}
              <span className="mono">{comparison.files_differ.join(', ')}</span>
            </div>
          ) : (
            <div className="muted">
              {comparison.a.live || comparison.b.live
                ? 'The workspaces are the same now.'
                : 'The workspaces end the same.'}
            </div>
          )}
          <table className="cmp" data-testid="compare-table">
            <colgroup>
              <col className="cmp-step" />
              <col className="cmp-step" />
              <col className="cmp-verdict-col" />
              <col />
              <col />
              <col className="cmp-ws" />
            </colgroup>
            <thead>
              <tr>
                <th>{names ? names.a.split(' ')[0] : 'this'}</th>
                <th>{names ? names.b.split(' ')[0] : 'other'}</th>
                <th>verdict</th>
                <th>{names?.a ?? 'this branch'} did</th>
                <th>{names?.b ?? 'other'} did</th>
                <th>workspace</th>
              </tr>
            </thead>
            <tbody>
              {comparison.rows.map((r, i) => {
                const side = behind[i] ?? null;
                const missing = side === null ? '(no such step)' : '(not reached)';
                return (
                  <tr
                    key={i}
                    className={r.verdict === 'same' || side !== null ? '' : 'diff'}
                    data-step={r.step}
                    data-verdict={side === null ? r.verdict : 'not_reached'}
                  >
                    <td>{r.a_step ?? '—'}</td>
                    <td>{r.b_step ?? '—'}</td>
                    <td
                      className={`verdict v-${side === null ? r.verdict : 'not_reached'}`}
                      data-testid="compare-row-verdict"
                    >
                      {side === null || !sides ? verdictText(r) : notReachedText(side, sides)}
                    </td>
                    <td className="mono wrap">{stepText(r.a) || (r.a_step === null ? missing : '')}</td>
                    <td className="mono wrap">{stepText(r.b) || (r.b_step === null ? missing : '')}</td>
                    <td className="mono" data-testid="compare-row-workspace">
                      {r.workspace.length === 0
                        ? workspaceText(r, compareSides(names))
                        : r.workspace.map((w) => (
                            <details key={w.path}>
                              <summary>
                                {w.path} ({fileStatusText(w.status, compareSides(names))})
                              </summary>
                              <pre className="out">{`--- ${names?.a ?? 'this branch'}\n${w.a ?? '(absent)'}\n--- ${names?.b ?? 'other'}\n${w.b ?? '(absent)'}`}</pre>
                            </details>
                          ))}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}
