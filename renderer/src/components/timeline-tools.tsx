import { ruleLabel, ruleTitle } from '../../../shared/qa/rule-label';
import { memo, useLayoutEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { countOf } from '../../../shared/count-of';
import { flagRules } from '../model/flag-rules';
import type { FlagSummary, StepRow } from '../../../shared/contract/models';
import { filterCountText, isFilterEmpty, NO_FILTER, type RowFilter } from '../model/row-filter';

/**
 * Above the timeline: a filter (by kind — errors, flagged, one tool — and by text) and a
 * go-to-step box that selects and scrolls to the step typed.
 * Memoized: the timeline re-renders on every step viewed (a slider move); this does not change with it.
 */
export const TimelineTools = memo(function TimelineTools(props: {
  readonly rows: readonly StepRow[];
  readonly filter: RowFilter;
  /** The rows the filter keeps (of the loaded ones). */
  readonly shown: readonly StepRow[];
  /** The branch's first step and how many rows before the loaded ones are still arriving. */
  readonly firstStep: number;
  readonly arriving: number;
  readonly onFilter: (f: RowFilter) => void;
  readonly onGoTo: (step: number) => void;
}) {
  const [goTo, setGoTo] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  // Memoized: the rows change per step, not per selection (10,000 rows on every arrow press otherwise).
  const tools = useMemo(() => [...new Set(props.rows.flatMap((r) => r.tools))].sort(), [props.rows]);
  const loadedFirst = props.rows[0]?.step ?? 0;
  const first = props.arriving > 0 ? props.firstStep : loadedFirst;
  const last = props.rows[props.rows.length - 1]?.step ?? 0;
  // A step whose row is still arriving is a step of the branch: going there selects it now
  // (the inspector loads it on its own) and the list brings it into view when its page lands.
  // Refusing it made "go to 13" say "No step 13 here: steps 101–300" right after an open.
  const arrivingStep = (step: number) => props.arriving > 0 && step >= first && step < loadedFirst;
  const go = () => {
    const step = Number(goTo.trim());
    if (goTo.trim() === '' || !Number.isInteger(step)) {
      setMessage('Type a step number.');
      return;
    }
    if (!arrivingStep(step) && !props.rows.some((r) => r.step === step)) {
      setMessage(props.rows.length ? `No step ${step} here: steps ${first}–${last}.` : 'No steps yet.');
      return;
    }
    setMessage(null);
    props.onGoTo(step);
  };
  return (
    <div className="tl-tools" data-testid="timeline-tools">
      <select
        aria-label="show steps"
        value={props.filter.kind}
        data-testid="timeline-filter-kind"
        onChange={(e) => props.onFilter({ ...props.filter, kind: e.target.value })}
      >
        <option value="all">all steps</option>
        <option value="error">errors</option>
        <option value="flag">flagged</option>
        {tools.map((t) => (
          <option key={t} value={`tool:${t}`}>
            tool: {t}
          </option>
        ))}
      </select>
      <input
        type="search"
        className="tl-find"
        aria-label="filter steps by text"
        placeholder="text, tool or flag"
        value={props.filter.text}
        data-testid="timeline-filter-text"
        onChange={(e) => props.onFilter({ ...props.filter, text: e.target.value })}
      />
      {!isFilterEmpty(props.filter) ? (
        <button type="button" onClick={() => props.onFilter(NO_FILTER)} data-testid="timeline-filter-clear">
          show all
        </button>
      ) : null}
      <form
        className="tl-goto"
        // The step is checked here, with a message in words, not by the browser's range bubble.
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          go();
        }}
      >
        <input
          type="number"
          aria-label="go to step"
          placeholder="step #"
          value={goTo}
          min={first}
          max={last}
          data-testid="timeline-goto"
          onChange={(e) => {
            setGoTo(e.target.value);
            setMessage(null);
          }}
        />
        <button type="submit">Go</button>
      </form>
      {message ? (
        <span className="bad" role="alert" data-testid="timeline-goto-message">
          {message}
        </span>
      ) : null}
      {!isFilterEmpty(props.filter) ? (
        <span
          className="muted"
          data-testid="timeline-filter-count"
          data-state={props.arriving > 0 ? 'loading' : 'ready'}
        >
          {filterCountText(props.shown, props.rows, props.arriving)}
        </span>
      ) : null}
    </div>
  );
});

