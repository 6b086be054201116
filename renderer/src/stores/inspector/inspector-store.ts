import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { StepDetail } from '../../../../shared/contract/models';
import type { TraceEvent } from '../../../../shared/trace-events';
import { decidedMessage, jsonOr } from '../../../../shared/step-summary';
import { errorMarkText } from '../../../../shared/end-words';
import { MAX_STEP_DETAILS } from '../../../../shared/contract/operation-names';
import { errorText } from '../result';
import type { DetailWanted } from './details-ahead';
import { NOT_OPENED } from '../stepper/why-not-now';

/** The inspector's tabs. */
export type InspectorTab = 'call' | 'output' | 'files' | 'request' | 'memory' | 'agent';

/**
 * Each tab's name, and the shorter one a narrow inspector shows (the tooltip keeps the name):
 * the inspector's tabs and a walkthrough that names one ("Inspector → Files tab") read this.
 */
export const INSPECTOR_TABS: readonly (readonly [InspectorTab, string, string])[] = [
  ['call', 'Call', 'Call'],
  ['output', 'Output', 'Output'],
  ['files', 'Files', 'Files'],
  ['memory', 'Memory', 'Memory'],
  ['request', 'Model request', 'Request'],
  ['agent', 'Agent output', 'Agent'],
];

/**
 * The tab shown: the one chosen, unless the open episode has no such tab (“Agent output”
 * exists only for an agent program of the person's own, exec:): then Call, so the next
 * episode's call is not hidden behind an empty tab. The choice is kept for the next episode
 * that has the tab.
 */
export function selectShownTab(tab: InspectorTab, hasAgentOutput: boolean): InspectorTab {
  return tab === 'agent' && !hasAgentOutput ? 'call' : tab;
}

/**
 * What the inspector says with no step to show: "Select a step" only where there are steps to
 * select. With no episode open it says so, and nothing while the stepper's hint above says it
 * (F10 on the first load showed "No episode is open…" over "Select a step in the timeline").
 */
export function selectInspectorEmpty(s: {
  readonly branch: string | null;
  readonly hint: string | null;
  readonly load?: string;
}): string | null {
  if (s.branch !== null && s.load === 'error') return `Nothing to inspect: ${NOT_OPENED}.`;
  if (s.branch !== null) return 'Select a step in the timeline to inspect its tool call.';
  return s.hint !== null ? null : 'No episode open: its steps show here once you start one.';
}

/** A step decided and never run: what it would have run, and why it did not, in words. */
export interface NeverRan {
  readonly text: string;
  /** The calls decided (a person's edit of them, if any), arguments parsed where they are JSON. */
  readonly calls: readonly { readonly name: string; readonly arguments: unknown }[];
  /** The decided answer's text (a final answer, or calls written as text), or null. */
  readonly content: string | null;
}

/**
 * What the Call and Output tabs and What if… say of a step without a call that ran: its calls
 * were refused before running (a parse error: an unknown tool, bad arguments; the reason is in
 * the step's lines above the tabs), the agent answered instead (its final answer, above the tabs
 * too), or it made none. They said "No tool call in step 1" beside a row naming the refused
 * call, and "No tool call in step 4" under the agent's final answer.
 */
export function noCallText(detail: StepDetail): { readonly tab: string; readonly whatIf: string } {
  const n = detail.step;
  if (detail.parse_error !== null)
    return {
      tab: `Step ${n}'s call was refused before it ran (why: above), so no tool ran and the sandbox did not change.`,
      whatIf: `What if…: step ${n}'s call was refused before it ran; no tool ran.`,
    };
  // The agent answered instead of calling a tool: the episode's last step, its answer above.
  if (detail.final !== null)
    return {
      tab: `Step ${n} is the agent's final answer (above): it called no tool, so no tool ran and the sandbox did not change.`,
      whatIf: `What if…: step ${n} is the agent's final answer; no tool ran.`,
    };
  // Something failed before the agent decided (the model call, the script): the step's mark
  // says it in the timeline; the tab said only "No tool call", as of an agent that chose none.
  const failed = detail.events.find((e) => e.type === 'error');
  if (failed?.type === 'error') {
    const why = failed.fatal ? 'why: above' : failed.message;
    return {
      tab: `Step ${n} made no tool call: ${errorMarkText(failed.code)} (${why}), so no tool ran and the sandbox did not change.`,
      whatIf: `What if…: step ${n} made no tool call (${errorMarkText(failed.code)}).`,
    };
  }
  return { tab: `No tool call in step ${n}.`, whatIf: `What if…: step ${n} made no tool call.` };
}

