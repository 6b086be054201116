import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { debuggerAction } from '../hooks/debugger-keys';

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

/** The panel's two xterms (the live shell, a recorded step's output), fitted to their boxes. */
export interface Terminals {
  readonly live: Terminal;
  readonly history: Terminal;
  /** Fits both to their boxes (those shown); calls `resized` with the live one's size. */
  fit(): void;
  dispose(): void;
}

/**
 * Opens both xterms in their boxes. This module is loaded when the panel first has
 * something to show (xterm is a third of the window's code: not on the first render's path).
 */
export function openTerminals(
  liveBox: HTMLElement,
  historyBox: HTMLElement,
  on: { readonly leave: () => void; readonly resized: (cols: number, rows: number) => void },
): Terminals {
  const live = makeTerminal(false, on.leave);
  const history = makeTerminal(true, on.leave);
  live.open(liveBox);
  history.open(historyBox);
  // Out of the Tab order: Tab and Shift+Tab pass the terminal unless a person entered it on
  // purpose (a click on it, or Enter on its box), so the shell's completion never traps the keyboard.
  for (const t of [live, history]) if (t.textarea) t.textarea.tabIndex = -1;
  const fitLive = new FitAddon();
  const fitHistory = new FitAddon();
  live.loadAddon(fitLive);
  history.loadAddon(fitHistory);
  window.__stepboxTerminal = live;
  window.__stepboxHistoryTerminal = history;
  return {
    live,
    history,
    fit() {
      if (liveBox.offsetParent) {
        fitLive.fit();
        on.resized(live.cols, live.rows);
      }
      if (historyBox.offsetParent) fitHistory.fit();
    },
    dispose() {
      live.dispose();
      history.dispose();
    },
  };
}
