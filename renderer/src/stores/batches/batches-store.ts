import { createStore, type StoreApi } from 'zustand/vanilla';
import type { StepboxClient } from '../../../../shared/contract/client';
import type { BatchSlotView, BatchView, TaskSource } from '../../../../shared/contract/models';
import { errorText } from '../result';
import { rangeProblems, type CountRange } from '../../model/count-range';

/** “episodes” of each task: 1 to 1000 (batch.start `episodes`). */
export const BATCH_EPISODES: CountRange = { name: 'episodes', min: 1, max: 1000 };
/** “at once”: 1 to 16 sandboxes at a time (batch.start `concurrency`). */
export const BATCH_CONCURRENCY: CountRange = { name: 'at once', min: 1, max: 16 };

/** Everything out of range in the batch form, or null: a batch is refused, never clamped, while it is. */
export function selectBatchProblem(s: { readonly form: BatchForm }): string | null {
  return rangeProblems([
    [s.form.episodes, BATCH_EPISODES],
    [s.form.concurrency, BATCH_CONCURRENCY],
  ]);
}

/**
 * Why ▶ Run batch cannot start, naming every blocker (the bad numbers first, then the missing
 * tasks), or null: fixing the one said and finding another behind it wastes a round.
 */
export function selectBatchStartWhy(s: {
  readonly form: BatchForm;
  readonly starting: boolean;
}): string | null {
  if (s.starting) return 'Starting the batch…';
  const whys = [selectBatchProblem(s), s.form.tasks.length === 0 ? 'Choose at least one task above.' : null];
  const held = whys.filter((w) => w !== null);
  return held.length ? held.join(' ') : null;
}

/** The batch form: which tasks (`sample:ID` or `case:ID`), the agent, how many of each, how many at once. */
export interface BatchForm {
  readonly tasks: readonly string[];
  /** Agent spec; empty: the task's own. */
  readonly agent: string;
  readonly episodes: number;
  readonly concurrency: number;
}

/** Batches: the form, every batch known (running ones live), the one shown. */
export interface BatchesState {
  readonly form: BatchForm;
  /** Newest first. */
  readonly batches: readonly BatchView[];
  /** The batch whose slots are shown (the one just started, or one picked). */
  readonly selected: string | null;
  readonly starting: boolean;
  /** What the last action (start, cancel, resume) met; a read of the list leaves it. */
  readonly error: string | null;
  /**
   * Why the list could not be read, null once it is: apart from {@link error}, which a list read
   * that came back well cleared (a start's refusal went with the next refresh).
   */
  readonly listError: string | null;
  /**
   * Bumped by {@link BatchesActions.reveal}: the section brings the shown batch into view and
   * focuses it (the section sits at the library's foot, often scrolled out of view).
   */
  readonly revealed: number;
}

/** What the batches section does. */
export interface BatchesActions {
  refresh(): Promise<void>;
  setForm(patch: Partial<BatchForm>): void;
  /** Starts a batch from the form; returns its id, or null on failure. */
  start(): Promise<string | null>;
  cancel(batch: string): Promise<void>;
  /** Runs a stopped batch's unfinished slots again (see {@link selectCanResume}). */
  resume(batch: string): Promise<void>;
  select(batch: string | null): void;
  /** Shows `batch` and asks the section to bring it into view (the batch-end notice's "Show the batch"). */
  reveal(batch: string): void;
  /** Opens a slot's episode in the timeline (no-op before it has one). */
  openSlot(slot: BatchSlotView): void;
  dispose(): void;
}

/** The batches slice. */
export type BatchesStore = StoreApi<BatchesState & BatchesActions>;

/** `sample:ID` / `case:ID` → the contract's task source (null when the form has none). */
export function taskSourceOf(key: string): TaskSource | null {
  const m = /^(sample|case):(.+)$/.exec(key);
  return m ? { kind: m[1] as 'sample' | 'case', id: m[2] } : null;
}

/** Puts a batch's newest view in the list (replacing its older one), newest batch first. */
export function upsertBatch(list: readonly BatchView[], view: BatchView): BatchView[] {
  return [view, ...list.filter((b) => b.batch !== view.batch)].sort((a, b) => b.created - a.created);
}

