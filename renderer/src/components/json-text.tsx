import { useMemo, useState, type ReactNode } from 'react';
import { JsonView } from './lazy-editors';

/** Above this many characters the text is shown plain: colouring it would cost more than it helps. */
const COLOUR_LIMIT = 20_000;

const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Pretty JSON as spans coloured by kind (keys, strings, literals, numbers). */
function colour(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let n = 0;
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    const kind = m[1] ? (m[2] ? 'key' : 'str') : m[3] ? 'lit' : 'num';
    out.push(
      <span key={n++} className={`j-${kind}`}>
        {m[1] ?? m[0]}
      </span>,
    );
    if (m[2]) out.push(m[2]);
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/**
 * Read-only JSON as light text (painted at once, sized to its pane, scrolled within it);
 * Monaco (folding, search) is mounted only when a person asks for it, for this view.
 */
export function JsonText(props: {
  /** The view's name (`arguments.json`, `result.json`, …): what tests and the editor key it by. */
  readonly model: string;
  /** What it shows (branch/step): the editor, once opened, is keyed by it. */
  readonly scope: string;
  readonly value: string;
  readonly label: string;
}) {
  const [editorFor, setEditorFor] = useState<string | null>(null);
  // Coloured once per text: the inspector re-renders while the next step loads.
  const text = useMemo(
    () => (props.value.length > COLOUR_LIMIT ? props.value : colour(props.value)),
    [props.value],
  );
  if (editorFor === props.scope)
    return <JsonView model={props.model} scope={props.scope} value={props.value} height={260} />;
  return (
    <div className="json-text-box" data-json-view={props.model}>
      <pre className="json-text" tabIndex={0} aria-label={props.label}>
        {text}
      </pre>
      <button
        type="button"
        className="json-open"
        title="Open in an editor (fold, search)"
        onClick={() => setEditorFor(props.scope)}
      >
        editor
      </button>
    </div>
  );
}
