import { branchNameOf } from '../../model/branch-name';
import { endText, verdictWords, verifierOutputTail, verifierVerdict } from '../../../../shared/end-words';
import { createStore, type StoreApi } from 'zustand/vanilla';
import { describeBreakpoint } from '../../../../shared/breakpoint-kinds';
import type { Breakpoint } from '../../../../shared/breakpoints';
import type { StepboxClient } from '../../../../shared/contract/client';
import type {
  BranchSummary,
  ControllerState,
  EpisodeStateInfo,
  EpisodeView,
  FlagSummary,
  RollbackDropped,
  RolledBack,
  StepRow,
  StopEnd,
  StopReason,
} from '../../../../shared/contract/models';
import type { Result } from '../../../../shared/result';
import type { HeldAction, StopPoints } from '../../../../shared/held-action';
import { NO_STOP_POINTS } from '../../../../shared/no-stop-points';
import type { EndEvent, TraceEvent } from '../../../../shared/trace-events';
import {
  applyEventToRows,
  liveRowsOf,
  withFlags,
  type LiveRows,
} from '../../../../shared/contract/step-rows';
import { callDetail } from '../../../../shared/step-summary';
import { droppedPhrases, droppedSentence } from '../../../../shared/rollback-dropped';
import { errorText } from '../result';
import { whenIdle } from '../../model/when-idle';
import { isSetupRow } from '../../model/row-filter';
import { overrideToResult } from '../inject/inject-store';
import { selectPersonDecides } from './agent-traits';
import { AGAIN_FAILS_SEE_REPLAY, wayOnAt, wayOnHint, type WayOn } from './way-on';

/** The open branch: its rows, controller state, breakpoints and which step is viewed. */
export interface StepperState {
  readonly branch: string | null;
  readonly view: EpisodeView | null;
  readonly load: 'empty' | 'loading' | 'ready' | 'error';
  readonly error: string | null;
  /**
   * What the person can do instead of what they just asked (Step on a recorded episode, a
   * key nothing offers now): guidance shown as a hint, not as an error. Cleared by the next action.
   */
  readonly hint: string | null;
  readonly rows: readonly StepRow[];
  /**
   * Rows of the branch not here yet, before `rows[0]`: the open brought the last screenful, and
   * the earlier rows arrive in pages after the first paint (0 once all are here).
   */
  readonly rowsBefore: number;
  readonly flags: readonly FlagSummary[];
  readonly branches: readonly BranchSummary[];
  readonly live: boolean;
  /**
   * The branch ran live in this window this session (started, stepped, forked or reopened
   * here): once ended it is "an episode that has ended", not "a recorded trace" (see way-on.ts).
   */
  readonly seenLive: boolean;
  /** The live controller's state; `ended` also once the branch's end is recorded (see {@link stateOfView}). */
  readonly state: ControllerState | null;
  readonly stopReason: string | null;
  /**
   * The end this window saw the open branch reach live (its state event), kept until the
   * reload that follows can read the end from the trace: between the two the view has neither
   * end nor status, and the bar read "recorded" for an episode that had just succeeded.
   */
  readonly endSeen: StopEnd | null;
  /** What kind of stop it was (null while nothing stopped it). */
  readonly stopKind: StopReason['kind'] | null;
  /** The breakpoint that stopped it, in words (the held card alone does not say which). */
  readonly stopBreakpoint: string | null;
  readonly breakpoints: readonly Breakpoint[];
  /** Where the live branch also stops inside a step (before the tools run, before the answer). */
  readonly stopPoints: StopPoints;
  /** The step waiting at a stop inside it: the decided action, not yet run. */
  readonly held: HeldAction | null;
  /** Why the last change of the held step was refused (shown beside it), or null. */
  readonly heldError: string | null;
  /** The step viewed; null follows the latest step. */
  readonly selectedStep: number | null;
  readonly busy: boolean;
  /**
   * The rollback that made the open branch, as the engine said it (its pause's reason): the branch
   * left, the step, and what of a person's it dropped, for the notice there; null before.
   */
  readonly rolledBack: RolledBack | null;
}

/** A rollback that dropped nothing of a person's. */
const NOTHING_DROPPED: RollbackDropped = { injected: [], overridden: [], typed: [] };

/** What the stepper does. */
export interface StepperActions {
  /** The person's pause switches and breakpoints for the session: a new episode starts with them. */
  sessionSwitches(): { readonly stopPoints: StopPoints; readonly breakpoints: readonly Breakpoint[] };
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
  /** Turns a stop inside each step on or off (before the tools run, before the answer reaches the agent). */
  setStopPoint(point: keyof StopPoints, on: boolean): Promise<void>;
  /** New arguments for a held call (JSON text); false when refused (the reason in `heldError`). */
  editArguments(callId: string, json: string): Promise<boolean>;
  /** A new answer for the held step (JSON text of an assistant message); false when refused. */
  editAnswer(json: string): Promise<boolean>;
  /** A result given instead of running a held call (JSON result, or text shown as its output); false when refused. */
  replaceResult(callId: string, text: string): Promise<boolean>;
  /** Forgets a refusal of the held step's change (its draft changed: the message is stale). */
  clearHeldError(): void;
  /** Says what the person can do instead, as a hint (plain words; cleared by the next action). */
  explain(message: string | null): void;
  /** Keeps the engine's word of a rollback of the open branch (what it dropped) for the branch it made. */
  noteRollback(rollback: RolledBack): void;
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
  hint: null,
  rows: [],
  rowsBefore: 0,
  flags: [],
  branches: [],
  live: false,
  seenLive: false,
  state: null,
  stopReason: null,
  endSeen: null,
  stopKind: null,
  stopBreakpoint: null,
  breakpoints: [],
  stopPoints: NO_STOP_POINTS,
  held: null,
  heldError: null,
  selectedStep: null,
  busy: false,
  rolledBack: null,
};