/** Creates the batches slice; `onOpen` receives the episode of a clicked slot. */
export function createBatchesStore(
  client: StepboxClient,
  onOpen: (episode: string) => void = () => {},
): BatchesStore {
  let generation = 0;
  const store = createStore<BatchesState & BatchesActions>()((set, get) => ({
    form: { tasks: [], agent: '', episodes: 2, concurrency: 2 },
    batches: [],
    selected: null,
    starting: false,
    error: null,
    listError: null,
    revealed: 0,
    async refresh() {
      const mine = ++generation;
      const res = await client.batch.list({});
      if (mine !== generation) return;
      if (res.ok)
        set({ batches: [...res.value.batches].sort((a, b) => b.created - a.created), listError: null });
      else set({ listError: `Could not read the batches: ${errorText(res)}` });
    },
    setForm(patch) {
      set({ form: { ...get().form, ...patch } });
    },
    async start() {
      const { form } = get();
      const tasks = form.tasks.map(taskSourceOf).filter((t): t is TaskSource => t !== null);
      if (tasks.length === 0) {
        set({ error: 'choose at least one task for the batch' });
        return null;
      }
      const problem = selectBatchProblem(get());
      if (problem) {
        set({ error: problem });
        return null;
      }
      set({ starting: true, error: null });
      const agent = form.agent.trim();
      const res = await client.batch.start({
        tasks,
        episodes: form.episodes,
        concurrency: form.concurrency,
        ...(agent ? { agent } : {}),
      });
      set({ starting: false });
      if (!res.ok) {
        // The engine's words are the CLI's (--agent, agent spec): said with the form's field names.
        set({ error: errorText(res) });
        return null;
      }
      set({ selected: res.value.batch });
      const view = await client.batch.get({ batch: res.value.batch });
      // A progress event may have brought a newer view meanwhile: keep the one further along.
      if (view.ok) {
        const known = get().batches.find((b) => b.batch === view.value.batch);
        if (!known || known.done <= view.value.done) set({ batches: upsertBatch(get().batches, view.value) });
      }
      return res.value.batch;
    },
    async cancel(batch) {
      const res = await client.batch.cancel({ batch });
      if (res.ok) set({ batches: upsertBatch(get().batches, res.value) });
      else set({ error: errorText(res) });
    },
    async resume(batch) {
      set({ error: null });
      const res = await client.batch.resume({ batch });
      if (!res.ok) {
        set({ error: errorText(res) });
        return;
      }
      // Progress events may already have moved it further: keep the one further along.
      const known = get().batches.find((b) => b.batch === batch);
      if (!known || known.state !== 'running' || known.done <= res.value.done)
        set({ batches: upsertBatch(get().batches, res.value), selected: batch });
      else set({ selected: batch });
    },
    select(batch) {
      set({ selected: batch });
    },
    reveal(batch) {
      set({ selected: batch, revealed: get().revealed + 1 });
    },
    openSlot(slot) {
      if (slot.episode) onOpen(slot.episode);
    },
    dispose() {
      off();
    },
  }));
  const off = client.onBatchProgress((view) => {
    // A list reply in flight predates this event: let the event win.
    generation++;
    store.setState({ batches: upsertBatch(store.getState().batches, view) });
  });
  return store;
}

/** The batches of `next` that stopped running since `prev` (finished, cancelled, failed). */
export function selectBatchesEnded(prev: readonly BatchView[], next: readonly BatchView[]): BatchView[] {
  const was = new Map(prev.map((b) => [b.batch, b.state]));
  return next.filter((b) => b.state !== 'running' && was.get(b.batch) === 'running');
}

/**
 * A batch's end in one sentence, for the notification area: the Batches section sits at the
 * library's foot, often scrolled out of view, and a batch that finished showed nothing of it
 * (batch-done). "Batch of hello-python done: 2 of 2 episodes succeeded; no QA flags."
 */
export function batchEndText(b: BatchView): string {
  const tasks = [...new Set(b.slots.map((s) => s.task_name))].join(', ') || b.batch;
  const unfinished = b.done < b.total ? ` (${b.done} of ${b.total} finished)` : '';
  const flags = selectFlagCounts(b);
  const flagged = flags.length
    ? `; QA flags: ${flags.map(([rule, n]) => `${rule} ${n}`).join(', ')}`
    : '; no QA flags';
  const error = b.error ? `: ${b.error.replace(/[.\s]+$/, '')}` : '';
  return `Batch of ${tasks} ${b.state}: ${b.succeeded} of ${b.total} episodes succeeded${unfinished}${flagged}${error}.`;
}

/** The batch whose slots are shown: the selected one, else the newest. */
export function selectShownBatch(s: BatchesState): BatchView | null {
  return s.batches.find((b) => b.batch === s.selected) ?? s.batches[0] ?? null;
}

/** True when a batch is not running and has slots without a finished episode (`batch.resume` runs them). */
export function selectCanResume(b: BatchView): boolean {
  return b.state !== 'running' && b.slots.some((s) => s.status === 'pending' || s.status === 'interrupted');
}

/** `3/10 · ETA 12s`, or `done 10/10` once finished. */
export function selectProgressText(b: BatchView): string {
  if (b.state !== 'running') return `${b.state} ${b.done}/${b.total}`;
  const eta = b.eta_ms === null ? '' : ` · ETA ${formatMs(b.eta_ms)}`;
  return `${b.done}/${b.total} · running ${b.running}${eta}`;
}

/** Success rate as a percentage, `–` before any slot finished. */
export function selectSuccessText(b: BatchView): string {
  return b.success_rate === null ? '–' : `${Math.round(b.success_rate * 100)}%`;
}

/** Flag counts, most frequent first: `[['loop', 3], ['state_leak', 1]]`. */
export function selectFlagCounts(b: BatchView): [string, number][] {
  return Object.entries(b.flags).sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]));
}

function formatMs(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}
