import { useEffect, useId, useRef, useState } from 'react';
import { countFieldWidth, rangeProblem, type CountRange } from '../model/count-range';

/**
 * A whole-number field that says its range (min/max on the field, the range beside it, red
 * when what was typed is outside it) instead of clamping: the store gets the number as
 * typed (NaN when empty), refuses to act on it, and the form says why on one line
 * ({@link FieldProblem}). The text is the person's while
 * they type (clearing it does not put a number back under the cursor).
 */
export function CountField(props: {
  readonly range: CountRange;
  readonly value: number;
  readonly testId: string;
  /** The field's accessible name; default: the range's name. */
  readonly label?: string;
  readonly onChange: (n: number) => void;
  /** The id of the form's line that says what is wrong (one line under the form, not one per field). */
  readonly problemId?: string;
}) {
  const { range } = props;
  const shown = Number.isFinite(props.value) ? String(props.value) : '';
  const [text, setText] = useState(shown);
  // The store's value changed elsewhere (a reset, a prepared step): show it.
  useEffect(() => {
    if (Number(text) !== props.value && !(text.trim() === '' && Number.isNaN(props.value))) setText(shown);
  }, [props.value]);
  const problem = rangeProblem(props.value, range);
  const id = useId();
  return (
    <span className="count-field">
      <input
        type="number"
        min={range.min}
        max={range.max}
        step={1}
        style={{ width: countFieldWidth(range) }}
        aria-label={props.label ?? range.name}
        aria-invalid={problem !== null}
        aria-describedby={props.problemId ? `${id}-range ${props.problemId}` : `${id}-range`}
        title={`${range.min} to ${range.max}`}
        data-testid={props.testId}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          props.onChange(e.target.value.trim() === '' ? Number.NaN : Number(e.target.value));
        }}
      />
      <span className={problem ? 'bad count-range' : 'muted count-range'} id={`${id}-range`}>
        {range.min}–{range.max}
      </span>
    </span>
  );
}

/**
 * The form's one line saying which field is out of its range (null: nothing to say). It comes
 * on screen as it appears: under an open case drawer at 1280×800 it fell below the library's
 * fold, and a person saw only a red range and a disabled button (issue 19 walk).
 */
export function FieldProblem(props: {
  readonly id: string;
  readonly testId: string;
  readonly problem: string | null;
}) {
  const line = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // 'nearest' scrolls only as far as needed: the field typed into, just above, stays in view.
    line.current?.scrollIntoView?.({ block: 'nearest' });
  }, [props.problem]);
  return props.problem ? (
    <div ref={line} className="bad count-problem" role="alert" id={props.id} data-testid={props.testId}>
      {props.problem}
    </div>
  ) : null;
}
