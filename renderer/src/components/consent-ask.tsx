import { settingKeysIn } from '../../../shared/setting-words';

/** The task-file keys the question names, for its tooltip (undefined when it names none). */
function keysTitle(message: string): string | undefined {
  const keys = settingKeysIn(message);
  return keys.length ? `in the task file: ${keys.join(', ')}` : undefined;
}

/**
 * The window's question before a sandbox is built from a recorded task that asks for
 * a looser sandbox than the defaults: what it asks (the engine's message, shortened),
 * allow or cancel. One component for every panel that can ask (replay controls, candidates).
 */
export function ConsentAskView(props: {
  readonly message: string;
  /** What allowing does, e.g. "re-execute", "try". */
  readonly action: string;
  readonly onAllow: () => void;
  readonly onDeny: () => void;
  /** The test id of the question; its buttons are `${testId}`'s `-allow` / `-deny` (default `consent`). */
  readonly testId?: string;
}) {
  const id = props.testId ?? 'consent';
  return (
    <div
      className="consent"
      role="alertdialog"
      aria-label="allow a looser sandbox?"
      data-testid={`${id}-ask`}
    >
      <strong>Allow only if you trust where this trace came from:</strong>
      {/* The settings in words; their keys in the task file for a developer, on hover. */}
      <p title={keysTitle(props.message)}>
        {props.message
          .replace(/^the task recorded in \S+ /, 'its task ')
          .replace(/\. A trace or bundle cannot widen.*$/s, '.')}
      </p>
      <div className="row">
        <button type="button" data-testid={`${id}-allow`} onClick={props.onAllow}>
          Allow and {props.action}
        </button>
        <button type="button" data-testid={`${id}-deny`} onClick={props.onDeny}>
          Cancel
        </button>
      </div>
    </div>
  );
}
