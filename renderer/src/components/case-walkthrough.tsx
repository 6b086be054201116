import { useSlice, useStores } from '../stores/use-stores';
import { MarkdownLite } from './markdown-lite';

/** The open case's walkthrough, beside the timeline: what to look at, and how to fix it. */
export function CaseWalkthrough() {
  const stores = useStores();
  const active = useSlice('episodes', (s) => s.activeCase);
  if (!active) return null;
  return (
    <aside className="walkthrough" data-testid="case-walkthrough" data-case={active.case.id}>
      <header className="panel-head">
        <h2>Case: {active.case.title}</h2>
        <button
          type="button"
          onClick={() => stores.episodes.getState().closeCase()}
          aria-label="close walkthrough"
        >
          ✕
        </button>
      </header>
      <div className="panel-body">
        {active.readme === null ? (
          <div className="state state-loading">Loading the walkthrough…</div>
        ) : (
          <MarkdownLite text={active.readme} />
        )}
      </div>
    </aside>
  );
}
