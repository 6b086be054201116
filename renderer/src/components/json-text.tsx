import { useMemo, useState, type ReactNode } from 'react';
import { JsonView } from './lazy-editors';

/** Above this many characters the text is shown plain: colouring it would cost more than it helps. */
const COLOUR_LIMIT = 20_000;

const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/**
 * A string value's text with its line breaks shown as lines: `"stdout": "file\\n67  README.md\\n"`
 * read as one escaped line (a whole `ls -la` was one). Only a value with a line break is shown
 * so; its JSON (`data-json`) stays on the span for whoever copies the structure back.
 */
function textLines(token: string): string | null {
  if (!token.includes('\\n')) return null;
  try {
    const v: unknown = JSON.parse(token);
    return typeof v === 'string' && v.includes('\n') ? v : null;
  } catch {
    return null;
  }
}

/**
 * Pretty JSON as spans coloured by kind (keys, strings, literals, numbers); a string value that
 * holds line breaks is a block of its lines ({@link textLines}).
 */
export function colour(text: string): ReactNode[] {
  const out: ReactNode[] = [];
  let last = 0;
  let n = 0;
  let afterLines = false;
  // The JSON between tokens; after a block of lines its `,` and line end are kept for the
  // text (a copy, `data-json` readers) but not drawn: the block already ends the line.
  const between = (s: string) => {
    const end = afterLines ? /^,?\n/.exec(s) : null;
    afterLines = false;
    if (end)
      out.push(
        <span key={n++} className="j-hidden">
          {end[0]}
        </span>,
      );
    out.push(end ? s.slice(end[0].length) : s);
  };
  for (const m of text.matchAll(TOKEN)) {
    const at = m.index ?? 0;
    if (at > last) between(text.slice(last, at));
    const kind = m[1] ? (m[2] ? 'key' : 'str') : m[3] ? 'lit' : 'num';
    const lines = kind === 'str' ? textLines(m[1]) : null;
    out.push(
      lines !== null ? (
        <span key={n++} className="j-str j-lines" data-json={m[1]} title="text shown with its line breaks">
          {lines.endsWith('\n') ? lines.slice(0, -1) : lines}
        </span>
      ) : (
        <span key={n++} className={`j-${kind}`}>
          {m[1] ?? m[0]}
        </span>
      ),
    );
    afterLines = lines !== null;
    if (m[2]) out.push(m[2]);
    last = at + m[0].length;
  }
  if (last < text.length) between(text.slice(last));
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