/**
 * The branch's QA flags: a one-line summary (how many, which rules; every flag whole in its
 * tooltip) that unfolds into the list, each entry jumping to the step it points at. Unfolded
 * by default only where the rows below keep `keep` px: at 1024×700 a case's three flags took
 * 124 px and left two rows of the timeline in view. Once the person folds or unfolds it, that
 * stays their choice. Every flag stays in reach: the summary is one click (or Enter) away from
 * them, each row carries its flags' names, and the inspector says each in full at its step.
 * Memoized: the timeline re-renders on every step viewed (a slider move); this does not change with it.
 */
export const FlagList = memo(function FlagList(props: {
  readonly flags: readonly FlagSummary[];
  readonly onJump: (step: number) => void;
  /** The rows' scrolling window below the list: the two share the room the pane leaves them. */
  readonly rows: RefObject<HTMLElement | null>;
  /** That window is drawn (it comes and goes with the rows): the room can be measured. */
  readonly rowsShown: boolean;
  /** The height (px) the rows keep before the list unfolds by itself. */
  readonly keep: number;
}) {
  const { flags, rows, rowsShown, keep } = props;
  // The person's own choice, once made; until then the room decides (`fits`).
  const [chosen, setChosen] = useState<boolean | null>(null);
  const [fits, setFits] = useState(true);
  // Another set of flags (another branch, the end's) is unfolded to be measured again: in the
  // layout effect below, before the frame is painted, so a list that does not fit never shows.
  const [measuredFlags, setMeasuredFlags] = useState(flags);
  if (measuredFlags !== flags) {
    setMeasuredFlags(flags);
    setFits(true);
  }
  const open = chosen ?? fits;
  const root = useRef<HTMLDivElement>(null);
  // The list's height unfolded, as last measured (the room it would take again).
  const openHeight = useRef<number | null>(null);
  useLayoutEffect(() => {
    const list = root.current;
    const below = rows.current;
    if (!list || !below || !rowsShown || typeof ResizeObserver === 'undefined') return;
    const judge = () => {
      const height = list.offsetHeight;
      if (open) openHeight.current = height;
      if (openHeight.current === null) return;
      // The list and the rows share what the rest of the pane leaves (the rows' window is the
      // pane's only flexible part): the same sum folded or not, so the choice does not flip.
      setFits(below.clientHeight + height - openHeight.current >= keep);
    };
    judge();
    const watch = new ResizeObserver(judge);
    watch.observe(list);
    watch.observe(below);
    return () => watch.disconnect();
  }, [open, flags, rows, rowsShown, keep]);
  if (flags.length === 0) return null;
  const all = flags.map((f) => `step ${f.step} ${ruleTitle(f.rule, f.message)}`).join('\n');
  return (
    <div className="flag-list" data-testid="flag-list" ref={root}>
      <button
        type="button"
        className="disclosure flag-summary"
        aria-expanded={open}
        title={open ? 'fold the QA flags' : all}
        onClick={() => setChosen(!open)}
        data-testid="flag-list-toggle"
      >
        {open ? '▾' : '▸'} {/* In the colour of the library's flag count (⚑3 beside an episode). */}
        <span className="flag-count">⚑ {countOf(flags.length, 'QA flag')}</span>
        <span className="muted"> · {flagRules(flags)}</span>
      </button>
      {open ? (
        <ul>
          {flags.map((f, i) => (
            <li key={`${f.rule}-${f.step}-${i}`}>
              <button
                type="button"
                className={`flag-jump sev-${f.severity}`}
                data-testid="flag-jump"
                data-step={f.step}
                data-flag={f.rule}
                title={`go to step ${f.step} · QA rule ${f.rule}`}
                onClick={() => props.onJump(f.step)}
              >
                <span className="flag-step">step {f.step}</span> <strong>{ruleLabel(f.rule)}</strong>:{' '}
                {f.message}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
});
