import { useEffect, useId, useState } from 'react';
import { rangeProblem, type CountRange } from '../model/count-range';

/**
 * A whole-number field that says its range (min/max on the field, the range beside it) and,
 * when what was typed is outside it, says so inline instead of clamping: the store gets the
 * number as typed (NaN when empty) and refuses to act on it. The text is the person's while
 * they type (clearing it does not put a number back under the cursor).
 */
export function CountField(props: {
  readonly range: CountRange;
  readonly value: number;
  readonly testId: string;
  /** The field's accessible name; default: the range's name. */
  readonly label?: string;
  readonly onChange: (n: number) => void;
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
        aria-label={props.label ?? range.name}
        aria-invalid={problem !== null}
        aria-describedby={problem ? `${id}-range ${id}-problem` : `${id}-range`}
        title={`${range.min} to ${range.max}`}
        data-testid={props.testId}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          props.onChange(e.target.value.trim() === '' ? Number.NaN : Number(e.target.value));
        }}
      />
      <span className="muted count-range" id={`${id}-range`}>
        {range.min}–{range.max}
      </span>
      {problem ? (
        <span
          className="bad count-problem"
          role="alert"
          id={`${id}-problem`}
          data-testid={`${props.testId}-problem`}
        >
          {problem}
        </span>
      ) : null}
    </span>
  );
}
