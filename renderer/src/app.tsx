import { useEffect } from 'react';
import { CaseWalkthrough } from './components/case-walkthrough';
import { PanelBoundary } from './components/error-boundary';
import { StepperBar } from './components/stepper-bar';
import { installDebuggerKeys } from './hooks/debugger-keys';
import { EpisodeLibrary } from './panels/episode-library';
import { InjectPanel } from './panels/inject-panel';
import { ReplayControls } from './panels/replay-controls';
import { SandboxPanel } from './panels/sandbox-panel';
import { TerminalPanel } from './panels/terminal-panel';
import { Timeline } from './panels/timeline';
import { ToolInspector } from './panels/tool-inspector';
import type { AppStores } from './stores/app-stores';
import { StoresContext } from './stores/use-stores';

/** The window: library left, timeline and terminal centre, inspector and panels right. */
export function App(props: { readonly stores: AppStores }) {
  const { stores } = props;
  useEffect(() => installDebuggerKeys(stores), [stores]);
  // Tests wait on this marker: every panel is mounted (data may still be loading).
  useEffect(() => {
    document.body.dataset.ready = 'true';
    // `?open=<episode or branch>` opens it at once (links from the CLI, the UI benchmark).
    stores.start(new URLSearchParams(window.location.search).get('open'));
  }, [stores]);
  return (
    <StoresContext.Provider value={stores}>
      <div className="app" data-testid="app-ready">
        <StepperBar />
        <div className="col left">
          <PanelBoundary name="Episode library">
            <EpisodeLibrary />
          </PanelBoundary>
        </div>
        <div className="col centre">
          <div className="timeline-row">
            <PanelBoundary name="Timeline">
              <Timeline />
            </PanelBoundary>
            <CaseWalkthrough />
          </div>
          <PanelBoundary name="Replay controls">
            <ReplayControls />
          </PanelBoundary>
          <PanelBoundary name="Terminal">
            <TerminalPanel />
          </PanelBoundary>
        </div>
        <div className="col right">
          <PanelBoundary name="Tool inspector">
            <ToolInspector />
          </PanelBoundary>
          <PanelBoundary name="Injection panel">
            <InjectPanel />
          </PanelBoundary>
          <PanelBoundary name="Sandbox panel">
            <SandboxPanel />
          </PanelBoundary>
        </div>
      </div>
    </StoresContext.Provider>
  );
}
