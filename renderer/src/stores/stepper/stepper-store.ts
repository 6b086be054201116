import { createStore, type StoreApi } from 'zustand/vanilla';
import { describeBreakpoint, type Breakpoint } from '../../../../shared/breakpoints';
import type { StepboxClient } from '../../../../shared/contract/client';
import type {
  BranchSummary,
  ControllerState,
  EpisodeStateInfo,
  EpisodeView,
  FlagSummary,
  StepRow,
} from '../../../../shared/contract/models';
import type { Result } from '../../../../shared/result';
import type { TraceEvent } from '../../../../shared/trace-events';
import { applyEventToRows, liveRowsOf, type LiveRows } from '../../../../shared/contract/step-rows';
import { errorText } from '../result';

/** The open branch: its rows, controller state, breakpoints and which step is viewed. */
export interface StepperState {
  readonly branch: string | null;
  readonly view: EpisodeView | null;
  readonly load: 'empty' | 'loading' | 'ready' | 'error';
  readonly error: string | null;
  readonly rows: readonly StepRow[];
  readonly flags: readonly FlagSummary[];
  readonly branches: readonly BranchSummary[];
  readonly live: boolean;
  readonly state: ControllerState | null;
  readonly stopReason: string | null;
  readonly breakpoints: readonly Breakpoint[];
  /** The step viewed; null follows the latest step. */
  readonly selectedStep: number | null;
  readonly busy: boolean;
}

/** What the stepper does. */
export interface StepperActions {
  open(branch: string): Promise<void>;
  /** Reloads the open branch (after a fork or rollback changed it). */
  reload(): Promise<void>;
  close(): void;
  step(): Promise<void>;
  run(): Promise<void>;
  pause(): Promise<void>;
  stop(): Promise<void>;
  toggleBreakpoint(step: number): Promise<void>;
  /** Replaces the breakpoint list (a live controller gets it at once; a recorded branch has none to tell). */
  setBreakpoints(next: readonly Breakpoint[]): Promise<void>;
  /** Shows a message in the status bar (plain words; cleared by the next action). */
  explain(message: string | null): void;
  select(step: number | null): void;
  selectPrevious(): void;
  selectNext(): void;
  /** Stops listening to the client. */
  dispose(): void;
}

/** The stepper slice. */
export type StepperStore = StoreApi<StepperState & StepperActions>;

const initial: StepperState = {
  branch: null,
  view: null,
  load: 'empty',
  error: null,
  rows: [],
  flags: [],
  branches: [],
  live: false,
  state: null,
  stopReason: null,
  breakpoints: [],
  selectedStep: null,
  busy: false,
};

/** Options: how live events are batched (tests flush synchronously). */
export interface StepperOptions {
  readonly schedule?: (flush: () => void) => void;
}

const END_REASONS: Record<string, string> = {
  final_answer: 'the agent gave its final answer',
  max_steps: 'it reached its step limit',
  script_exhausted: 'the agent script ran out',
  sandbox_lost: 'the sandbox died',
  stopped: 'a person stopped it',
  episode_timeout: 'the episode ran out of time',
  agent_exit: 'the agent program exited with an error',
  model_error: 'the model endpoint kept failing',
};

/** Why an episode ended, in words: `the agent gave its final answer; the verifier failed`. */
export function endText(status: string, reason: string, verifierPassed?: boolean | null): string {
  const rolled = /^rolled_back_to_(\d+)$/.exec(reason);
  const why = rolled
    ? `rolled back to step ${rolled[1]}`
    : (END_REASONS[reason] ?? reason.replace(/_/g, ' '));
  const verifier =
    status === 'failed' && verifierPassed !== true
      ? verifierPassed === false
        ? '; the verifier failed'
        : '; no verifier passed it'
      : '';
  return `${why}${verifier}`;
}

