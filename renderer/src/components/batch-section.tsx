import { ErrorText } from './error-text';
import { useEffect, useRef } from 'react';
import type { BatchView } from '../../../shared/contract/models';
import {
  BATCH_CONCURRENCY,
  BATCH_EPISODES,
  selectBatchProblem,
  selectBatchStartWhy,
  selectCanResume,
  selectFlagCounts,
  selectProgressText,
  selectShownBatch,
  selectSuccessText,
} from '../stores/batches/batches-store';
import { useSlice, useStores } from '../stores/use-stores';
import { CountField, FieldProblem } from './count-field';
import { PanelState } from './panel';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { countOf } from '../../../shared/count-of';

/** The line under a batch's slots saying why one cannot open yet (WhySlot). */
const BATCH_SLOTS_WHY_ID = 'batch-slots-why';

function Slots(props: { readonly batch: BatchView }) {
  const actions = useStores().batches.getState();
  return (
    <ul className="batch-slots">
      {props.batch.slots.map((s) => (
        <li key={`${s.task}#${s.index}`}>
          <button
            type="button"
            className={`batch-slot status-${s.status}`}
            data-testid="batch-slot"
            data-status={s.status}
            data-episode={s.episode ?? ''}
            {...whyNot(
              !s.episode && 'not started yet: it opens once the batch starts it',
              s.end_reason ?? s.status,
              BATCH_SLOTS_WHY_ID,
            )}
            onClick={() => actions.openSlot(s)}
          >
            <span>
              {s.task_name} #{s.index + 1}
            </span>
            <span className="muted">
              {s.status}
              {s.steps !== null ? ` · ${countOf(s.steps, 'step')}` : ''}
              {s.flags.length ? ` · ⚑${s.flags.length}` : ''}
              {s.superseded.length ? ` · ${s.superseded.length} superseded` : ''}
            </span>
          </button>
        </li>
      ))}
    </ul>
  );
}

function Summary(props: { readonly batch: BatchView }) {
  const b = props.batch;
  const flags = selectFlagCounts(b);
  const actions = useStores().batches.getState();
  const revealed = useSlice('batches', (s) => s.revealed);
  const box = useRef<HTMLDivElement>(null);
  // "Show the batch" (the batch-end notice): brought into view and focused, so the keyboard is
  // there too. Not on the first render (0): a window opened on a library does not jump.
  useEffect(() => {
    if (revealed === 0) return;
    box.current?.scrollIntoView({ block: 'nearest' });
    box.current?.focus({ preventScroll: true });
  }, [revealed]);
  return (
    <div
      ref={box}
      tabIndex={-1}
      aria-label={`batch ${b.batch}`}
      className="batch-summary"
      data-testid="batch-summary"
      data-state={b.state}
      data-batch={b.batch}
    >
      <progress max={b.total} value={b.done} aria-label="batch progress" />
      <div className="muted" data-testid="batch-progress">
        {selectProgressText(b)}
      </div>
      <div>
        success <strong data-testid="batch-success">{selectSuccessText(b)}</strong>
        {flags.length ? (
          <span className="flag-count" title="QA flags (warning or worse) over finished episodes">
            {' · '}
            {flags.map(([rule, n]) => `⚑ ${rule} ${n}`).join(', ')}
          </span>
        ) : (
          ' · no flags'
        )}
      </div>
      {b.error ? <PanelState kind="error">{b.error}</PanelState> : null}
      {b.state === 'running' ? (
        <button type="button" data-testid="batch-cancel" onClick={() => void actions.cancel(b.batch)}>
          Cancel
        </button>
      ) : null}
      {selectCanResume(b) ? (
        <button
          type="button"
          data-testid="batch-resume"
          title="Run the unfinished slots again; cut-off episodes are kept as superseded"
          onClick={() => void actions.resume(b.batch)}
        >
          Resume
        </button>
      ) : null}
      <Slots batch={b} />
      <WhySlot id={BATCH_SLOTS_WHY_ID} />
    </div>
  );
}

/** Batches in the library: a form to start one, live progress, its summary and slots (a click opens the episode). */
export function BatchSection() {
  const stores = useStores();
  const actions = stores.batches.getState();
  const form = useSlice('batches', (s) => s.form);
  const batches = useSlice('batches', (s) => s.batches);
  const starting = useSlice('batches', (s) => s.starting);
  const error = useSlice('batches', (s) => s.error);
  const listError = useSlice('batches', (s) => s.listError);
  const problem = useSlice('batches', selectBatchProblem);
  const startWhy = useSlice('batches', selectBatchStartWhy);
  const shown = useSlice('batches', selectShownBatch);
  const tasks = useSlice('episodes', (s) => s.tasks);
  const cases = useSlice('episodes', (s) => s.cases);

  return (
    <section className="batches" data-testid="batches">
      <h3>Batches</h3>
      <form
        className="batch-form"
        onSubmit={(e) => {
          e.preventDefault();
          void actions.start();
        }}
      >
        <select
          multiple
          aria-label="batch tasks"
          title="Tasks of the batch (Ctrl/⌘-click to pick several)"
          data-testid="batch-task"
          value={[...form.tasks]}
          onChange={(e) => actions.setForm({ tasks: Array.from(e.target.selectedOptions, (o) => o.value) })}
        >
          {tasks.map((t) => (
            <option key={t.id} value={`sample:${t.id}`}>
              {t.name}
            </option>
          ))}
          {cases.map((c) => (
            // By its title as the Cases list names it; the id (a folder's slug) on hover.
            <option key={c.id} value={`case:${c.id}`} title={`case ${c.id}`}>
              case: {c.title}
            </option>
          ))}
        </select>
        <label className="batch-agent">
          Agent{' '}
          <input
            type="text"
            data-testid="batch-agent"
            placeholder="the task's own"
            title="empty for the task's own, or openai:MODEL, manual, exec:COMMAND"
            value={form.agent}
            onChange={(e) => actions.setForm({ agent: e.target.value })}
          />
        </label>
        <label>
          episodes{' '}
          <CountField
            range={BATCH_EPISODES}
            testId="batch-episodes"
            problemId="batch-problem"
            value={form.episodes}
            onChange={(n) => actions.setForm({ episodes: n })}
          />
        </label>
        <label>
          at once{' '}
          <CountField
            range={BATCH_CONCURRENCY}
            testId="batch-concurrency"
            problemId="batch-problem"
            value={form.concurrency}
            onChange={(n) => actions.setForm({ concurrency: n })}
          />
        </label>
        <FieldProblem id="batch-problem" testId="batch-problem" problem={problem} />
        <button type="submit" data-testid="batch-start" {...whyNot(startWhy, undefined, 'batch-start-why')}>
          {starting ? 'starting…' : '▶ Run batch'}
        </button>
      </form>
      <WhySlot id="batch-start-why" />
      {error ? (
        <PanelState kind="error">
          <ErrorText text={error} />
        </PanelState>
      ) : null}
      {listError ? (
        <PanelState kind="error">
          <ErrorText text={listError} />
        </PanelState>
      ) : null}
      {batches.length > 1 ? (
        <select
          aria-label="batch"
          data-testid="batch-select"
          value={shown?.batch ?? ''}
          onChange={(e) => actions.select(e.target.value || null)}
        >
          {batches.map((b) => (
            <option key={b.batch} value={b.batch}>
              {b.batch} ({b.state} {b.done}/{b.total})
            </option>
          ))}
        </select>
      ) : null}
      {shown ? <Summary batch={shown} /> : <PanelState kind="empty">No batches yet.</PanelState>}
    </section>
  );
}
