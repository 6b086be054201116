import { useEffect, useLayoutEffect, useRef, useState, type RefObject } from 'react';
import { Panel, PanelState } from '../components/panel';
import { createFlowWriter } from '../model/flow-writer';
import { recordedOutput } from '../model/recorded-output';
import { whenIdle } from '../model/when-idle';
import { selectOpening, selectViewedStep, selectViewingHistory } from '../stores/stepper/stepper-store';
import { notLiveWords } from '../stores/stepper/way-on';
import { useSlice, useStores } from '../stores/use-stores';
import { selectTerminalWords } from '../stores/terminal/terminal-store';
import { NOT_OPENED } from '../stores/stepper/why-not-now';

const TABBABLE = 'button, input, select, textarea, a[href], [tabindex]:not([tabindex="-1"])';

/**
 * Moves focus to the first control after `panel` in Tab order (wrapping to the first in
 * the page), so leaving the terminal with Escape and pressing Tab goes on, not back in.
 */
function focusAfter(panel: HTMLElement): void {
  const all = Array.from(document.querySelectorAll<HTMLElement>(TABBABLE)).filter(
    // Not a splitter: Escape goes on to the next region's controls, not a resize handle between them.
    (el) =>
      !(el as HTMLButtonElement).disabled &&
      el.offsetParent !== null &&
      el.tabIndex >= 0 &&
      el.getAttribute('role') !== 'separator',
  );
  const next =
    all.find(
      (el) => !panel.contains(el) && panel.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING,
    ) ?? all.find((el) => !panel.contains(el));
  if (next) next.focus();
  else panel.focus();
}

/** The xterm module, loaded once the panel has something to show. */
type XtermModule = typeof import('./terminal-xterm');
type Terminals = ReturnType<XtermModule['openTerminals']>;

/**
 * A screen's worth of the history terminal made blank, its scrollback dropped and the cursor
 * home, the colours reset: what `reset()` gave it before each step's output, in the write's
 * own stream. `reset()` built the terminal anew and redrew every row at once (a few ms of each
 * step change, in the next click's frame when it landed there, issue 33.9); the recorded text
 * is terminalSafe, so no mode, charset or tab stop of the step before can be left set.
 */
const CLEAR = '\x1b[0m\x1b[H\x1b[2J\x1b[3J';

/**
 * Writes the viewed step's recorded output into the history terminal: a component of its own,
 * so a step change renders it (nothing), not the panel.
 */
function RecordedOutput(props: {
  readonly term: Terminals['history'];
  readonly shown: boolean;
  /** The history terminal's box: marked stale while it still shows another step than the one viewed. */
  readonly box: RefObject<HTMLDivElement | null>;
}) {
  const { term, shown, box } = props;
  const detail = useSlice('inspector', (s) => s.detail);
  // The step viewed, and the step whose output the terminal holds: the write waits for an idle
  // moment (below), and until then the terminal showed the step before beside the timeline and
  // the inspector on the new one, two panes disagreeing on a screen with nothing to say so. It
  // is dimmed and marked busy until the new step is written (an attribute of the box: no render of
  // the terminal, no layout of its rows).
  const viewed = useSlice('stepper', selectViewedStep);
  const written = useRef<number | null>(null);
  const latest = useRef({ viewed, shown });
  latest.current = { viewed, shown };
  const mark = () => {
    const el = box.current;
    if (!el) return;
    const stale =
      latest.current.shown && written.current !== null && written.current !== latest.current.viewed;
    if (stale) el.setAttribute('aria-busy', 'true');
    else el.removeAttribute('aria-busy');
    if (written.current === null) delete el.dataset.step;
    else el.dataset.step = String(written.current);
  };
  useLayoutEffect(mark, [viewed, shown]);
  // The text is wrapped at words for the terminal's width: written again when that changes.
  const [cols, setCols] = useState(term.cols);
  useEffect(() => {
    setCols(term.cols);
    const sub = term.onResize((size) => setCols(size.cols));
    return () => sub.dispose();
  }, [term]);
  // What the terminal holds, and at which width it was wrapped.
  const wrote = useRef<{ detail: typeof detail; cols: number } | null>(null);
  useEffect(() => {
    if (!shown) return;
    // The same step at a new width (the pane resized): written now. Left to an idle moment, the
    // text stayed wrapped at the old width (~58 columns in a pane of ~160 at 1920×1080) until then.
    if (wrote.current && wrote.current.detail === detail && wrote.current.cols !== cols) {
      term.write(CLEAR + (detail ? recordedOutput(detail, cols) : ''));
      wrote.current = { detail, cols };
      return;
    }
    // Rewriting xterm lays it out (it measures glyphs, a forced layout each): after the next
    // paint and once the window is idle, so a slider move's selection shows first and the
    // next move is not queued behind it; while scrubbing only the step that stays viewed is
    // written (a newer detail cancels this one). Issue 19.10.
    let cancelIdle: (() => void) | undefined;
    const frame = requestAnimationFrame(() => {
      cancelIdle = whenIdle(() => {
        // Text selected in the step before is not in this one (asked first: clearing redraws).
        if (term.hasSelection()) term.clearSelection();
        term.write(CLEAR + (detail ? recordedOutput(detail, cols) : ''));
        wrote.current = { detail, cols };
        written.current = detail ? detail.step : null;
        mark();
      });
    });
    return () => {
      cancelAnimationFrame(frame);
      cancelIdle?.();
    };
  }, [detail, shown, term, cols]);
  return null;
}

