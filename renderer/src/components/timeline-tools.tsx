import { memo, useMemo, useState } from 'react';
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
  readonly shown: number;
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
          {filterCountText(props.shown, props.rows.length, props.arriving)}
        </span>
      ) : null}
    </div>
  );
});

/**
 * The branch's QA flags as a list; each jumps to the step it points at.
 * Memoized: the timeline re-renders on every step viewed (a slider move); this does not change with it.
 */
export const FlagList = memo(function FlagList(props: {
  readonly flags: readonly FlagSummary[];
  readonly onJump: (step: number) => void;
}) {
  const [open, setOpen] = useState(true);
  if (props.flags.length === 0) return null;
  return (
    <div className="flag-list" data-testid="flag-list">
      <button
        type="button"
        className="disclosure"
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        data-testid="flag-list-toggle"
      >
        {open ? '▾' : '▸'} ⚑ {props.flags.length} QA {props.flags.length === 1 ? 'flag' : 'flags'}
      </button>
      {open ? (
        <ul>
          {props.flags.map((f, i) => (
            <li key={`${f.rule}-${f.step}-${i}`}>
              <button
                type="button"
                className={`flag-jump sev-${f.severity}`}
                data-testid="flag-jump"
                data-step={f.step}
                data-flag={f.rule}
                title={`go to step ${f.step}`}
                onClick={() => props.onJump(f.step)}
              >
                <span className="flag-step">step {f.step}</span> <strong>{f.rule}</strong>: {f.message}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
});
