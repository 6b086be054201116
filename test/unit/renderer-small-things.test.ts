import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { watchStore } from '../../electron/engine/trace/store-watch';
import { rangeProblem } from '../../renderer/src/model/count-range';
import { createBatchesStore, selectBatchProblem } from '../../renderer/src/stores/batches/batches-store';
import {
  candidatesStepRange,
  createCandidatesStore,
} from '../../renderer/src/stores/candidates/candidates-store';
import { createEpisodesStore } from '../../renderer/src/stores/episodes/episodes-store';
import { injectPlaceholder } from '../../renderer/src/stores/inject/inject-store';
import { returnTitle } from '../../renderer/src/model/return-title';
import { selectCurrentRow, type StepperState } from '../../renderer/src/stores/stepper/stepper-store';
import { noCallText, selectShownTab } from '../../renderer/src/stores/inspector/inspector-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { stepDetail } from '../support/renderer-fixtures';

describe('issue 19.9: the small things, in the stores', () => {
  it('a number out of its range is refused with the field’s name and range, never clamped', async () => {
    expect(rangeProblem(16, { name: 'at once', min: 1, max: 16 })).toBeNull();
    expect(rangeProblem(100000, { name: 'at once', min: 1, max: 16 })).toBe(
      '“at once” takes a whole number from 1 to 16, not 100000.',
    );
    expect(rangeProblem(Number.NaN, { name: 'step', min: 1, max: 3 })).toBe(
      '“step” takes a whole number from 1 to 3.',
    );
    expect(rangeProblem(1.5, { name: 'step', min: 1, max: 3 })).toMatch(/whole number/);

    const fake = createFakeBackend();
    const batches = createBatchesStore(fake.client);
    batches.getState().setForm({ tasks: ['sample:hello-python'], concurrency: 100000 });
    expect(batches.getState().form.concurrency).toBe(100000);
    expect(selectBatchProblem(batches.getState())).toMatch(/“at once”/);
    expect(await batches.getState().start()).toBeNull();
    expect(batches.getState().error).toMatch(/from 1 to 16, not 100000/);
    expect(fake.callsOf('batch.start')).toHaveLength(0);
    // The list read again (a refresh) leaves the refusal said: it cleared it.
    fake.on('batch.list', () => ({ batches: [] }));
    await batches.getState().refresh();
    expect(batches.getState().error).toMatch(/from 1 to 16, not 100000/);
    expect(batches.getState().listError).toBeNull();

    const candidates = createCandidatesStore(fake.client);
    candidates.getState().prepare(-1, 'b-main', 3);
    expect(candidates.getState().at).toBe(-2);
    expect(await candidates.getState().tryAt('b-main')).toBe(false);
    // A 3-step branch: candidates replace one of its steps, 1 to 3 (the hint read "1–4").
    expect(candidates.getState().error).toMatch(/“step” takes a whole number from 1 to 3, not -1/);
    expect(candidatesStepRange(3)).toMatchObject({ min: 1, max: 3 });
    candidates.getState().prepare(4, 'b-main', 3);
    expect(await candidates.getState().tryAt('b-main')).toBe(false);
    expect(candidates.getState().error).toMatch(/from 1 to 3, not 4/);
    expect(fake.callsOf('episode.candidates')).toHaveLength(0);
    expect(fake.callsOf('episode.stageCandidates')).toHaveLength(0);
  });

  it('the inspector shows Call when the episode has no “Agent output” tab, and keeps the choice', () => {
    expect(selectShownTab('agent', false)).toBe('call');
    expect(selectShownTab('agent', true)).toBe('agent');
    expect(selectShownTab('files', false)).toBe('files');
  });

  it('a step without a call says why in words: its final answer, a refused call, or none', () => {
    const none = { ...stepDetail(4), calls: [] };
    // The agent answered: both tabs said "No tool call in step 4." under the answer.
    expect(noCallText({ ...none, final: 'Fixed.' })).toEqual({
      tab: "Step 4 is the agent's final answer (above): it called no tool, so no tool ran and the sandbox did not change.",
      whatIf: "What if…: step 4 is the agent's final answer; no tool ran.",
    });
    expect(noCallText({ ...none, parse_error: 'unknown tool' }).tab).toMatch(/^Step 4's call was refused/);
    expect(noCallText(none).tab).toBe('No tool call in step 4.');
  });

  it('a return with its γ says on hover what that is: "discounted return, γ = 0.99"', () => {
    expect(returnTitle(0.99)).toMatch(/^discounted return, γ = 0\.99: /);
    expect(returnTitle(1)).toMatch(/^return: /);
  });

  it('the inject hint is about the step at hand', () => {
    const row = (
      step: number,
      tools: string[],
      summary: string,
      status: 'ok' | 'nonzero_exit' | 'pending',
    ) => ({
      step,
      tools,
      summary,
      status,
    });
    expect(injectPlaceholder(null, 'text')).toMatch(/step 1, before it acts/);
    const ok = injectPlaceholder(row(1, ['write_file'], 'greet.py', 'ok'), 'text');
    expect(ok).toMatch(/step 2, after step 1 \(write_file greet\.py\)/);
    const failed = injectPlaceholder(row(2, ['execute_shell'], 'python3 app.py', 'nonzero_exit'), 'text');
    expect(failed).toMatch(/step 3, after step 2 \(execute_shell python3 app\.py\) failed/);
    // Held before its tool, step 1 has not run yet: said so.
    expect(injectPlaceholder(row(1, ['list_dir'], '.', 'pending'), 'text')).toMatch(
      /^What the agent reads at step 2, after step 1 \(list_dir \.\) runs: /,
    );
    expect(injectPlaceholder(row(2, ['execute_shell'], 'x', 'ok'), 'json')).toMatch(
      /^\{"after": "execute_shell"/,
    );
  });

  it('while a step runs the inject hint fits the two lines the field has then: no example', () => {
    const long = {
      step: 2,
      tools: ['execute_shell'],
      summary: 'python3 -m pytest -q tests/test_app.py',
      status: 'ok' as const,
    };
    expect(injectPlaceholder(long, 'text', false, true)).toBe(
      'What the agent reads at step 3, after step 2 (execute_shell python3 -…)',
    );
    expect(injectPlaceholder(null, 'text', false, true)).toBe(
      'What the agent reads at step 1, before it acts',
    );
    expect(injectPlaceholder(long, 'text', true, true)).toBe(
      'Goes in after step 2, the latest: the agent reads it at step 3.',
    );
    // Each at most two lines of the field's ~45 characters at 1024×700.
    for (const viewing of [false, true])
      expect(injectPlaceholder(long, 'text', viewing, true).length).toBeLessThanOrEqual(90);
  });

  it('the inject hint says where the message lands when an earlier step is shown', () => {
    const three = { step: 3, tools: ['execute_shell'], summary: 'echo hi', status: 'ok' as const };
    // Viewing step 2 of 3: the message still goes in after step 3; the hint says so first.
    expect(injectPlaceholder(three, 'text', true)).toBe(
      'Goes in after step 3, the latest, not after the earlier step you are viewing: the agent reads it at step 4.',
    );
    expect(injectPlaceholder(three, 'json', true)).toMatch(
      /^\{"note": "…"\}: Goes in after step 3, the latest/,
    );
    // At the latest step there is nothing to correct.
    expect(injectPlaceholder(three, 'text', false)).toMatch(/^What the agent reads at step 4/);
  });

  it('after a rollback to step 1 the inject hint is about step 1: the window is on the branch the rollback made', () => {
    const row = (step: number, tools: string[], summary: string) => ({ step, tools, summary, status: 'ok' });
    // The branch a rollback to 1 made holds steps 0..1; the undone step 2 stays in its parent.
    const state = (rows: ReturnType<typeof row>[]) =>
      ({ live: true, rows, selectedStep: null, view: { end: null } }) as unknown as StepperState;
    const parent = state([
      row(0, [], 'setup'),
      row(1, ['list_dir'], '/workspace'),
      row(2, ['write_file'], 'greet.py'),
    ]);
    expect(selectCurrentRow(parent)?.step).toBe(2);
    const rolled = selectCurrentRow(state([row(0, [], 'setup'), row(1, ['list_dir'], '/workspace')]));
    expect(rolled?.step).toBe(1);
    expect(injectPlaceholder(rolled, 'text')).toMatch(/step 2, after step 1 \(list_dir \/workspace\)/);
  });

  it('search asks for the episode list once typing pauses, with the last query only', async () => {
    vi.useFakeTimers();
    try {
      const fake = createFakeBackend();
      fake.on('library.list', () => ({ episodes: [], total: 0 }));
      const store = createEpisodesStore(fake.client);
      const typed = ['l', 'lo', 'loo', 'loop'].map((q) => store.getState().setQuery(q));
      expect(store.getState().query).toBe('loop');
      expect(fake.callsOf('library.list')).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(250);
      await Promise.all(typed);
      expect(fake.callsOf('library.list')).toEqual([{ query: 'loop' }]);
      store.getState().dispose();
    } finally {
      vi.useRealTimers();
    }
  });

  it('the store watch tells of an episode another process writes, and of the index written', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-watch-'));
    try {
      let told = 0;
      const stop = watchStore(home, () => told++, { debounceMs: 20 });
      mkdirSync(join(home, 'episodes', 'ep-20261202-000000-abcd'));
      await vi.waitFor(() => expect(told).toBe(1), { timeout: 5_000 });
      writeFileSync(join(home, 'index.sqlite-wal'), 'x');
      await vi.waitFor(() => expect(told).toBe(2), { timeout: 5_000 });
      writeFileSync(join(home, 'unrelated.txt'), 'x');
      stop();
      mkdirSync(join(home, 'episodes', 'ep-20261202-000001-abcd'));
      await new Promise((r) => setTimeout(r, 100));
      expect(told).toBe(2);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
