import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import { errorText } from '../result';

/** The live terminal session into a branch's sandbox. */
export interface TerminalState {
  readonly branch: string | null;
  readonly terminal: string | null;
  readonly status: 'idle' | 'connecting' | 'open' | 'closed' | 'error';
  /**
   * The open session has sent its first output (the shell's prompt). Until then the header says
   * "connecting…": "open · Enter or click to type" sat over an empty pane before the prompt came.
   */
  readonly heard: boolean;
  readonly error: string | null;
  readonly cols: number;
  readonly rows: number;
}

/** What the terminal does. Output goes straight to xterm through `onOutput`, never through state. */
export interface TerminalActions {
  attach(branch: string): Promise<void>;
  /**
   * The episode went on from `from` to `to` in the same sandbox (a rollback makes its branch in
   * the sandbox it restored): the open session goes on too, relabelled, instead of being closed
   * and opened again (what a person typed meanwhile was lost, the screen cleared).
   */
  follow(from: string, to: string, step: number): void;
  detach(): Promise<void>;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  /**
   * Output of the current session; returns an unsubscribe. `own` is text of the window's own
   * (the rollback's mark): drawn, never acknowledged to the server.
   */
  onOutput(listener: (data: string, own: boolean) => void): () => void;
  /** Acknowledges output xterm has written (flow control: the server pauses without acks). */
  ack(bytes: number): void;
  dispose(): void;
}

/** The terminal slice. */
export type TerminalStore = StoreApi<TerminalState & TerminalActions>;

/** Creates the terminal slice over a client. */
export function createTerminalStore(client: StepboxClient): TerminalStore {
  const listeners = new Set<(data: string, own: boolean) => void>();
  const store = createStore<TerminalState & TerminalActions>()((set, get) => ({
    branch: null,
    terminal: null,
    status: 'idle',
    heard: false,
    error: null,
    cols: 80,
    rows: 24,
    async attach(branch) {
      const s = get();
      if (s.branch === branch && (s.status === 'open' || s.status === 'connecting')) return;
      await get().detach();
      set({ branch, status: 'connecting', heard: false, error: null });
      const { cols, rows } = get();
      const res = await client.terminal.open({ id: branch, cols, rows });
      if (get().branch !== branch) {
        if (res.ok) void client.terminal.close({ terminal: res.value.terminal });
        return;
      }
      if (!res.ok) {
        set({ status: 'error', error: errorText(res) });
        return;
      }
      const terminal = res.value.terminal;
      set({ terminal, status: 'open' });
      // The window may have been resized while the session was opening.
      const now = get();
      if (now.cols !== cols || now.rows !== rows)
        void client.terminal.resize({ terminal, cols: now.cols, rows: now.rows });
    },
    follow(from, to, step) {
      const s = get();
      if (s.branch !== from || (s.status !== 'open' && s.status !== 'connecting')) return;
      set({ branch: to });
      // The screen still shows what ran after that step: the mark says it was undone.
      for (const l of listeners) l(rollbackMark(step), true);
    },
    async detach() {
      const id = get().terminal;
      set({ branch: null, terminal: null, status: 'idle', heard: false, error: null });
      if (id) await client.terminal.close({ terminal: id });
    },
    write(data) {
      const terminal = get().terminal;
      if (terminal) void client.terminal.input({ terminal, data });
    },
    resize(cols, rows) {
      if (cols === get().cols && rows === get().rows) return;
      set({ cols, rows });
      const terminal = get().terminal;
      if (terminal) void client.terminal.resize({ terminal, cols, rows });
    },
    onOutput(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    ack(bytes) {
      const terminal = get().terminal;
      if (terminal && bytes > 0) void client.terminal.ack({ terminal, bytes });
    },
    dispose() {
      offData();
      offExit();
    },
  }));
  const offData = client.onTerminalData(({ terminal, data }) => {
    if (terminal !== store.getState().terminal) return;
    if (!store.getState().heard) store.setState({ heard: true });
    for (const l of listeners) l(data, false);
  });
  const offExit = client.onTerminalExit(({ terminal, code, message }) => {
    if (terminal !== store.getState().terminal) return;
    store.setState({
      status: 'closed',
      terminal: null,
      error: message ?? (code ? `the shell exited with code ${code}` : null),
    });
  });
  return store;
}

/**
 * The line drawn in the terminal where a rollback happened: everything above it that ran after
 * `step` (typed commands, the agent's calls) was undone with the sandbox. Dim, on a line of its
 * own; the shell does not see it (a person's Enter brings a fresh prompt). Short: the terminal
 * broke the longer line mid-word ("abov" / "e") at 1280×800, and the Inspector says the rest.
 */
export function rollbackMark(step: number): string {
  return `\r\n\x1b[2m── rolled back to step ${step}: what ran above since is undone ──\x1b[0m\r\n`;
}

/**
 * The live terminal's header words: its state, and once the shell has answered, how to type
 * into it (`typing`: the keyboard is in the shell).
 */
export function selectTerminalWords(s: Pick<TerminalState, 'status' | 'heard'>, typing: boolean): string {
  if (s.status !== 'open') return s.status;
  if (!s.heard) return 'connecting…';
  return typing ? 'open · typing in the shell · Esc leaves' : 'open · Enter or click to type';
}

/** True when keystrokes reach a live shell. */
export function selectTerminalLive(s: TerminalState): boolean {
  return s.status === 'open';
}