/** Options: how live events are batched (tests flush synchronously), when earlier rows are fetched. */
export interface StepperOptions {
  readonly schedule?: (flush: () => void) => void;
  /** Runs `fetch` once the first screen of rows is painted (default: after the next frame, when idle). */
  readonly afterPaint?: (fetch: () => void) => void;
}

/**
 * Rows the open asks for: the first screen (a 4K-tall timeline shows about 100 rows of 22 px)
 * with room to scroll. A 10,000-step branch's every row was 3.5 MB to send and decode before
 * anything was drawn (issue 19.10).
 */
export const FIRST_ROWS = 200;
/**
 * Rows per page fetched after the first paint, the nearest to the first screen first: each
 * page is a task of its own in the window (decoded, then drawn), kept short (~350 KB) so what a
 * person does meanwhile is not queued behind it.
 */
export const ROWS_PAGE = 1_000;

/**
 * After the next frame is painted (a frame, then a task behind it) and the window is idle:
 * the earlier rows, xterm and the inspector's detail all came right behind the first paint,
 * and the rows (the largest) can wait for the rest (issue 19.10). A timer where there are no frames.
 */
export function afterNextPaint(fetch: () => void): void {
  if (typeof requestAnimationFrame === 'function')
    requestAnimationFrame(() => setTimeout(() => whenIdle(fetch), 0));
  else setTimeout(fetch, 0);
}

export { endText };

const ENDED_AS: Record<string, string> = {
  succeeded: 'succeeded',
  failed: 'failed',
  timeout: 'timed out',
  error: 'ended in an error',
  interrupted: 'was interrupted',
};

/**
 * How a recorded branch ended, in a sentence: `This episode failed: it reached its step limit.`
 * A fatal error's own words (a model server's answer and what to check) stand for the reason:
 * "the model endpoint kept failing" alone left a person without what the server said.
 */
export function selectEndNotice(s: StepperState): string | null {
  return endNotice(s, true);
}

/** {@link selectEndNotice}; without `detail`, the reason in the window's short words only. */
export function endNotice(s: StepperState, detail: boolean): string | null {
  const end = s.live ? null : s.view?.end;
  if (!end) return null;
  const as = ENDED_AS[end.status] ?? `ended (${end.status})`;
  // The verifier decides the episode: said where its end is told (the window said only
  // "succeeded: solution ran." where the CLI said "final reward 1.00"), and not twice.
  const verdict = verifierVerdict(end.verifier);
  const judged = verdict ? ` ${verdict.charAt(0).toUpperCase()}${verdict.slice(1)}.` : '';
  if (detail && end.detail)
    return `This episode ${as}: ${end.detail.trim().replace(/([^.!?])$/, '$1.')}${judged}`;
  // Why the verifier gave no verdict (it timed out, its reward file held no number), in its words.
  const why = end.verifier?.error ? ` (${end.verifier.error.message})` : '';
  const passed = verdict ? undefined : (end.verifier?.success ?? null);
  return `This episode ${as}: ${endText(end.status, end.end_reason, passed)}${why}.${judged}`;
}

/**
 * What the verifier of an ended branch printed, its last lines (shared/end-words.ts), for the
 * Details under the end line: null while live or when it printed nothing.
 */
export function selectVerifierOutput(s: StepperState): string | null {
  return s.live ? null : verifierOutputTail(s.view?.end?.verifier);
}

/** The verifier's part of an ended branch's reward: the step it was recorded at, and its total. */
export interface VerifierReward {
  /** The last step: the final reward is recorded there and folded into its reward for the return. */
  readonly step: number;
  /** The final reward's total as the branch's summary has it (branch-outcome.ts, worked out once). */
  readonly reward: number;
  /** The verdict in words (shared/end-words.ts), for its tooltip. */
  readonly verdict: string;
}

/**
 * The verifier's reward of an ended branch, from its summary (the server's `final_reward`, the
 * one the return folds in): null while live or when no verifier ran (its reward 0 then says
 * nothing). The timeline's last row showed only its step's reward (0.10) beside a return of 1.09.
 */
export function selectVerifierReward(s: StepperState): VerifierReward | null {
  const reward = s.view?.summary.final_reward ?? null;
  const verifier = s.view?.end?.verifier ?? null;
  const last = s.rows.at(-1);
  if (s.live || reward === null || verifier === null || !last) return null;
  return { step: last.step, reward, verdict: verdictWords(verifier) };
}

/** A stop reason in words, for the status bar. */
export function describeStop(info: EpisodeStateInfo): string | null {
  const r = info.reason;
  if (!r) return null;
  if ((r.kind === 'before_tool' || r.kind === 'before_answer') && r.held) {
    const what = r.breakpoint ? ` at a breakpoint (${describeBreakpoint(r.breakpoint)})` : '';
    return r.kind === 'before_tool'
      ? `paused${what} before step ${r.held.step}'s tools run`
      : `paused${what} before the agent gets step ${r.held.step}'s answer`;
  }
  // A QA breakpoint's message says what stopped it in words (qaStopText); the breakpoint's
  // own description ("when a QA rule flags a step (loop, …)") lists what it might have been.
  if (r.kind === 'breakpoint' && r.breakpoint?.kind === 'qa' && r.message) return `paused: ${r.message}`;
  if (r.kind === 'breakpoint') {
    const what = r.breakpoint ? ` (${describeBreakpoint(r.breakpoint)})` : '';
    return `paused at a breakpoint${what}${r.message ? `: ${r.message}` : ''}`;
  }
  if (r.kind === 'ended' && r.end) {
    const { status, end_reason, detail } = r.end;
    return `ended ${status} — ${endText(status, end_reason)}${detail ? `: ${detail}` : ''}`;
  }
  // "step 2 done", "paused after step 2", "rolled back to step 1": the message says it in words.
  if ((r.kind === 'step' || r.kind === 'paused') && r.message) return r.message;
  return r.message ? `${r.kind}: ${r.message}` : r.kind;
}