/** A TTY into the live sandbox; while viewing history, the viewed step's recorded output. */
export function TerminalPanel() {
  const stores = useStores();
  const status = useSlice('terminal', (s) => s.status);
  const heard = useSlice('terminal', (s) => s.heard);
  const error = useSlice('terminal', (s) => s.error);
  const branch = useSlice('stepper', (s) => s.branch);
  const history = useSlice('stepper', selectViewingHistory);
  const live = useSlice('stepper', (s) => s.live);
  const seenLive = useSlice('stepper', (s) => s.seenLive);
  // Whether the viewed step's detail is here, not which: a step change does not render the panel
  // (its recorded output is written by RecordedOutput, below).
  const hasDetail = useSlice('inspector', (s) => s.detail !== null);
  const liveBox = useRef<HTMLDivElement>(null);
  const historyBox = useRef<HTMLDivElement>(null);
  const terms = useRef<Terminals | null>(null);
  // The history terminal once opened: the recorded output is written into it from then on.
  const [historyTerm, setHistoryTerm] = useState<Terminals['history'] | null>(null);
  // Where the keyboard is: typing in the shell, on the terminal's box (Enter enters), or elsewhere.
  const [focus, setFocus] = useState<'typing' | 'box' | 'away'>('away');
  const [xterm, setXterm] = useState<XtermModule | null>(null);
  const [xtermError, setXtermError] = useState<string | null>(null);
  const opening = useSlice('stepper', selectOpening);
  const failed = useSlice('stepper', (s) => s.load === 'error');
  const showHistory = branch !== null && !opening && (history || !live);
  // xterm loads when there is something to show: a session opening, or a recorded step's
  // output (its detail arrives after the timeline is drawn). Issue 19.10: not on the first render's path.
  const needed = branch !== null && (showHistory ? hasDetail : status !== 'idle');
  // Once the window is idle: its chunk and first layout (~100 ms of a loaded 2-core machine's
  // CPU) came right behind the timeline's first paint.
  useEffect(() => {
    if (!needed || xterm) return;
    let gone = false;
    const cancel = whenIdle(
      () =>
        void import('./terminal-xterm').then(
          (m) => {
            if (!gone) setXterm(m);
          },
          (e: unknown) => {
            if (!gone) setXtermError(e instanceof Error ? e.message : String(e));
          },
        ),
    );
    return () => {
      gone = true;
      cancel();
    };
  }, [needed, xterm]);

  // Output of a session that opened before xterm loaded waits here (the server sends more only against acks).
  const early = useRef<{ data: string; own: boolean }[]>([]);
  const sink = useRef<(data: string, own: boolean) => void>((data, own) => early.current.push({ data, own }));
  useEffect(() => stores.terminal.getState().onOutput((data, own) => sink.current(data, own)), [stores]);

  // Both terminals live as long as the panel; the session behind the live one changes with the branch.
  useEffect(() => {
    if (!xterm) return;
    const liveEl = liveBox.current as HTMLDivElement;
    const historyEl = historyBox.current as HTMLDivElement;
    const made = xterm.openTerminals(liveEl, historyEl, {
      leave: () => {
        const panel = liveEl.closest<HTMLElement>('[data-testid="terminal"]');
        if (panel) focusAfter(panel);
      },
      resized: (cols, rows) => stores.terminal.getState().resize(cols, rows),
    });
    const onIn = () => setFocus('typing');
    const onOut = () => setFocus('away');
    made.live.textarea?.addEventListener('focus', onIn);
    made.live.textarea?.addEventListener('blur', onOut);
    terms.current = made;
    setHistoryTerm(made.history);
    const writer = createFlowWriter(
      (data, done) => made.live.write(data, done),
      (bytes) => stores.terminal.getState().ack(bytes),
    );
    // The window's own marks are drawn in order with the output, never acknowledged to the server.
    const take = (data: string, own: boolean) => (own ? writer.note(data) : writer.push(data));
    for (const e of early.current) take(e.data, e.own);
    early.current = [];
    sink.current = take;
    const input = made.live.onData((data) => stores.terminal.getState().write(data));
    const observer = new ResizeObserver(() => made.fit());
    observer.observe(liveEl);
    observer.observe(historyEl);
    made.fit();
    return () => {
      made.live.textarea?.removeEventListener('focus', onIn);
      made.live.textarea?.removeEventListener('blur', onOut);
      observer.disconnect();
      sink.current = (data, own) => early.current.push({ data, own });
      input.dispose();
      writer.dispose();
      made.dispose();
      terms.current = null;
      setHistoryTerm(null);
    };
  }, [stores, xterm]);

  // A new session starts on a clean screen.
  useEffect(() => {
    if (status === 'connecting') terms.current?.live.reset();
  }, [status]);

  const words = selectTerminalWords({ status, heard }, focus === 'typing');
  let overlay = null;
  if (branch === null)
    overlay = (
      <PanelState kind="empty">No live sandbox. Start an episode to open a terminal into it.</PanelState>
    );
  else if (opening) overlay = <PanelState kind="loading">Opening the episode…</PanelState>;
  else if (failed) overlay = <PanelState kind="empty">{`No recorded output: ${NOT_OPENED}.`}</PanelState>;
  else if (xtermError !== null)
    overlay = (
      <PanelState kind="error">The terminal could not load ({xtermError}). Fix: reload the page.</PanelState>
    );
  else if (needed && !xterm) overlay = <PanelState kind="loading">Loading the terminal…</PanelState>;
  else if (!showHistory && status === 'connecting')
    overlay = <PanelState kind="loading">Opening a terminal…</PanelState>;
  else if (!showHistory && status === 'error')
    overlay = <PanelState kind="error">Terminal unavailable: {error}</PanelState>;
  else if (!showHistory && status === 'closed')
    overlay = <PanelState kind="error">The shell ended{error ? `: ${error}` : ''}.</PanelState>;

  return (
    <Panel
      testId="terminal"
      title={showHistory ? 'Terminal — recorded output' : 'Terminal'}
      className="terminal"
      actions={
        <span className="muted" data-testid="terminal-mode" data-mode={showHistory ? 'history' : 'live'}>
          {showHistory ? (live ? 'viewing history · → to return' : notLiveWords(seenLive)) : words}
        </span>
      }
    >
      {overlay}
      {/* The box is one Tab stop; Enter (or a click) puts the keyboard into the shell. */}
      <div
        className={`xterm-box${showHistory ? ' hidden' : ''}`}
        ref={liveBox}
        data-testid="terminal-live"
        data-focus={focus}
        tabIndex={showHistory || branch === null ? -1 : 0}
        role="group"
        aria-label="Live terminal: press Enter to type in the shell, Escape to leave it"
        aria-keyshortcuts="T"
        onFocus={(e) => {
          if (e.target === e.currentTarget) setFocus('box');
        }}
        onBlur={(e) => {
          if (e.target === e.currentTarget) setFocus((f) => (f === 'box' ? 'away' : f));
        }}
        onClick={(e) => {
          // The T key clicks the box: the keyboard goes into the shell, as a click on it does.
          if (e.target === e.currentTarget) terms.current?.live.focus();
        }}
        onKeyDown={(e) => {
          if (e.target === e.currentTarget && e.key === 'Enter') {
            e.preventDefault();
            terms.current?.live.focus();
          }
        }}
      />
      <div
        className={`xterm-box${showHistory ? '' : ' hidden'}`}
        ref={historyBox}
        data-testid="terminal-history"
      />
      {historyTerm ? <RecordedOutput term={historyTerm} shown={showHistory} box={historyBox} /> : null}
    </Panel>
  );
}