/** A stop reason in words, for the status bar. */
export function describeStop(info: EpisodeStateInfo): string | null {
  const r = info.reason;
  if (!r) return null;
  if (r.kind === 'breakpoint') {
    const what = r.breakpoint ? ` (${describeBreakpoint(r.breakpoint)})` : '';
    return `paused at a breakpoint${what}${r.message ? `: ${r.message}` : ''}`;
  }
  if (r.kind === 'ended' && r.message) {
    // The runner says `STATUS: REASON[: detail]`; a person reads it in words.
    const m = /^(succeeded|failed|timeout|error|interrupted): ([a-z_0-9]+)(?::\s*(.*))?$/s.exec(r.message);
    if (m) return `ended ${m[1]} — ${endText(m[1], m[2])}${m[3] ? `: ${m[3]}` : ''}`;
  }
  return r.message ? `${r.kind}: ${r.message}` : r.kind;
}

const RECORDED =
  'This episode is recorded, not running. To continue it, select a step in the timeline and press "Reopen live here" (or "Fork from here").';

/** Creates the stepper slice over a client; live events are batched into one update per frame. */
export function createStepperStore(client: StepboxClient, options: StepperOptions = {}): StepperStore {
  const schedule = options.schedule ?? ((flush) => setTimeout(flush, 16));
  let pending: TraceEvent[] = [];
  let scheduled = false;
  // The live fold of the open branch's rows (the shared per-step reducer, event by event).
  let fold: LiveRows = liveRowsOf([]);
  // Loads in flight may answer out of order (a step's reload, then the end's): only the
  // latest one applies, or an older view without the end and its QA flags overwrites it.
  let loads = 0;

  const store = createStore<StepperState & StepperActions>()((set, get) => {
    const applyState = (info: EpisodeStateInfo): void => {
      set({ state: info.state, stopReason: describeStop(info), live: info.state !== 'ended' });
    };
    const control = async <T>(op: (id: string) => Promise<Result<T>>): Promise<Result<T> | null> => {
      const branch = get().branch;
      if (!branch) return null;
      set({ busy: true, error: null });
      const res = await op(branch);
      if (get().branch === branch) set({ busy: false, error: errorText(res) });
      return res;
    };
    const load = async (branch: string, keepSelection: boolean): Promise<void> => {
      // Marks let the UI benchmark split the server's share of opening from the window's.
      performance.mark('stepbox:open-sent');
      const mine = ++loads;
      const res = await client.episode.open({ id: branch });
      performance.mark('stepbox:open-received');
      if (mine !== loads || get().branch !== branch) return;
      if (!res.ok) {
        set({ load: 'error', error: errorText(res) });
        return;
      }
      const v = res.value;
      pending = [];
      fold = liveRowsOf(v.rows);
      set({
        load: 'ready',
        error: null,
        view: v,
        rows: v.rows,
        flags: v.flags,
        branches: v.branches,
        live: v.state !== null && v.state.state !== 'ended',
        state: v.state?.state ?? null,
        stopReason: v.state ? describeStop(v.state) : null,
        breakpoints: v.breakpoints,
        selectedStep: keepSelection ? get().selectedStep : null,
      });
    };
    return {
      ...initial,
      async open(branch) {
        pending = [];
        fold = liveRowsOf([]);
        set({ ...initial, branch, load: 'loading' });
        await load(branch, false);
      },
      async reload() {
        const branch = get().branch;
        if (branch) await load(branch, true);
      },
      close() {
        pending = [];
        fold = liveRowsOf([]);
        set(initial);
      },
      async step() {
        // Like a debugger: F10 while a step is still running does nothing.
        if (get().busy || get().state === 'running') return;
        if (!get().live) {
          set({ error: RECORDED });
          return;
        }
        const res = await control((id) => client.episode.step({ id }));
        if (res?.ok) applyState(res.value);
      },
      async run() {
        if (get().busy || get().state === 'running') return;
        if (!get().live) {
          set({ error: RECORDED });
          return;
        }
        const res = await control((id) => client.episode.run({ id }));
        if (res?.ok) applyState(res.value);
      },
      async pause() {
        await control((id) => client.episode.pause({ id }));
      },
      async stop() {
        const res = await control((id) => client.episode.stop({ id }));
        if (res?.ok) set({ live: false, state: 'ended' });
      },
      async toggleBreakpoint(step) {
        const { breakpoints } = get();
        const has = hasStepBreakpoint(breakpoints, step);
        await get().setBreakpoints(
          has
            ? breakpoints.filter((b) => !(b.kind === 'step' && b.step === step))
            : [...breakpoints, { kind: 'step', step }],
        );
      },
      async setBreakpoints(next) {
        const { branch, breakpoints, live } = get();
        set({ breakpoints: next, error: null });
        if (!branch || !live) return;
        const res = await client.episode.setBreakpoints({ id: branch, breakpoints: [...next] });
        if (!res.ok) set({ breakpoints, error: errorText(res) });
      },
      explain(message) {
        set({ error: message });
      },
      select(step) {
        set({ selectedStep: step });
      },
      selectPrevious() {
        const rows = get().rows;
        if (rows.length === 0) return;
        const current = selectViewedStep(get()) ?? rows[rows.length - 1].step;
        set({ selectedStep: Math.max(rows[0].step, current - 1) });
      },
      selectNext() {
        const rows = get().rows;
        if (rows.length === 0) return;
        const current = selectViewedStep(get()) ?? rows[rows.length - 1].step;
        set({ selectedStep: Math.min(rows[rows.length - 1].step, current + 1) });
      },
      dispose() {
        offEvent();
        offState();
        offLibrary();
      },
    };
  });

  const flush = (): void => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    const s = store.getState();
    const ended = batch.some((e) => e.type === 'end');
    for (const event of batch) fold = applyEventToRows(fold, event);
    store.setState({ rows: fold.rows, live: ended ? false : s.live });
    // A closed branch gets its QA flags and final status from the server; an event on a
    // step the view loaded (an injection or terminal command while paused) re-reads it.
    if (ended || fold.stale) void store.getState().reload();
  };

  const offEvent = client.onEpisodeEvent(({ branch, event }) => {
    const s = store.getState();
    if (branch !== s.branch || s.load !== 'ready') return;
    pending.push(event);
    if (!scheduled) {
      scheduled = true;
      schedule(flush);
    }
  });
  const offState = client.onEpisodeState((info) => {
    const open = store.getState().branch;
    // Continuing after a rollback moves the episode onto a new branch: the window follows it.
    if (open !== null && info.branch !== open && info.continued_from === open) {
      void store.getState().open(info.branch);
      return;
    }
    if (info.branch !== open) return;
    const was = store.getState().state;
    store.setState({ state: info.state, stopReason: describeStop(info), live: info.state !== 'ended' });
    // The end's QA flags and status come with a reload; the state says "ended" even when the
    // end event itself was not seen (it raced the open), so it reloads too.
    if (info.state === 'ended' && was !== 'ended') void store.getState().reload();
  });
  // An ended episode's sandbox is released after its end; the release closes the trace and
  // says so (library.changed). A view loaded before that may lack the flags of the closed
  // trace, so it is read again (from the server's cache when nothing changed).
  const offLibrary = client.onLibraryChanged(({ episode }) => {
    const s = store.getState();
    if (s.state === 'ended' && s.view?.summary.episode === episode) void s.reload();
  });
  return store;
}