/** The kind of stop and its breakpoint in words, beside the sentence `describeStop` makes. */
function stopWhy(info: EpisodeStateInfo | null): Pick<StepperState, 'stopKind' | 'stopBreakpoint'> {
  const r = info?.reason;
  return {
    stopKind: r?.kind ?? null,
    stopBreakpoint: r?.breakpoint ? describeBreakpoint(r.breakpoint) : null,
  };
}

/**
 * Why the branch stopped, for the notice above the inspector; null when it adds nothing:
 * one step done (the timeline shows it), or a stop inside a step the held card already
 * says (then only the breakpoint that asked for it, which the card does not name).
 */
export function selectStopNotice(s: StepperState): string | null {
  const rolled = selectRollbackNotice(s);
  if (rolled) return rolled;
  const branched = selectBranchedNotice(s);
  if (branched) return branched;
  if (!s.stopReason || s.stopKind === 'step') return null;
  // An ended branch's end, once loaded, says it (selectEndNotice): not twice.
  if (s.state === 'ended' && selectEndNotice(s) !== null) return null;
  const card = s.held !== null && s.state !== 'running' && s.state !== 'ended';
  if (!card) return s.stopReason;
  return s.stopBreakpoint ? `paused at a breakpoint (${s.stopBreakpoint})` : null;
}

/**
 * What Step and Continue say on a branch that is not live: the way on from the viewed step. When
 * the recorded agent cannot go on (its model endpoint failed), the few words Inject and Sandbox
 * say, pointing at Replay, which says why beside its button: the bar's reason line has two lines,
 * and the whole sentence was cut there at 1024×700 (model-lost, 39 px of text in 26).
 */
export function selectRecordedHint(s: StepperState): string {
  const way = selectWayOn(s);
  return way.againFails !== null ? `${way.what}. ${AGAIN_FAILS_SEE_REPLAY}` : wayOnHint(way);
}

/**
 * The inspector's hint after Step or Continue on a branch that is not live: the way on, under
 * the end line. An episode that ran here says there already that it ended ("This episode was
 * interrupted: …"), so the hint does not say it again; a recorded trace's hint still says it is
 * one, which its end line does not.
 */
export function selectHintBelowEnd(s: StepperState): string {
  return wayOnHint(selectWayOn(s), s.seenLive && selectEndNotice(s) !== null);
}

/** How the open branch, not live, goes on from the viewed step (way-on.ts: one rule for every panel). */
export function selectWayOn(s: StepperState): WayOn {
  // Partial states (a reason asked of a branch not loaded yet) have no rows to look in.
  const rows = s.rows ?? [];
  return wayOnAt({
    viewed: rows.length ? selectViewedRow(s) : null,
    rows,
    seenLive: s.seenLive,
    end: s.live ? null : (s.view?.end ?? null),
  });
}

