import { Component, type ErrorInfo, type ReactNode } from 'react';

interface Props {
  readonly name: string;
  readonly children: ReactNode;
}

interface State {
  readonly error: Error | null;
}

/** Keeps one panel's render failure inside that panel, shown as its error state. */
export class PanelBoundary extends Component<Props, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    // The panel shows the error; the console keeps the stack for whoever debugs it.
    console.error(`[${this.props.name}]`, error, info.componentStack);
  }

  override render(): ReactNode {
    if (this.state.error)
      return (
        <div className="state state-error" role="alert">
          {this.props.name} failed to render: {this.state.error.message}
          <button type="button" onClick={() => this.setState({ error: null })}>
            Retry
          </button>
        </div>
      );
    return this.props.children;
  }
}
