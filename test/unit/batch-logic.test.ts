import { describe, expect, it } from 'vitest';
import { deepMerge, taskUnder } from '../../electron/engine/batch/ab.js';
import { emptySlot, type BatchFile, type BatchSlot } from '../../electron/engine/batch/batch-file.js';
import { summarizeBatch, supersedePartial } from '../../electron/engine/batch/batch-runner.js';
import { formatEta, progressLine } from '../../electron/engine/batch/progress.js';

const slot = (index: number, extra: Partial<BatchSlot> = {}): BatchSlot => ({
  ...emptySlot('/t/task.json', 't', index),
  ...extra,
});
const batch = (slots: BatchSlot[]): BatchFile => ({
  format: 'stepbox.batch/1',
  id: 'batch-x',
  home: '/h',
  created: 1000,
  agent: 'scripted:/a.jsonl',
  episodes: slots.length,
  concurrency: 2,
  tasks: [{ path: '/t/task.json', name: 't' }],
  slots,
});

describe('batch resume bookkeeping', () => {
  it('supersedes cut-off and interrupted episodes, keeps finished ones, finds unrecorded ones', () => {
    const b = batch([
      slot(0, { episode: 'ep-done', status: 'succeeded', steps: 3 }),
      slot(1, { episode: 'ep-cut', starting: 1500 }),
      slot(2, { episode: 'ep-int', status: 'interrupted' }),
      slot(3, { starting: 2000 }),
      slot(4),
    ]);
    const stored = [
      { id: 'ep-done', task: 't', created: 1100 },
      { id: 'ep-cut', task: 't', created: 1600 },
      { id: 'ep-int', task: 't', created: 1700 },
      { id: 'ep-unrecorded', task: 't', created: 2001 },
      { id: 'ep-other-task', task: 'u', created: 2002 },
      { id: 'ep-older', task: 't', created: 10 },
    ];
    expect(supersedePartial(b, stored)).toBe(3);
    expect(b.slots.map((s) => [s.episode, s.status, s.superseded])).toEqual([
      ['ep-done', 'succeeded', []],
      [null, null, ['ep-cut']],
      [null, null, ['ep-int']],
      [null, null, ['ep-unrecorded']],
      [null, null, []],
    ]);
    // A second pass changes nothing: no episode is superseded twice.
    expect(supersedePartial(b, stored)).toBe(0);
    expect(b.slots.flatMap((s) => s.superseded)).toHaveLength(3);
  });
  it('summarizes per task', () => {
    const rows = summarizeBatch(
      batch([
        slot(0, { status: 'succeeded', steps: 2, duration_ms: 100 }),
        slot(1, { status: 'failed', steps: 4, duration_ms: 300 }),
        slot(2),
      ]),
    );
    expect(rows).toEqual([
      {
        task: 't',
        episodes: 3,
        succeeded: 1,
        failed: 1,
        other: 0,
        unfinished: 1,
        mean_steps: 3,
        mean_duration_ms: 200,
      },
    ]);
  });
  it('draws a progress bar with an ETA from the rate so far', () => {
    expect(progressLine({ done: 5, total: 10, ok: 4, running: 2, elapsedMs: 10_000, width: 10 })).toBe(
      '[#####-----]  5/10  ok 4 fail 1  running 2  ETA 10s',
    );
    expect(progressLine({ done: 0, total: 3, ok: 0, running: 1, elapsedMs: 5, width: 3 })).toContain('ETA ?');
    expect(formatEta(125_000)).toBe('2m05s');
    expect(formatEta(3_720_000)).toBe('1h02m');
  });
});

describe('A/B configs', () => {
  it('merge sandbox and timeouts over a task, objects key by key', () => {
    const doc = { name: 't', goal: 'g', timeouts: { tools: { default: 30, lookup: 5 }, step_hard: 60 } };
    const t = taskUnder(
      doc,
      { timeouts: { tools: { lookup: 1 }, step_hard: 2 }, sandbox: { reset_between_episodes: false } },
      'task.json',
    );
    expect(t.timeouts.tools).toEqual({ default: 30, lookup: 1 });
    expect(t.timeouts.step_hard).toBe(2);
    expect(t.sandbox.reset_between_episodes).toBe(false);
    expect(deepMerge({ a: [1, 2] }, { a: [3] })).toEqual({ a: [3] });
    expect(() => taskUnder(doc, { timeouts: { stepp_hard: 1 } }, 'task.json')).toThrow(
      /did you mean "step_hard"/,
    );
  });
});