/** Creates the stepper slice over a client; live events are batched into one update per frame. */
export function createStepperStore(client: StepboxClient, options: StepperOptions = {}): StepperStore {
  const schedule = options.schedule ?? ((flush) => setTimeout(flush, 16));
  const afterPaint = options.afterPaint ?? afterNextPaint;
  let pending: TraceEvent[] = [];
  let scheduled = false;
  // The live fold of the open branch's rows (the shared per-step reducer, event by event).
  let fold: LiveRows = liveRowsOf([]);
  // The verifier's final reward folded live (recorded just before the end): the view's summary
  // has it only after the end's reload.
  let finalReward: number | null = null;
  // Loads in flight may answer out of order (a step's reload, then the end's): only the
  // latest one applies, or an older view without the end and its QA flags overwrites it.
  let loads = 0;
  // The branch last shown and its episode: which episode's files to follow once its view is gone.
  let viewed: { branch: string; episode: string } | null = null;
  // Reads of a live branch's QA flags (readFlags): only the latest applies, and none begun
  // before a load that answered since (the load's view carries flags as new).
  let flagReads = 0;
  // The person's pause switches and breakpoints are theirs for the session, not the branch's:
  // a new episode, fork or reopened branch gets them too (they used to reset on every open).
  let session: { stopPoints: StopPoints; breakpoints: readonly Breakpoint[] } = {
    stopPoints: NO_STOP_POINTS,
    breakpoints: [],
  };
  // The branches this window has had live this session: ended, they are episodes that ran
  // here, not recorded traces opened from the store (StepperState.seenLive).
  const ranHere = new Set<string>();

  const store = createStore<StepperState & StepperActions>()((set, get) => {
    const applyState = (info: EpisodeStateInfo): void => {
      set({ ...stateFields(info), heldError: null });
    };
    const changeHeld = async (op: (id: string) => Promise<Result<EpisodeStateInfo>>): Promise<boolean> => {
      const branch = get().branch;
      if (!branch || !get().held) return false;
      set({ busy: true, heldError: null });
      const res = await op(branch);
      if (get().branch !== branch) return false;
      if (!res.ok) {
        set({ busy: false, heldError: errorText(res) });
        return false;
      }
      set({ busy: false, ...stateFields(res.value) });
      return true;
    };
    const jsonOf = (text: string): { ok: true; value: unknown } | { ok: false } => {
      try {
        return { ok: true, value: JSON.parse(text) };
      } catch (e) {
        set({ heldError: `not valid JSON: ${e instanceof Error ? e.message : String(e)}` });
        return { ok: false };
      }
    };
    const control = async <T>(op: (id: string) => Promise<Result<T>>): Promise<Result<T> | null> => {
      const branch = get().branch;
      if (!branch) return null;
      set({ busy: true, error: null, hint: null });
      const res = await op(branch);
      if (get().branch === branch) set({ busy: false, error: errorText(res) });
      return res;
    };
    const load = async (branch: string, keepSelection: boolean): Promise<void> => {
      // Marks let the UI benchmark split the server's share of opening from the window's.
      performance.mark('stepbox:open-sent');
      const mine = ++loads;
      const res = await client.episode.open({ id: branch, last_rows: FIRST_ROWS });
      performance.mark('stepbox:open-received');
      if (mine !== loads || get().branch !== branch) return;
      if (!res.ok) {
        // A trace that no longer reads (damaged in place while shown) takes its view with it:
        // every panel then says the branch could not be opened, none offers its old steps.
        const gone = res.error.code === 'trace_corrupt';
        set({ ...(gone ? { ...initial, branch } : {}), load: 'error', error: errorText(res) });
        return;
      }
      const v = res.value;
      viewed = { branch, episode: v.summary.episode };
      const from = v.rows_from ?? 0;
      // A reload keeps the earlier rows it has on screen until their fresh pages replace them.
      const firstFresh = v.rows[0]?.step ?? Infinity;
      const older = keepSelection && from > 0 ? get().rows.filter((r) => r.step < firstFresh) : [];
      const rows = older.length ? [...older, ...v.rows] : v.rows;
      pending = [];
      fold = liveRowsOf(rows);
      finalReward = null;
      const live = v.state !== null && v.state.state !== 'ended';
      // Live now, or seen ending live by this window (a run that ends before its first view).
      if (live || get().endSeen !== null) ranHere.add(branch);
      set({
        load: 'ready',
        error: null,
        view: v,
        rows,
        rowsBefore: Math.max(0, from - older.length),
        flags: v.flags,
        branches: v.branches,
        live,
        seenLive: ranHere.has(branch),
        // A reload answered between the release of an ended branch and its end being readable
        // has neither a live state nor the end: the branch still ended (the bar said "none",
        // and the reload on library.changed, which waits for "ended", never came: the end's QA
        // flags were missing, once in a full run under load).
        state: stateOfView(v) ?? (keepSelection && get().state === 'ended' ? 'ended' : null),
        stopReason: v.state ? describeStop(v.state) : null,
        ...stopWhy(v.state),
        // A branch not live shows the person's switches (a recorded one has none to show; they
        // apply to what starts next): ticked a moment ago, they must not look unticked.
        // A live branch just opened gets the session's switches it lacks (carrySession, below):
        // shown ticked at once, not unticked until that answer (a fork read unticked, under load).
        stopPoints:
          v.state && v.state.state !== 'ended'
            ? keepSelection
              ? (v.state.stop_points ?? NO_STOP_POINTS)
              : withSession(v.state.stop_points ?? NO_STOP_POINTS, session.stopPoints)
            : session.stopPoints,
        held: v.state?.held ?? null,
        breakpoints: keepSelection || v.breakpoints.length ? v.breakpoints : session.breakpoints,
        // A reload may bring fewer rows (a step undone): the selection stays within them.
        selectedStep: keepSelection
          ? withinBranch({ rows, rowsBefore: Math.max(0, from - older.length) }, get().selectedStep)
          : null,
        rolledBack: noteFor(v.state?.reason?.rollback ?? get().rolledBack, v),
      });
      performance.mark('stepbox:open-applied');
      if (from > 0) afterPaint(() => void fetchEarlier(branch, mine, from, firstFresh));
      if (!keepSelection) await carrySession(branch, v);
    };
    /**
     * Fetches the rows before index `end` (the first screen's first row, step `fresh`) in
     * pages, nearest first, while this load is the latest; each page replaces the rows (kept
     * from an earlier load) of its steps. Live rows folded meanwhile stay: only earlier steps change.
     */
    const fetchEarlier = async (branch: string, mine: number, end: number, fresh: number): Promise<void> => {
      while (end > 0 && mine === loads && get().branch === branch) {
        const start = Math.max(0, end - ROWS_PAGE);
        const res = await client.episode.rows({ id: branch, from: start, limit: end - start });
        if (mine !== loads || get().branch !== branch) return;
        if (!res.ok) {
          set({ error: `the earlier steps did not load: ${errorText(res)}` });
          return;
        }
        const page = res.value.rows.filter((r) => r.step < fresh);
        const first = page[0]?.step ?? fresh;
        const kept = fold.rows.filter((r) => r.step < first);
        const rows = [...kept, ...page, ...fold.rows.filter((r) => r.step >= fresh)];
        fold = { ...fold, rows };
        set({ rows, rowsBefore: Math.max(0, start - kept.length) });
        end = start;
        fresh = first;
      }
    };
    /** Gives a branch just opened live the session's switches and breakpoints it lacks. */
    const carrySession = async (branch: string, v: EpisodeView): Promise<void> => {
      if (v.state === null || v.state.state === 'ended') return;
      const has = v.state.stop_points ?? NO_STOP_POINTS;
      const missing = (Object.keys(session.stopPoints) as (keyof StopPoints)[]).filter(
        (k) => session.stopPoints[k] && !has[k],
      );
      if (missing.length) {
        const res = await client.episode.setStopPoints({
          id: branch,
          stop_points: Object.fromEntries(missing.map((k) => [k, true])),
        });
        if (get().branch === branch)
          set(
            res.ok
              ? { stopPoints: res.value.stop_points ?? NO_STOP_POINTS }
              : // Refused: the switches the branch really has, and why.
                { stopPoints: has, error: errorText(res) },
          );
      }
      if (v.breakpoints.length === 0 && session.breakpoints.length > 0) {
        const res = await client.episode.setBreakpoints({
          id: branch,
          breakpoints: [...session.breakpoints],
        });
        if (!res.ok && get().branch === branch) set({ error: errorText(res) });
      }
    };
    return {
      ...initial,
      sessionSwitches: () => session,
      async open(branch) {
        pending = [];
        fold = liveRowsOf([]);
        // The note of a rollback waits for the branch it made (checked against its view in load).
        set({ ...initial, rolledBack: get().rolledBack, branch, load: 'loading' });
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
          set({ hint: selectHintBelowEnd(get()), error: null });
          return;
        }
        const res = await control((id) => client.episode.step({ id }));
        if (!res?.ok) return;
        // Like a debugger's current line: a step taken is shown, even when an older row was
        // being read (the view stayed on it and the step seemed to do nothing).
        set({ selectedStep: null });
        applyState(res.value);
      },
      async run() {
        if (get().busy || get().state === 'running') return;
        if (!get().live) {
          set({ hint: selectHintBelowEnd(get()), error: null });
          return;
        }
        const res = await control((id) => client.episode.run({ id }));
        if (!res?.ok) return;
        set({ selectedStep: null });
        applyState(res.value);
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
        session = { ...session, breakpoints: next };
        set({ breakpoints: next, error: null });
        if (!branch || !live) return;
        const res = await client.episode.setBreakpoints({ id: branch, breakpoints: [...next] });
        if (!res.ok) set({ breakpoints, error: errorText(res) });
      },
      async setStopPoint(point, on) {
        const { branch, stopPoints, live } = get();
        session = { ...session, stopPoints: { ...session.stopPoints, [point]: on } };
        set({ stopPoints: { ...stopPoints, [point]: on }, error: null });
        if (!branch || !live) return;
        const res = await client.episode.setStopPoints({ id: branch, stop_points: { [point]: on } });
        if (!res.ok) set({ stopPoints, error: errorText(res) });
        else if (get().branch === branch) set({ stopPoints: res.value.stop_points ?? NO_STOP_POINTS });
      },
      async editArguments(callId, json) {
        const parsed = jsonOf(json);
        if (!parsed.ok) return false;
        if (!parsed.value || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
          set({ heldError: 'the arguments must be a JSON object, like {"command": "ls"}' });
          return false;
        }
        const args = parsed.value as Record<string, unknown>;
        return changeHeld((id) => client.episode.editArguments({ id, call_id: callId, arguments: args }));
      },
      async editAnswer(json) {
        const parsed = jsonOf(json);
        if (!parsed.ok) return false;
        const message = parsed.value as HeldAction['message'];
        return changeHeld((id) => client.episode.editAnswer({ id, message }));
      },
      async replaceResult(callId, text) {
        // The tool never runs for a held call given its result: no exit code (see overrideToResult).
        const result = overrideToResult(text, 'not-run');
        if (typeof result === 'string') {
          set({ heldError: result });
          return false;
        }
        return changeHeld((id) => client.episode.replaceResult({ id, call_id: callId, result }));
      },
      clearHeldError() {
        if (get().heldError !== null) set({ heldError: null });
      },
      explain(message) {
        set({ hint: message, error: null });
      },
      noteRollback(rollback) {
        set({ rolledBack: rollback });
      },
      select(step) {
        set({ selectedStep: withinBranch(get(), step) });
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

  /**
   * Reads the open branch's QA flags again and puts them on its rows. Live rows are folded
   * from trace events, which carry no flags (QA judges the whole trace, on the server): a live
   * episode's flags reached the timeline only with the reload at its end, while the library's
   * count and the inspector, which ask the server, showed them at once.
   */
  const readFlags = async (branch: string): Promise<void> => {
    const mine = ++flagReads;
    const loadsThen = loads;
    const res = await client.episode.flags({ id: branch });
    if (mine !== flagReads || loadsThen !== loads || store.getState().branch !== branch) return;
    // Not worth a message: the next stop or the end reads them again.
    if (!res.ok) return;
    fold = { ...fold, rows: withFlags(fold.rows, res.value.flags) };
    store.setState({ flags: res.value.flags, rows: fold.rows });
  };

  /** Folds the events waiting; true when that asked for a reload (an end, a stale row). */
  const flush = (): boolean => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return false;
    const s = store.getState();
    let end: EndEvent | null = null;
    for (const event of batch) {
      fold = applyEventToRows(fold, event);
      if (event.type === 'reward' && event.final) finalReward = event.total;
      else if (event.type === 'end') end = event;
    }
    const ended = end !== null;
    // A row folded after its step's flags were read (they can answer before its events flush) gets them.
    if (s.flags.length && fold.rows !== s.rows) fold = { ...fold, rows: withFlags(fold.rows, s.flags) };
    store.setState({
      rows: fold.rows,
      live: ended ? false : s.live,
      // The end says itself at once: its verifier and final reward (the timeline's last row and
      // the reward legend) came only with the reload, which may take a while.
      ...(end && s.view ? { view: endedView(s.view, end, finalReward, s.endSeen) } : {}),
    });
    // A closed branch gets its QA flags and final status from the server; an event on a
    // step the view loaded (an injection or terminal command while paused) re-reads it.
    if (!ended && !fold.stale) return false;
    void store.getState().reload();
    return true;
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
    // The events before the end (the last steps' snapshots, the end itself) are folded first:
    // shown ended with them still waiting for the next frame, finished rows read "incomplete".
    const reloading = info.state === 'ended' && pending.length > 0 && flush();
    store.setState(stateFields(info));
    // The end's QA flags and status come with a reload; the state says "ended" even when the
    // end event itself was not seen (it raced the open), so it reloads too.
    if (info.state === 'ended' && was !== 'ended' && !reloading) void store.getState().reload();
  });
  // An ended episode's sandbox is released after its end; the release closes the trace and
  // says so (library.changed). A view loaded before that may lack the flags of the closed
  // trace, so it is read again (from the server's cache when nothing changed). A live one
  // says so each time it stops (a step, a pause): its flags are read again, as the library's are.
  // A recorded branch whose files were written on disk (steps appended by another process or a
  // person, a rewrite, damage) is read again, so its rows follow the file, or its error says why.
  const offLibrary = client.onLibraryChanged(({ episode, on_disk }) => {
    const s = store.getState();
    // The episode of the open branch, also once its view went with a trace that stopped reading.
    const open = s.view?.summary.episode ?? (viewed?.branch === s.branch ? viewed.episode : undefined);
    if (s.branch === null || open === undefined) return;
    if (!s.live && on_disk?.includes(open) && (s.load === 'ready' || s.load === 'error')) {
      void s.reload();
      return;
    }
    if (s.load !== 'ready' || open !== episode) return;
    if (s.state === 'ended') void s.reload();
    else if (s.live) void readFlags(s.branch);
  });
  return store;
}

/**
 * A view as its branch's end makes it, before the reload brings the server's: the end (its
 * verifier), the summary's status and final reward (the one the timeline's last row and the
 * reward legend show).
 */
function endedView(
  v: EpisodeView,
  end: EndEvent,
  finalReward: number | null,
  seen: StopEnd | null,
): EpisodeView {
  const detail = seen?.detail;
  return {
    ...v,
    end: {
      status: end.status,
      end_reason: end.end_reason,
      ...(detail !== undefined ? { detail } : {}),
      verifier: end.verifier,
    },
    summary: { ...v.summary, status: end.status, final_reward: finalReward ?? v.summary.final_reward },
  };
}

/** A rollback's note while the view is the branch rolled back or the branch it made; else dropped. */
function noteFor(note: RolledBack | null, v: EpisodeView): RolledBack | null {
  if (note === null) return null;
  const { branch, parent_branch, fork_step } = v.summary;
  return branch === note.from || (parent_branch === note.from && fork_step === note.to_step) ? note : null;
}

/** The branch's stop points with the session's switched on too (what carrySession will set). */
function withSession(has: StopPoints, session: StopPoints): StopPoints {
  const out = { ...has };
  for (const k of Object.keys(session) as (keyof StopPoints)[]) if (session[k]) out[k] = true;
  return out;
}

/**
 * The stepper state a loaded view shows: the live controller's, else `ended` when the trace
 * has its end. The end's own reload reaches the server after it released the sandbox (the
 * view has no live state then), and a run started at once may end before the window opens
 * it: either way the branch ended, and the bar must not fall back to "no episode".
 */
/**
 * The status the bar shows for a branch that is not live: its end's, its summary's, or the end
 * this window saw it reach while the trace's end is not readable yet; "recorded" when none says.
 */
export function selectRecordedStatus(s: Pick<StepperState, 'view' | 'endSeen'>): string {
  return s.view?.end?.status ?? s.view?.summary.status ?? s.endSeen?.status ?? 'recorded';
}

export function stateOfView(v: EpisodeView): ControllerState | null {
  return v.state?.state ?? (v.end ? 'ended' : null);
}

/** The fields a live state sets: state, why it stopped, the stop points and the held step. */
function stateFields(info: EpisodeStateInfo): Partial<StepperState> {
  return {
    state: info.state,
    stopReason: describeStop(info),
    ...(info.state === 'ended' && info.reason?.end ? { endSeen: info.reason.end } : {}),
    ...stopWhy(info),
    live: info.state !== 'ended',
    ...(info.stop_points ? { stopPoints: info.stop_points } : {}),
    held: info.state === 'ended' ? null : (info.held ?? null),
    // The rollback that paused it says what it dropped (the notice on the branch it made).
    ...(info.reason?.rollback ? { rolledBack: info.reason.rollback } : {}),
  };
}

/**
 * The rows as the timeline shows them: the step paused inside (decided, not yet run)
 * shows the calls it is about to make, waiting, where its recorded row has none yet.
 */
export function rowsWithHeld(rows: readonly StepRow[], held: HeldAction | null): readonly StepRow[] {
  if (!held || rows.length === 0) return rows;
  const last = rows[rows.length - 1];
  // A recorded row's decided calls (`not_run`) give way to the held ones: those are the latest edit.
  if (last.step !== held.step || (last.tools.length > 0 && !last.not_run)) return rows;
  const summary =
    held.calls.length > 0
      ? `waiting to run: ${held.calls.map((c) => callDetail(c.name, c.arguments)).join(' ; ')}`
      : held.final !== null
        ? `waiting: ${held.final}`
        : 'waiting for the answer to be given to the agent';
  return [
    ...rows.slice(0, -1),
    { ...last, tools: held.calls.map((c) => c.name), summary, status: 'pending' },
  ];
}

/**
 * The step the sandbox is at: the latest. (A rollback moves the window onto the branch it
 * makes at the step, so a live branch's last row is where its sandbox is.)
 */
export function selectCurrentStep(s: StepperState): number {
  return selectLastStep(s);
}

/** The row of the step the sandbox is at (see {@link selectCurrentStep}); null before any row. */
export function selectCurrentRow(s: StepperState): StepRow | null {
  return s.rows.length ? s.rows[s.rows.length - 1]! : null;
}

/**
 * The step a selection may name: one the branch has. Past the last step it is the last (a
 * "show step 2" of a branch that ends at step 1 left the inspector, the replay ("step 2 / 1")
 * and candidates describing a step that does not exist), before the first the first; with no
 * rows yet, none (null: the latest, once they come). Every way a step is selected goes here.
 */
export function withinBranch(
  s: Pick<StepperState, 'rows' | 'rowsBefore'>,
  step: number | null,
): number | null {
  if (step === null) return null;
  if (s.rows.length === 0) return null;
  return Math.max(selectFirstStep(s), Math.min(selectLastStep(s), step));
}

/** The step the views show: the selected one, or the current one (see {@link selectCurrentStep}). */
export function selectViewedStep(s: StepperState): number | null {
  if (s.selectedStep !== null) return s.selectedStep;
  const rows = s.rows;
  return rows.length ? selectCurrentStep(s) : null;
}

/** The branch's first step (0, the setup row, while earlier rows are still arriving). */
export function selectFirstStep(s: Pick<StepperState, 'rows' | 'rowsBefore'>): number {
  return s.rowsBefore > 0 || s.rows.length === 0 ? 0 : s.rows[0].step;
}

/** How many decisions the branch has (step 0, the setup row, is not one), rows still arriving included. */
export function selectDecisionCount(s: StepperState): number {
  const total = s.rowsBefore + s.rows.length;
  // Rows still arriving begin with the setup row; else the first loaded row says (the filter's count reads the same rule).
  return total > 0 && (s.rowsBefore > 0 || isSetupRow(s.rows[0])) ? total - 1 : total;
}

/**
 * The rows at the end with no snapshot (a step held before it runs, still running, or that
 * never finished): the timeline says "1 step, 1 waiting", as the library does (its count is
 * branch-outcome's), not "2 steps" when one had finished.
 */
export function selectUnfinishedCount(s: Pick<StepperState, 'rows'>): number {
  let n = 0;
  for (let i = s.rows.length - 1; i >= 0 && s.rows[i].step >= 1 && !s.rows[i].snapshot; i--) n++;
  return n;
}

/**
 * Whether "latest" is offered: a step before the last is viewed. At the last step it promised a
 * newer one that is not there ("step 3 / 3 … latest"); a step taken is followed anyway.
 */
export function selectOffersLatest(s: StepperState): boolean {
  const viewed = s.selectedStep;
  return viewed !== null && viewed < selectLastStep(s);
}

/** The last step recorded so far (0 when none). */
export function selectLastStep(s: Pick<StepperState, 'rows'>): number {
  return s.rows.length ? s.rows[s.rows.length - 1].step : 0;
}

/**
 * A branch asked for whose view has not arrived: not yet known to be live or recorded. Read
 * as "not live", a case's run just started said "recorded" in the toolbar, "This episode has
 * ended" in Inject and "recorded trace" in the terminal for its first moment.
 */
export function selectOpening(s: StepperState): boolean {
  return s.branch !== null && s.load === 'loading' && s.view?.summary.branch !== s.branch;
}

/**
 * Inject has a form to show: a live branch is open. A recorded trace, an ended episode, a branch
 * that could not be opened (or none) shows a sentence and at most a button, so its pane is drawn
 * at their height and the inspector above takes the rest (app.tsx).
 */
export function selectInjectEditable(s: Pick<StepperState, 'branch' | 'live'>): boolean {
  return s.branch !== null && s.live;
}

/** True when a live branch is shown at an earlier step than the one its sandbox is at. */
export function selectViewingHistory(s: StepperState): boolean {
  return s.selectedStep !== null && s.selectedStep !== selectCurrentStep(s);
}

/**
 * A branch just made live at step K (a fork, a reopen or a rollback) that has taken no step
 * yet: where it came from, or null. It is paused there, holding step K (issue 33, item 3:
 * after "Reopen live here" a person saw the recorded steps and "idle", and thought nothing happened).
 */
export function selectBranchedFrom(s: StepperState): { parent: string; step: number } | null {
  const summary = s.view?.summary;
  if (!s.live || !summary || summary.parent_branch === null || summary.fork_step === null) return null;
  // Not stepped since it was made: idle (a fork, a reopen) or paused by the rollback that made
  // it (a stop inside a step says its own reason; its decided step has a row past K anyway).
  if (s.state !== 'idle' && s.state !== 'paused') return null;
  if (s.held !== null || selectLastStep(s) !== summary.fork_step) return null;
  return { parent: summary.parent_branch, step: summary.fork_step };
}

/**
 * A live branch's state in the bar's word. One waiting before its first step here waits for
 * the person: a start at step 0 reads "paused at step 0" as a fork, reopen or rollback at K
 * reads "paused at step K" (issue 33, item 3). "idle" (the controller's state before a first
 * step) read as nothing happening, and a Harbor task's start was reported for it.
 */
export function selectStateText(s: StepperState): string {
  const branched = selectBranchedFrom(s);
  if (branched !== null) return `paused at step ${branched.step}`;
  if (s.state === 'idle') return `paused at step ${selectLastStep(s)}`;
  // The controller runs, but nothing happens until the person decides (it read "running · working…").
  if (selectWaitsForPerson(s)) return 'waiting for you';
  return s.state ?? 'paused';
}

/**
 * The agent waits for the person to decide the next step (a manual agent, asked): the branch
 * runs, and no decision for a step under way has come (its row would be pending). Once the
 * person sends one, the step runs: "running" again until it is done.
 */
export function selectWaitsForPerson(s: StepperState): boolean {
  if (!s.live || s.state !== 'running' || s.held !== null || !selectPersonDecides(s)) return false;
  return s.rows.at(-1)?.status !== 'pending';
}

/**
 * "working…" beside the bar's word while a stepper action waits for its answer; not while the
 * agent waits for the person, and never once the branch ended: a Stop's answer comes after the
 * sandbox is given back, and the bar read "interrupted · working…" meanwhile.
 */
export function selectWorkingText(s: StepperState): string | null {
  if (!s.busy || !s.live || s.state === 'ended') return null;
  return selectWaitsForPerson(s) ? null : 'working…';
}

/**
 * A live branch a rollback just made at step K (see {@link selectBranchedFrom}): its parent
 * closed as rolled back to K. With how many of the parent's steps it left behind, and what of
 * step K did not come along (noted at the click), or null.
 */
export function selectRolledBackFrom(
  s: StepperState,
): { parent: string; step: number; undone: number; dropped: RollbackDropped } | null {
  const from = selectBranchedFrom(s);
  if (!from) return null;
  const parent = s.branches.find((b) => b.branch === from.parent);
  if (!parent || parent.end_reason !== `rolled_back_to_${from.step}`) return null;
  const note = s.rolledBack?.from === from.parent && s.rolledBack.to_step === from.step ? s.rolledBack : null;
  return {
    ...from,
    undone: Math.max(0, parent.steps - from.step),
    dropped: note?.dropped ?? NOTHING_DROPPED,
  };
}

/**
 * What a rollback did and what Step and Continue do next, in a few short sentences (null when no
 * rollback just happened). Every fact a person acts on is here; how and why (what was restored,
 * why a message or a command is gone) is {@link selectRollbackDetails}, behind a disclosure: said
 * whole in one paragraph it ran 9 lines at 1024×700.
 */
export function selectRollbackNotice(s: StepperState): string | null {
  const r = selectRolledBackFrom(s);
  if (!r) return null;
  const k = r.step;
  const last = k + r.undone;
  // The parent by its name in the tree (`main`, `fork 2 at step 1`): an id read as noise here.
  const parent = branchNameOf(r.parent, s.branches);
  // What happened to the steps after k, said as such ("Step 2 stays in fork 2 at step 1's
  // trace" read as a riddle): undone on this branch, kept on its parent.
  const left =
    r.undone > 0
      ? ` ${r.undone > 1 ? `Steps ${k + 1}–${last} are` : `Step ${last} is`} undone here; ${parent} keeps ${r.undone > 1 ? 'them' : 'it'}.`
      : '';
  // What a person put in after snapshot k (messages, overrides, typed commands: after step k
  // itself or a later one) is not in the branch that starts from it, counted by step as the
  // engine cut it; nothing is said when nothing was dropped. The why is in the details.
  const dropped = droppedSentence(r.dropped);
  return `Rolled back to step ${k}: a new live branch from ${parent}, paused at step ${k}.${left} Step (F10) or Continue (F5) to go on.${dropped ? ` ${dropped}` : ''}`;
}

/**
 * The how and why of the rollback said by {@link selectRollbackNotice}: what was restored, and
 * why an injected message or typed commands are not in the new branch (null when no rollback).
 */
export function selectRollbackDetails(s: StepperState): string | null {
  const r = selectRolledBackFrom(s);
  if (!r) return null;
  const k = r.step;
  const phrases = droppedPhrases(r.dropped);
  const why = phrases.length
    ? ` Recorded after snapshot ${k}, which this branch starts from, so not in it: ${phrases.join('; ')}.`
    : '';
  return `Snapshot ${k} was restored in the same sandbox: the files, memory, conversation, and the shell's directory and environment as they were after step ${k}; leftover processes were stopped and /tmp cleared. Nothing is lost: ${branchNameOf(r.parent, s.branches)} keeps its whole trace (open it in the branch tree).${why}`;
}

/**
 * What a branch just made live at step K is, in plain words: what happened (a new branch, with
 * its parent's steps, in a fresh sandbox), how to go on, and where the parent is (see
 * {@link selectBranchedFrom}). "goes on from there; main stays as recorded" said neither plainly.
 */
export function selectBranchedNotice(s: StepperState): string | null {
  const from = selectBranchedFrom(s);
  if (!from) return null;
  const parent = branchNameOf(from.parent, s.branches);
  const inherited =
    from.step === 0
      ? "it starts from the task's setup"
      : from.step === 1
        ? `a copy of ${parent}'s step 1`
        : `a copy of ${parent}'s steps 1–${from.step}`;
  return `New live branch at step ${from.step}, from ${parent}: ${inherited}, in a fresh sandbox. Step (F10) or Continue (F5) to go on. ${parent} is kept as it was: pick it in the timeline's branch tree to go back.`;
}

/**
 * The person moved the open branch on between two states: a stepper action began (Step,
 * Continue, Pause, Stop, a change of the held step), the branch started running, a step
 * stopped inside, or a step was added. Not the branch's own load (a fork's rows arriving).
 * What was said about the moment before (the Replay pane's "rolled back … now on …") is past.
 */
export function selectMovedOn(prev: StepperState, s: StepperState): boolean {
  if (s.branch === null || s.branch !== prev.branch || prev.load !== 'ready' || s.load !== 'ready')
    return false;
  return (
    (s.busy && !prev.busy) ||
    (s.state === 'running' && prev.state !== 'running') ||
    (s.held !== null && s.held !== prev.held) ||
    selectLastStep(s) > selectLastStep(prev)
  );
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
