import type { ReactNode } from 'react';

/** A titled panel; `testId` is the panel's `data-testid` for tests. */
export function Panel(props: {
  readonly testId: string;
  readonly title: string;
  readonly actions?: ReactNode;
  readonly className?: string;
  readonly children: ReactNode;
}) {
  return (
    // tabIndex -1: focus can be put on a panel (Escape out of the terminal) without adding a Tab stop.
    <section
      className={`panel ${props.className ?? ''}`}
      data-testid={props.testId}
      aria-label={props.title}
      tabIndex={-1}
    >
      <header className="panel-head">
        <h2>{props.title}</h2>
        {props.actions ? <div className="panel-actions">{props.actions}</div> : null}
      </header>
      <div className="panel-body">{props.children}</div>
    </section>
  );
}

/** An empty, loading or error state inside a panel. */
export function PanelState(props: {
  readonly kind: 'empty' | 'loading' | 'error';
  readonly children: ReactNode;
}) {
  return (
    <div
      className={`state state-${props.kind}`}
      data-state={props.kind}
      role={props.kind === 'error' ? 'alert' : undefined}
    >
      {props.children}
    </div>
  );
}
