import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { Panel, PanelState } from '../components/panel';
import { debuggerAction } from '../hooks/debugger-keys';
import { createFlowWriter } from '../model/flow-writer';
import { recordedOutput } from '../model/recorded-output';
import { selectViewingHistory } from '../stores/stepper/stepper-store';
import { useSlice, useStores } from '../stores/use-stores';

declare global {
  interface Window {
    /** The live terminal's xterm, for tests that read rows through `buffer.active`. */
    __stepboxTerminal?: Terminal;
    /** The xterm showing a recorded step's output. */
    __stepboxHistoryTerminal?: Terminal;
  }
}

const THEME = {
  background: '#0b0d12',
  foreground: '#d5dae3',
  cursor: '#5fb3f9',
  selectionBackground: '#2c3b55',
};

/** Escape alone leaves the terminal (Tab belongs to the shell once entered); Ctrl+[ still sends an Escape to it. */
function isLeaveKey(e: KeyboardEvent): boolean {
  return e.key === 'Escape' && !e.ctrlKey && !e.altKey && !e.metaKey && !e.shiftKey;
}

const TABBABLE = 'button, input, select, textarea, a[href], [tabindex]:not([tabindex="-1"])';

/**
 * Moves focus to the first control after `panel` in Tab order (wrapping to the first in
 * the page), so leaving the terminal with Escape and pressing Tab goes on, not back in.
 */
function focusAfter(panel: HTMLElement): void {
  const all = Array.from(document.querySelectorAll<HTMLElement>(TABBABLE)).filter(
    (el) => !(el as HTMLButtonElement).disabled && el.offsetParent !== null && el.tabIndex >= 0,
  );
  const next =
    all.find(
      (el) => !panel.contains(el) && panel.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING,
    ) ?? all.find((el) => !panel.contains(el));
  if (next) next.focus();
  else panel.focus();
}

/**
 * Takes xterm's input field out of the Tab order: Tab and Shift+Tab pass the terminal
 * unless a person entered it on purpose (a click on it, or Enter on its box), so the
 * shell's completion never traps the keyboard.
 */
function keepOutOfTabOrder(term: Terminal): void {
  if (term.textarea) term.textarea.tabIndex = -1;
}

function makeTerminal(readOnly: boolean, leave: () => void): Terminal {
  const term = new Terminal({
    fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, monospace',
    fontSize: 12,
    lineHeight: 1.1,
    scrollback: 5000,
    theme: THEME,
    disableStdin: readOnly,
    cursorBlink: !readOnly,
  });
  // The debugger keys are handled on window (capture phase); xterm must not also send them to the shell.
  term.attachCustomKeyEventHandler((e) => {
    if (isLeaveKey(e)) {
      if (e.type === 'keydown') leave();
      return false;
    }
    return debuggerAction(e) === null;
  });
  return term;
}

/** A TTY into the live sandbox; while viewing history, the viewed step's recorded output. */
export function TerminalPanel() {
  const stores = useStores();
  const status = useSlice('terminal', (s) => s.status);
  const error = useSlice('terminal', (s) => s.error);
  const branch = useSlice('stepper', (s) => s.branch);
  const history = useSlice('stepper', selectViewingHistory);
  const live = useSlice('stepper', (s) => s.live);
  const detail = useSlice('inspector', (s) => s.detail);
  const liveBox = useRef<HTMLDivElement>(null);
  const historyBox = useRef<HTMLDivElement>(null);
  const terms = useRef<{ live: Terminal; history: Terminal } | null>(null);
  // Where the keyboard is: typing in the shell, on the terminal's box (Enter enters), or elsewhere.
  const [focus, setFocus] = useState<'typing' | 'box' | 'away'>('away');

  // Both terminals live as long as the panel; the session behind the live one changes with the branch.
  useEffect(() => {
    const leave = () => {
      const panel = liveBox.current?.closest<HTMLElement>('[data-testid="terminal"]');
      if (panel) focusAfter(panel);
    };
    const liveTerm = makeTerminal(false, leave);
    const historyTerm = makeTerminal(true, leave);
    liveTerm.open(liveBox.current as HTMLDivElement);
    historyTerm.open(historyBox.current as HTMLDivElement);
    keepOutOfTabOrder(liveTerm);
    keepOutOfTabOrder(historyTerm);
    const onIn = () => setFocus('typing');
    const onOut = () => setFocus('away');
    liveTerm.textarea?.addEventListener('focus', onIn);
    liveTerm.textarea?.addEventListener('blur', onOut);
    terms.current = { live: liveTerm, history: historyTerm };
    window.__stepboxTerminal = liveTerm;
    window.__stepboxHistoryTerminal = historyTerm;
    const t = stores.terminal.getState();
    const writer = createFlowWriter(
      (data, done) => liveTerm.write(data, done),
      (bytes) => stores.terminal.getState().ack(bytes),
    );
    const offOutput = t.onOutput((data) => writer.push(data));
    const input = liveTerm.onData((data) => stores.terminal.getState().write(data));
    const fit = new FitAddon();
    const fitHistory = new FitAddon();
    liveTerm.loadAddon(fit);
    historyTerm.loadAddon(fitHistory);
    const refit = () => {
      if (liveBox.current?.offsetParent) {
        fit.fit();
        stores.terminal.getState().resize(liveTerm.cols, liveTerm.rows);
      }
      if (historyBox.current?.offsetParent) fitHistory.fit();
    };
    const observer = new ResizeObserver(refit);
    observer.observe(liveBox.current as HTMLDivElement);
    observer.observe(historyBox.current as HTMLDivElement);
    refit();
    return () => {
      liveTerm.textarea?.removeEventListener('focus', onIn);
      liveTerm.textarea?.removeEventListener('blur', onOut);
      observer.disconnect();
      offOutput();
      input.dispose();
      writer.dispose();
      liveTerm.dispose();
      historyTerm.dispose();
      terms.current = null;
    };
  }, [stores]);

  // A new session starts on a clean screen.
  useEffect(() => {
    if (status === 'connecting') terms.current?.live.reset();
  }, [status]);

  const showHistory = branch !== null && (history || !live);
  useEffect(() => {
    const term = terms.current?.history;
    if (!term || !showHistory) return;
    // Rewriting xterm lays it out (it measures glyphs, a forced layout each): after the next
    // paint, so a slider move's selection shows first, and while scrubbing only the step
    // that stays viewed is written (a newer detail cancels this one). Issue 19.10.
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => {
        if (cancelled) return;
        term.reset();
        if (detail) term.write(recordedOutput(detail));
      }, 0);
    });
    return () => {
      cancelled = true;
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [detail, showHistory]);

  let overlay = null;
  if (branch === null)
    overlay = (
      <PanelState kind="empty">No live sandbox. Start an episode to open a terminal into it.</PanelState>
    );
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
          {showHistory
            ? live
              ? 'viewing history · → to return'
              : 'recorded trace'
            : status === 'open'
              ? focus === 'typing'
                ? 'open · typing in the shell · Esc leaves'
                : 'open · Enter or click to type'
              : status}
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
    </Panel>
  );
}
