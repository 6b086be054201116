import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLongTrace, type LongTrace } from '../../electron/bench/ui-trace.js';
import { createAppServices, type AppServices } from '../../electron/services/app-services.js';
import { loadEnginePorts } from '../../electron/services/load-engine.js';
import { createClient } from '../../shared/contract/client.js';
import { createMemoryTransport } from '../../shared/contract/memory-transport.js';
import type { Transport } from '../../shared/contract/transport.js';
import {
  createStepperStore,
  FIRST_ROWS,
  ROWS_PAGE,
  selectDecisionCount,
  selectFirstStep,
  selectLastStep,
  selectViewedRow,
  type StepperStore,
} from '../../renderer/src/stores/stepper/stepper-store';

/** Steps of the recorded trace: the first screen and more than one page after it. */
const STEPS = FIRST_ROWS + ROWS_PAGE + 700;
/**
 * The most the window's open answer may weigh: the summary and the first screen's rows
 * (~360 bytes a row). All 10,000 rows were 3.5 MB (issue 19.10); all of these are ~1.2 MB.
 */
const OPEN_ANSWER_MAX_BYTES = 120_000;

/** The transport, with the size of each answer as the window would receive it. */
function measured(transport: Transport): {
  transport: Transport;
  answers: { op: string; bytes: number }[];
  calls: string[];
} {
  const answers: { op: string; bytes: number }[] = [];
  const calls: string[] = [];
  return {
    answers,
    calls,
    transport: {
      async call(op, input) {
        calls.push(op);
        const result = await transport.call(op, input);
        answers.push({ op, bytes: Buffer.byteLength(JSON.stringify(result)) });
        return result;
      },
      subscribe: (event, listener) => transport.subscribe(event, listener),
    },
  };
}

/** Resolves once the store's state meets `done` (checked on every change). */
function until(
  store: StepperStore,
  done: (s: ReturnType<StepperStore['getState']>) => boolean,
): Promise<void> {
  return new Promise((resolve) => {
    if (done(store.getState())) return resolve();
    const off = store.subscribe((s) => {
      if (!done(s)) return;
      off();
      resolve();
    });
  });
}

/** Resolves once the store holds every row (the pages after the first screen arrived). */
function allRows(store: StepperStore): Promise<void> {
  return until(store, (s) => s.rowsBefore === 0 && s.rows.length === STEPS + 1);
}

describe('the window opens a long recorded trace by its first screen, then pages the rest (issue 19.10)', () => {
  let home: string;
  let trace: LongTrace;
  let services: AppServices;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-rows-paging-'));
    trace = await writeLongTrace(home, STEPS);
    services = createAppServices(await loadEnginePorts(home));
  });
  afterAll(async () => {
    await services?.dispose();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('answers the open with the last screenful of rows, small, and says what is left (rows-open-size)', async () => {
    const { transport, answers } = measured(createMemoryTransport(services));
    const fetches: (() => void)[] = [];
    const store = createStepperStore(createClient(transport), { afterPaint: (f) => fetches.push(f) });
    await store.getState().open(trace.branch);
    const open = answers.find((a) => a.op === 'episode.open');
    expect(open?.bytes).toBeLessThan(OPEN_ANSWER_MAX_BYTES);
    const s = store.getState();
    expect(s.rows).toHaveLength(FIRST_ROWS);
    expect(s.rows.at(-1)?.step).toBe(STEPS);
    expect(s.rowsBefore).toBe(STEPS + 1 - FIRST_ROWS);
    // The count, the scrubber's range and the viewed row are the whole branch's already.
    expect(selectDecisionCount(s)).toBe(STEPS);
    expect(selectFirstStep(s)).toBe(0);
    expect(selectLastStep(s)).toBe(STEPS);
    expect(selectViewedRow(s)?.step).toBe(STEPS);
    // Nothing else was asked before the first paint.
    expect(answers.map((a) => a.op)).toEqual(['episode.open']);
    expect(fetches).toHaveLength(1);
    store.getState().dispose();
  });

  it('fetches the earlier rows after the first paint, in pages: the first and every step arrive (rows-paged-in)', async () => {
    const { transport, answers } = measured(createMemoryTransport(services));
    const store = createStepperStore(createClient(transport));
    await store.getState().open(trace.branch);
    await allRows(store);
    const s = store.getState();
    expect(s.rows.map((r) => r.step)).toEqual(Array.from({ length: STEPS + 1 }, (_, i) => i));
    expect(s.rows[1]).toMatchObject({
      step: 1,
      summary: 'echo step 1 >> counter.txt && tail -n 1 counter.txt',
    });
    const pages = answers.filter((a) => a.op === 'episode.rows');
    expect(pages).toHaveLength(Math.ceil((STEPS + 1 - FIRST_ROWS) / ROWS_PAGE));
    // The rows are the ones a full open gives, row for row.
    const full = await createClient(createMemoryTransport(services)).episode.open({ id: trace.branch });
    expect(full.ok && full.value.rows).toEqual(s.rows);
    store.getState().select(1);
    expect(selectViewedRow(store.getState())?.step).toBe(1);
    store.getState().dispose();
  });

  it('a reload keeps the earlier rows on screen until their fresh pages come; a newer load stops the older paging', async () => {
    const { transport, calls } = measured(createMemoryTransport(services));
    const fetches: (() => void)[] = [];
    const store = createStepperStore(createClient(transport), { afterPaint: (f) => fetches.push(f) });
    await store.getState().open(trace.branch);
    fetches.shift()?.();
    await allRows(store);
    store.getState().select(5);
    const kept = store.getState().rows[1];
    await store.getState().reload();
    // Right after the reload's answer every row is there (the earlier ones kept), the selection too.
    expect(store.getState().rows).toHaveLength(STEPS + 1);
    expect(store.getState().rowsBefore).toBe(0);
    expect(store.getState().rows[1]).toBe(kept);
    expect(selectViewedRow(store.getState())?.step).toBe(5);
    await store.getState().reload();
    // The first reload's paging, run now, asks for nothing: a newer load owns the rows.
    const asked = calls.length;
    fetches.shift()?.();
    expect(calls.length).toBe(asked);
    fetches.shift()?.();
    // The last page holds step 1: once its row is a fresh one, every page came.
    await until(store, (s) => s.rows[1] !== kept);
    expect(calls.length - asked).toBe(Math.ceil((STEPS + 1 - FIRST_ROWS) / ROWS_PAGE));
    expect(store.getState().rows.map((r) => r.step)).toEqual(Array.from({ length: STEPS + 1 }, (_, i) => i));
    store.getState().dispose();
  });
});