/** The step the views show: the selected one, or the latest. */
export function selectViewedStep(s: StepperState): number | null {
  if (s.selectedStep !== null) return s.selectedStep;
  const rows = s.rows;
  return rows.length ? rows[rows.length - 1].step : null;
}

/** The last step recorded so far (0 when none). */
export function selectLastStep(s: StepperState): number {
  return s.rows.length ? s.rows[s.rows.length - 1].step : 0;
}

/** True when a live branch is shown at an earlier step than its latest. */
export function selectViewingHistory(s: StepperState): boolean {
  return s.selectedStep !== null && s.selectedStep < selectLastStep(s);
}

/** The row of the viewed step, or null. */
export function selectViewedRow(s: StepperState): StepRow | null {
  const step = selectViewedStep(s);
  if (step === null) return null;
  // Rows are sorted by step and usually dense: try the direct index first.
  const guess = s.rows[step - s.rows[0].step];
  return guess?.step === step ? guess : (s.rows.find((r) => r.step === step) ?? null);
}

/** True when a step has a step breakpoint. */
export function hasStepBreakpoint(breakpoints: readonly Breakpoint[], step: number): boolean {
  return breakpoints.some((b) => b.kind === 'step' && b.step === step);
}

/** True when the stepper accepts step/continue. */
export function selectCanStep(s: StepperState): boolean {
  return s.live && !s.busy && s.state !== 'running';
}