/**
 * A step whose decision is recorded (its `model_output`) but that never ran: it was held
 * inside the step (paused before its tools or its answer) when the episode ended (a stop, an
 * idle release). No `action`, no call, no result: the inspector said "No tool call in step 2"
 * with the held call in the trace. Null for any step that ran, or while it is held (the card
 * says it then).
 */
export function selectNeverRan(detail: StepDetail | null): NeverRan | null {
  if (!detail || detail.step === 0 || detail.calls.length > 0) return null;
  if (detail.final !== null || detail.parse_error !== null) return null;
  if (detail.events.some((e) => e.type === 'action' || e.type === 'parse_error')) return null;
  let output: Extract<TraceEvent, { type: 'model_output' }> | null = null;
  let edit: Extract<TraceEvent, { type: 'edit' }> | null = null;
  for (const e of detail.events) {
    if (e.type === 'model_output') output = e;
    else if (e.type === 'edit') edit = e;
  }
  if (!output) return null;
  // What would have run: a person's last edit of the held answer, else the model's.
  const message = decidedMessage(edit ? edit.edited : output.message) ?? { content: output.raw, calls: [] };
  const calls = message.calls.map((c) => ({ name: c.name, arguments: jsonOr(c.arguments) }));
  const what = calls.length ? (calls.length > 1 ? 'these calls' : 'this call') : 'this answer';
  return {
    text: `Step ${detail.step} never ran: the agent decided ${what}, and the episode ended while the step was paused before it ran, so no tool ran and the sandbox did not change.`,
    calls,
    content: message.content ? message.content : null,
  };
}

/** The tool-call inspector: the viewed step's detail, the tab, the file being diffed. */
export interface InspectorState {
  readonly branch: string | null;
  readonly step: number | null;
  readonly detail: StepDetail | null;
  /** `running`: the step is being recorded and has nothing to show yet (not an error). */
  readonly load: 'idle' | 'loading' | 'running' | 'ready' | 'error';
  readonly error: string | null;
  readonly tab: InspectorTab;
  readonly diffPath: string | null;
}

/** What the inspector does. */
export interface InspectorActions {
  /**
   * Shows a step; `final` says the step is complete and its detail can be cached, under
   * `revision` (what the row shows: an injection or a person's command at a complete
   * step changes it, and the cached detail with it).
   */
  show(branch: string | null, step: number | null, final: boolean, revision?: string): Promise<void>;
  /**
   * Fetches ahead the details of complete steps not held yet (the nearest in a call of their
   * own, beside at most one call in flight; with more out, only the latest wish waits to be
   * fetched next, as while scrubbing), so showing them needs no call. `now`: the first of
   * `wanted` is the step on screen, not held: its call goes out at once, in a slot kept for it
   * beside the calls fetching ahead.
   */
  prefetch(branch: string, wanted: readonly DetailWanted[], now?: boolean): Promise<void>;
  /** True when a complete step's detail is held (showing it needs no call). */
  holds(branch: string, step: number, revision: string): boolean;
  setTab(tab: InspectorTab): void;
  setDiffPath(path: string | null): void;
  /** Forgets cached details (after a rollback or reload). */
  invalidate(): void;
  /**
   * Another branch is on screen: the tab chosen for the one left is kept with it, and this one
   * opens on the tab kept for it, or Call (its goal and limits at step 0). A new episode opened
   * on whatever tab was used last, often Output's "This step ran no tool."
   */
  follow(branch: string | null): void;
}

/** The inspector slice. */
export type InspectorStore = StoreApi<InspectorState & InspectorActions>;

