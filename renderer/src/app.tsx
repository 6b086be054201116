import { useCallback, useEffect, useRef, useState, type CSSProperties } from 'react';
import { BreakpointList } from './components/breakpoint-list';
import { CaseWalkthrough, useCaseShown } from './components/case-walkthrough';
import { FilePicker } from './components/file-picker';
import { KeySheet } from './components/key-sheet';
import { NoticeBar } from './components/notice-bar';
import { WhyListener } from './components/why-lines';
import { PanelBoundary } from './components/error-boundary';
import { SideBySideView } from './components/side-by-side-view';
import { Splitter } from './components/splitter';
import { StepperBar } from './components/stepper-bar';
import { StopQuestionDialog } from './components/stop-question';
import { installActionKeys } from './hooks/action-keys';
import { installDebuggerKeys } from './hooks/debugger-keys';
import { usePanes } from './layout/use-panes';
import { EpisodeLibrary } from './panels/episode-library';
import { InjectPanel } from './panels/inject-panel';
import { ReplayControls } from './panels/replay-controls';
import { SandboxPanel } from './panels/sandbox-panel';
import { TerminalPanel } from './panels/terminal-panel';
import { Timeline } from './panels/timeline';
import { ToolInspector } from './panels/tool-inspector';
import type { AppStores } from './stores/app-stores';
import { selectInjectEditable } from './stores/stepper/stepper-store';
import { StoresContext, useSlice } from './stores/use-stores';

/**
 * The panes: library (and a case's walkthrough, and the breakpoints) left, the timeline
 * centre above the replay controls and terminal, the inspector right above inject and
 * sandbox. Every boundary is a splitter; the timeline keeps its room whatever opens.
 */
function Shell(props: { readonly onKeys: () => void }) {
  const { sizes, set, commit, chosen } = usePanes();
  // Inject with nothing to edit (a recorded trace, an ended episode, a branch not opened) is a
  // sentence and a button: its pane takes their height, the inspector the rest (at 1024×700 it
  // was ~310 px over ~240 of Inject mostly empty). A live branch's form gets its room back; a
  // height the person chose is kept either way.
  const injectEditable = useSlice('stepper', selectInjectEditable);
  const rightFits = !injectEditable && !chosen('rightBottom');
  const rightLower = useRef<HTMLDivElement>(null);
  const caseOpen = useSlice('episodes', (s) => s.activeCase !== null);
  // Another episode on screen: the drawer holds only its note and runs, and gives the rest back.
  const caseAway = useCaseShown().kind === 'other';
  // The first commit draws the stepper bar and the timeline alone: the other panes (a third of
  // the window's elements, their components' code) are mounted once that frame is painted, so
  // the rows a window was opened on are laid out and painted without them (issue 33.9). Their
  // columns keep their sizes meanwhile: nothing moves when they come.
  const all = useAfterFirstPaint();
  // Tests wait on this marker: every panel is mounted (data may still be loading; the
  // stores were started before the first render, in main.tsx).
  useEffect(() => {
    if (all) document.body.dataset.ready = 'true';
  }, [all]);
  return (
    <div
      className="app"
      data-testid="app-ready"
      style={{ gridTemplateColumns: `${sizes.left}px 5px minmax(0, 1fr) 5px ${sizes.right}px` }}
    >
      <StepperBar onKeys={props.onKeys} />
      <div className="col left">
        <div className="pane-fill">
          <PanelBoundary name="Episode library">{all ? <EpisodeLibrary /> : null}</PanelBoundary>
        </div>
        {caseOpen ? (
          <>
            <Splitter
              axis="y"
              sign={-1}
              value={sizes.walkthrough}
              label="resize the walkthrough"
              testId="split-walkthrough"
              onChange={(px) => set('walkthrough', px)}
              onCommit={commit}
            />
            <div
              className="pane-fixed"
              style={caseAway ? { maxHeight: sizes.walkthrough } : { height: sizes.walkthrough }}
            >
              <CaseWalkthrough />
            </div>
          </>
        ) : null}
        {all ? <BreakpointList /> : null}
      </div>
      <Splitter
        axis="x"
        sign={1}
        value={sizes.left}
        label="resize the library"
        testId="split-left"
        onChange={(px) => set('left', px)}
        onCommit={commit}
      />
      <div className="col centre">
        <div className="pane-fill">
          <PanelBoundary name="Timeline">
            <Timeline />
          </PanelBoundary>
        </div>
        <Splitter
          axis="y"
          sign={-1}
          value={sizes.bottom}
          label="resize the terminal"
          testId="split-bottom"
          onChange={(px) => set('bottom', px)}
          onCommit={commit}
        />
        {/* Its height is --lower (styles.css): Replay's report or What if… grows it by its content. */}
        {/* data-sized: the person dragged it (a short window's terminal then yields to Replay's answer). */}
        <div
          className="pane-fixed stack"
          data-sized={chosen('bottom') ? '' : undefined}
          style={{ '--lower': `${sizes.bottom}px` } as CSSProperties}
        >
          <PanelBoundary name="Replay controls">{all ? <ReplayControls /> : null}</PanelBoundary>
          <PanelBoundary name="Terminal">{all ? <TerminalPanel /> : null}</PanelBoundary>
        </div>
      </div>
      <Splitter
        axis="x"
        sign={-1}
        value={sizes.right}
        label="resize the inspector"
        testId="split-right"
        onChange={(px) => set('right', px)}
        onCommit={commit}
      />
      <div className="col right">
        <div className="pane-fill">
          <PanelBoundary name="Tool inspector">{all ? <ToolInspector /> : null}</PanelBoundary>
        </div>
        <Splitter
          axis="y"
          sign={-1}
          value={sizes.rightBottom}
          label="resize the inject and sandbox panels"
          testId="split-right-bottom"
          onChange={(px) => set('rightBottom', px)}
          onCommit={commit}
          pane={rightLower}
        />
        <div
          ref={rightLower}
          className="pane-fixed stack"
          data-fits={rightFits ? '' : undefined}
          style={rightFits ? { maxHeight: sizes.rightBottom } : { height: sizes.rightBottom }}
        >
          <PanelBoundary name="Injection panel">{all ? <InjectPanel /> : null}</PanelBoundary>
          <PanelBoundary name="Sandbox panel">{all ? <SandboxPanel /> : null}</PanelBoundary>
        </div>
      </div>
      <PanelBoundary name="Candidates and compare">
        {all ? <SideBySideView left={sizes.left + 5} /> : null}
      </PanelBoundary>
      {all ? <NoticeBar /> : null}
    </div>
  );
}

/** False until the first frame has been painted (a frame, then a task behind its paint), then true for good. */
function useAfterFirstPaint(): boolean {
  const [after, setAfter] = useState(false);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => setAfter(true), 0);
    });
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, []);
  return after;
}

/** The window: the stores provided once, the debugger keys installed, the panes laid out. */
export function App(props: { readonly stores: AppStores }) {
  const { stores } = props;
  const [sheet, setSheet] = useState(false);
  const toggleSheet = useCallback(() => setSheet((open) => !open), []);
  useEffect(() => installDebuggerKeys(stores), [stores]);
  useEffect(() => installActionKeys(stores, toggleSheet), [stores, toggleSheet]);
  return (
    <StoresContext.Provider value={stores}>
      <Shell onKeys={toggleSheet} />
      {sheet ? <KeySheet onClose={() => setSheet(false)} /> : null}
      <StopQuestionDialog />
      <FilePicker />
      <WhyListener />
    </StoresContext.Provider>
  );
}