const CACHE_MAX = 200;
/**
 * The nearest steps of a wish go first, in a call of their own: the server answers a step in
 * about a millisecond, and a click just beside the viewed row, right after a move, waits for the
 * call that brings it (24 at once kept it waiting for all of them).
 */
const AHEAD_FIRST = 6;
/**
 * Fetch-ahead calls out at once: a far slider move's wish goes out beside the call still
 * bringing the last wish's (a click beside the row moved to waited for both answers, one after
 * the other, on a loaded machine: issue 33.9); while scrubbing, later wishes wait (the latest
 * one only), so a held → never floods the server.
 */
const AHEAD_CALLS = 2;
/**
 * One more call for the step on screen when it is not held, with its nearest neighbours: it
 * waited behind the calls still bringing an earlier wish's farther steps, and `show` asked for
 * it alone meanwhile, so a click beside it, right after a far slider move, waited for a second
 * round trip on a busy server (issue 33.9). One slot, not one per move: a drag's moves beyond
 * it are shown by `show`'s own calls (one at a time, the latest wins).
 */
const NOW_CALLS = 1;

/** The cache key of a step's detail: its branch, its step and what its row showed. */
function keyOf(branch: string, step: number, revision: string): string {
  return `${branch}:${step}:${revision}`;
}

/** Creates the inspector slice; complete steps' details are cached (scrubbing stays fast). */
export function createInspectorStore(client: StepboxClient): InspectorStore {
  const cache = new Map<string, StepDetail>();
  const put = (key: string, detail: StepDetail): void => {
    cache.delete(key);
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(key, detail);
  };
  let inFlight = false;
  let wanted: { branch: string; step: number; final: boolean; key: string } | null = null;
  // Read through a function: the loop below sets `wanted` to null, and the narrowing stays.
  const askedAgain = (want: { branch: string; step: number }): boolean =>
    wanted !== null && wanted.branch === want.branch && wanted.step === want.step;
  // Forgotten details stay forgotten: an answer asked for before `invalidate` is dropped.
  let generation = 0;
  // The tab chosen per branch (follow), and the branch on screen.
  const tabs = new Map<string, InspectorTab>();
  let shownBranch: string | null = null;
  // The fetch-ahead calls in flight (the keys each brings) and the wish waiting behind them.
  interface AheadCall {
    readonly keys: ReadonlySet<string>;
    readonly done: Promise<void>;
  }
  let ahead: AheadCall[] = [];
  const aheadWith = (key: string): AheadCall | undefined => ahead.find((c) => c.keys.has(key));
  let nextAhead: { branch: string; wanted: readonly DetailWanted[] } | null = null;
  const fetchAhead = (branch: string, todo: readonly DetailWanted[]): Promise<void> => {
    const mine = generation;
    const keys = new Set(todo.map((w) => keyOf(branch, w.step, w.revision)));
    const done = client.episode
      .stepDetails({ id: branch, steps: todo.map((w) => w.step) })
      .then((res) => {
        // A refusal costs nothing but the time: the step is fetched when shown, as before.
        if (!res.ok || mine !== generation) return;
        const revisions = new Map(todo.map((w) => [w.step, w.revision]));
        for (const d of res.value.details) {
          const revision = revisions.get(d.step);
          if (revision !== undefined) put(keyOf(branch, d.step, revision), d);
        }
      })
      .finally(() => {
        ahead = ahead.filter((c) => c !== call);
        const next = nextAhead;
        nextAhead = null;
        if (next) void store.getState().prefetch(next.branch, next.wanted);
      });
    const call: AheadCall = { keys, done };
    ahead = [...ahead, call];
    return done;
  };
  const store = createStore<InspectorState & InspectorActions>()((set, get) => ({
    branch: null,
    step: null,
    detail: null,
    load: 'idle',
    error: null,
    tab: 'call',
    diffPath: null,
    async show(branch, step, final, revision = '') {
      if (branch === null || step === null || step < 0) {
        wanted = null;
        set({ branch, step, detail: null, load: 'idle', error: null });
        return;
      }
      const key = keyOf(branch, step, revision);
      const hit = final ? cache.get(key) : undefined;
      if (hit) {
        wanted = null;
        set({
          branch,
          step,
          detail: hit,
          load: 'ready',
          error: null,
          diffPath: firstFile(hit, get().diffPath),
        });
        return;
      }
      set({ branch, step, load: 'loading', error: null });
      wanted = { branch, step, final, key };
      // One request in flight: while scrubbing fast only the step last asked for is fetched next.
      if (inFlight) return;
      inFlight = true;
      try {
        while (wanted) {
          const want = wanted;
          wanted = null;
          // On its way with the steps fetched ahead: that answer, not a second call behind it.
          const bringing = want.final && !cache.has(want.key) ? aheadWith(want.key) : undefined;
          if (bringing) await bringing.done;
          // Held by now: brought by that call, or by one that came in while this loop waited
          // for the step asked before it (a click right after a slider move: the move's call
          // brought the clicked step, and a second call for it waited a server round trip).
          const got = want.final ? cache.get(want.key) : undefined;
          if (got) {
            if (get().branch === want.branch && get().step === want.step)
              set({ detail: got, load: 'ready', diffPath: firstFile(got, get().diffPath) });
            continue;
          }
          const res = await client.episode.stepDetail({ id: want.branch, step: want.step });
          if (res.ok && want.final) put(want.key, res.value);
          if (get().branch !== want.branch || get().step !== want.step) continue;
          // The step was asked for again meanwhile (its row changed: its result came, its
          // snapshot): this answer is older than the row on screen, and the next one answers.
          // Shown, a step the timeline marked "ok" said "no result yet (the call is pending)".
          if (askedAgain(want)) continue;
          if (res.ok)
            set({ detail: res.value, load: 'ready', diffPath: firstFile(res.value, get().diffPath) });
          // A step still being recorded may not be readable yet: it is running, not missing.
          else if (!want.final && res.error.code === 'not_found')
            set({ load: 'running', error: null, detail: null });
          else set({ load: 'error', error: errorText(res), detail: null });
        }
      } finally {
        inFlight = false;
      }
    },
    async prefetch(branch, wanted, now = false) {
      const todo = wanted
        .filter((w) => {
          const key = keyOf(branch, w.step, w.revision);
          return !cache.has(key) && !aheadWith(key);
        })
        .slice(0, MAX_STEP_DETAILS);
      if (todo.length === 0) return;
      // A few calls at a time: a later wish replaces the one waiting (scrubbing asks at every step).
      const slots = AHEAD_CALLS + (now && todo[0] === wanted[0] ? NOW_CALLS : 0);
      if (ahead.length >= slots) {
        nextAhead = { branch, wanted };
        return;
      }
      // The rest of this wish follows, unless a later one takes its place meanwhile: the rest,
      // never what this call asks for. A step the server refuses or leaves out (not readable
      // yet, or past the branch's end) stays uncached, and the whole wish sent again would ask
      // for it again, call after call, for as long as the window stayed open.
      const first = todo.slice(0, AHEAD_FIRST);
      if (todo.length > AHEAD_FIRST) {
        const asked = new Set(first.map((w) => w.step));
        nextAhead = { branch, wanted: wanted.filter((w) => !asked.has(w.step)) };
      }
      await fetchAhead(branch, first);
    },
    holds: (branch, step, revision) => cache.has(keyOf(branch, step, revision)),
    setTab: (tab) => set({ tab }),
    setDiffPath: (diffPath) => set({ diffPath }),
    invalidate() {
      generation++;
      cache.clear();
    },
    follow(branch) {
      if (branch === shownBranch) return;
      if (shownBranch !== null) tabs.set(shownBranch, store.getState().tab);
      shownBranch = branch;
      set({ tab: (branch !== null ? tabs.get(branch) : undefined) ?? 'call' });
    },
  }));
  return store;
}

/** Keeps the diffed file when the new step changed it too, else the step's first file. */
function firstFile(detail: StepDetail, current: string | null): string | null {
  if (current && detail.files.some((f) => f.path === current)) return current;
  return detail.files[0]?.path ?? null;
}
