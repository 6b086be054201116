import { describe, expect, it, vi } from 'vitest';
import {
  createStepperStore,
  selectBranchedFrom,
  selectStateText,
  selectWaitsForPerson,
  selectWorkingText,
  selectRecordedStatus,
  selectRollbackNotice,
  selectRollbackDetails,
  selectStopNotice,
  selectViewedRow,
  selectOffersLatest,
  selectViewedStep,
  selectViewingHistory,
  endText,
  selectEndNotice,
  selectVerifierOutput,
  selectVerifierReward,
  selectWayOn,
  selectRecordedHint,
  selectHintBelowEnd,
} from '../../renderer/src/stores/stepper/stepper-store';
import {
  REPLAY_ACTIONS,
  selectBranchStep,
  whyNoFork,
  whyNoReopen,
  whyNoStep,
  whyNothingToScrub,
} from '../../renderer/src/stores/stepper/why-not-now';
import type { EpisodeStateInfo, RollbackDropped, StopEnd, StopReason } from '../../shared/contract/models';
import { createFakeBackend } from '../support/renderer-fake-client';
import { branchSummary, episodeView, stepRow, traceEvent } from '../support/renderer-fixtures';
import { wayOnButtons } from '../../renderer/src/stores/stepper/way-on';

const sync = (flush: () => void) => flush();

function setup(steps = 3) {
  const fake = createFakeBackend();
  fake.on('episode.open', () => episodeView(steps));
  const store = createStepperStore(fake.client, { schedule: sync });
  return { fake, store };
}

/** Opens b-main while it runs at step 2 (a run started at once: the window opens it running). */
async function openRunning(fake: ReturnType<typeof setup>['fake'], store: ReturnType<typeof setup>['store']) {
  fake.on('episode.open', () =>
    episodeView(2, {
      state: { episode: 'ep1', branch: 'b-main', state: 'running', step: 2, reason: null },
    }),
  );
  await store.getState().open('b-main');
}

/** The server answers a step with b-main paused after step 3. */
function stepAnswersStep3(fake: ReturnType<typeof setup>['fake']) {
  fake.on('episode.step', () => ({
    episode: 'ep1',
    branch: 'b-main',
    state: 'paused',
    step: 3,
    reason: { kind: 'step' },
  }));
}

/** The server says b-main ended at step 3 (with the end it reached, when given). */
function endAtStep3(fake: ReturnType<typeof setup>['fake'], end?: StopEnd) {
  fake.emit('episode.state', {
    episode: 'ep1',
    branch: 'b-main',
    state: 'ended',
    step: 3,
    reason: { kind: 'ended', ...(end ? { end } : {}) },
  });
}

/** The live event of an execute_shell call at `step` on b-main. */
function shellCall(fake: ReturnType<typeof setup>['fake'], step: number, command: string) {
  fake.emit('episode.event', {
    episode: 'ep1',
    branch: 'b-main',
    event: traceEvent({
      type: 'tool_call',
      step,
      call_id: `c${step}`,
      name: 'execute_shell',
      arguments: { command },
    }),
  });
}

describe('stepper store', () => {
  it('opens a branch: rows, live state and breakpoints come from episode.open', async () => {
    const { store } = setup(3);
    await store.getState().open('b-main');
    const s = store.getState();
    expect(s.load).toBe('ready');
    expect(s.rows.map((r) => r.step)).toEqual([1, 2, 3]);
    expect(s.live).toBe(true);
    expect(s.state).toBe('paused');
    expect(selectViewedStep(s)).toBe(3);
  });

  it('offers "latest" only while an earlier step is viewed, never at the last one', async () => {
    const { store } = setup(3);
    await store.getState().open('b-main');
    expect(selectOffersLatest(store.getState())).toBe(false);
    store.getState().select(2);
    expect(selectOffersLatest(store.getState())).toBe(true);
    // The last step chosen by hand: nothing newer to go to ("step 3 / 3 … latest").
    store.getState().select(3);
    expect(selectOffersLatest(store.getState())).toBe(false);
  });

  it('keeps the pause switches and breakpoints for the session: a branch opened next gets them (issue 19 item 8)', async () => {
    const { fake, store } = setup(2);
    fake.on('episode.setStopPoints', (r) => ({
      episode: 'ep1',
      branch: r.id,
      state: 'paused',
      step: 2,
      reason: null,
      stop_points: { before_tool: r.stop_points.before_tool ?? false, before_answer: false },
    }));
    fake.on('episode.setBreakpoints', (r) => ({ breakpoints: r.breakpoints }));
    await store.getState().open('b-main');
    await store.getState().setStopPoint('before_tool', true);
    await store.getState().setBreakpoints([{ kind: 'tool', name: 'execute_shell' }]);
    // Another branch (a fork, a new episode) opens without them on the server's side.
    await store.getState().open('b-fork');
    expect(fake.callsOf('episode.setStopPoints').at(-1)).toEqual({
      id: 'b-fork',
      stop_points: { before_tool: true },
    });
    expect(fake.callsOf('episode.setBreakpoints').at(-1)).toEqual({
      id: 'b-fork',
      breakpoints: [{ kind: 'tool', name: 'execute_shell' }],
    });
    expect(store.getState().stopPoints.before_tool).toBe(true);
    expect(store.getState().breakpoints).toEqual([{ kind: 'tool', name: 'execute_shell' }]);
  });

  it('shows an open failure as an error state, not a throw', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => ({ code: 'not_found', message: 'no episode or branch "zz"' }));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('zz');
    expect(store.getState().load).toBe('error');
    expect(store.getState().error).toContain('no episode or branch');
  });

  it('folds live events of its own branch into rows and ignores other branches', async () => {
    const { fake, store } = setup(1);
    await store.getState().open('b-main');
    fake.emit('episode.event', {
      episode: 'ep1',
      branch: 'b-main',
      event: traceEvent({
        type: 'tool_call',
        step: 2,
        call_id: 'c2',
        name: 'read_file',
        arguments: { path: 'a.txt' },
        source: 'agent',
      }),
    });
    fake.emit('episode.event', {
      episode: 'ep1',
      branch: 'other',
      event: traceEvent({ type: 'tool_call', step: 9, call_id: 'x', name: 'list_dir', arguments: {} }),
    });
    fake.emit('episode.event', {
      episode: 'ep1',
      branch: 'b-main',
      event: traceEvent({
        type: 'tool_result',
        step: 2,
        call_id: 'c2',
        name: 'read_file',
        result: { ok: false, error: { code: 'not_found', message: 'no a.txt' }, duration_ms: 2, bytes: 0 },
      }),
    });
    fake.emit('episode.event', {
      episode: 'ep1',
      branch: 'b-main',
      event: traceEvent({ type: 'injected', step: 2, role: 'user', content: 'hi', source: 'injected' }),
    });
    const rows = store.getState().rows;
    expect(rows.map((r) => r.step)).toEqual([1, 2]);
    expect(rows[1]).toMatchObject({
      tools: ['read_file'],
      summary: 'a.txt',
      status: 'tool_error',
      injected: true,
      duration_ms: 2,
    });
  });

  it("puts a live branch's QA flags on its rows each time it stops, as the library counts them (not only at the end)", async () => {
    const { fake, store } = setup(1);
    const flag = {
      rule: 'destructive_action',
      step: 2,
      severity: 'error' as const,
      message: "step 2 deleted 10 of the workspace's 11 paths",
    };
    fake.on('episode.flags', () => ({ flags: [flag] }));
    await store.getState().open('b-main');
    const firstRow = store.getState().rows[0];
    // Step 2 is folded live; then the episode stops after it and says so (library.changed).
    shellCall(fake, 2, 'rm -rf ./*');
    fake.emit('library.changed', { episode: 'ep1' });
    await vi.waitFor(() => expect(store.getState().flags).toEqual([flag]));
    expect(fake.callsOf('episode.flags')).toEqual([{ id: 'b-main' }]);
    expect(store.getState().rows.map((r) => r.flags.map((f) => f.rule))).toEqual([
      [],
      ['destructive_action'],
    ]);
    // A row the flags did not touch is the same object (only the flagged one redraws).
    expect(store.getState().rows[0]).toBe(firstRow);
    // The flags' answer can come before its step's events: the row folded after gets them.
    const later = { ...flag, rule: 'loop', step: 3, message: 'the same call again' };
    fake.on('episode.flags', () => ({ flags: [flag, later] }));
    fake.emit('library.changed', { episode: 'ep1' });
    await vi.waitFor(() => expect(store.getState().flags).toHaveLength(2));
    shellCall(fake, 3, 'ls');
    expect(store.getState().rows.map((r) => r.flags.map((f) => f.rule))).toEqual([
      [],
      ['destructive_action'],
      ['loop'],
    ]);
    // Another episode's change asks nothing.
    fake.emit('library.changed', { episode: 'ep2' });
    expect(fake.callsOf('episode.flags')).toHaveLength(2);
  });

  it('reads a recorded branch again when its trace is written on disk; damaged, its view goes, and it comes back once repaired', async () => {
    const { fake, store } = setup(2);
    fake.on('episode.open', () => episodeView(2, { state: null, end: null }));
    await store.getState().open('b-main');
    expect(store.getState().rows).toHaveLength(2);
    // Steps appended to the file by another tool: the store's watch names its episode.
    fake.on('episode.open', () => episodeView(4, { state: null, end: null }));
    fake.emit('library.changed', { episode: null, on_disk: ['ep1'] });
    await vi.waitFor(() => expect(store.getState().rows).toHaveLength(4));
    // Another episode's files: nothing read.
    const opens = fake.callsOf('episode.open').length;
    fake.emit('library.changed', { episode: null, on_disk: ['ep2'] });
    expect(fake.callsOf('episode.open')).toHaveLength(opens);
    // Damaged in place: the view and its rows go with it (no panel offers steps that no longer read).
    const damaged = { code: 'trace_corrupt' as const, message: '/x/ep1.jsonl: line 3 has type "tool_reslt"' };
    fake.on('episode.open', () => damaged);
    fake.emit('library.changed', { episode: null, on_disk: ['ep1'] });
    await vi.waitFor(() => expect(store.getState().load).toBe('error'));
    expect(store.getState().view).toBeNull();
    expect(store.getState().rows).toEqual([]);
    expect(store.getState().branch).toBe('b-main');
    // Repaired: its episode is still followed, and the view comes back.
    fake.on('episode.open', () => episodeView(4, { state: null, end: null }));
    fake.emit('library.changed', { episode: null, on_disk: ['ep1'] });
    await vi.waitFor(() => expect(store.getState().load).toBe('ready'));
    expect(store.getState().rows).toHaveLength(4);
  });

  it("says its end at once: the last step's row finished, the verifier's reward shown, before the end's reload answers", async () => {
    const fake = createFakeBackend();
    // Events wait for the next frame, as in the window; the state comes at once.
    const frames: (() => void)[] = [];
    const store = createStepperStore(fake.client, { schedule: (f) => frames.push(f) });
    await openRunning(fake, store);
    // The end's reload does not answer within the test: what shows is what the end said.
    fake.on('episode.open', () => new Promise<never>(() => {}));
    const emit = (e: Parameters<typeof traceEvent>[0]) =>
      fake.emit('episode.event', { episode: 'ep1', branch: 'b-main', event: traceEvent(e) });
    emit({ type: 'action', step: 3, source: 'agent', final: 'done', calls: [] });
    emit({ type: 'snapshot', step: 3, source: 'harness', tree_hash: 'h3', changed: [], bytes: 0 });
    emit({ type: 'reward', step: 3, source: 'harness', final: true, total: 1, components: { verifier: 1 } });
    const verifier = { success: true, exit_code: 0, stdout: 'ok', stderr: '', duration_ms: 5 };
    emit({
      type: 'end',
      step: 3,
      source: 'harness',
      status: 'succeeded',
      end_reason: 'final_answer',
      verifier,
    });
    endAtStep3(fake, { status: 'succeeded', end_reason: 'final_answer' });
    // Ended, with the step that finished before it folded (not "incomplete": it has its snapshot).
    const s = store.getState();
    expect(s.live).toBe(false);
    expect(s.rows.at(-1)).toMatchObject({ step: 3, status: 'final', snapshot: true });
    expect(selectVerifierReward(s)).toMatchObject({ step: 3, reward: 1 });
    expect(s.view?.end).toMatchObject({ status: 'succeeded', verifier: { success: true } });
    // One reload for the end (the state's "ended" does not ask again).
    for (const f of frames.splice(0)) f();
    expect(fake.callsOf('episode.open')).toHaveLength(2);
  });

  it('takes controller state from the state stream and from step results', async () => {
    const { fake, store } = setup(2);
    stepAnswersStep3(fake);
    await store.getState().open('b-main');
    fake.emit('episode.state', {
      episode: 'ep1',
      branch: 'b-main',
      state: 'paused',
      step: 2,
      reason: { kind: 'breakpoint', breakpoint: { kind: 'step', step: 2 } },
    });
    expect(store.getState().stopReason).toBe('paused at a breakpoint (after step 2)');
    await store.getState().step();
    expect(fake.callsOf('episode.step')).toEqual([{ id: 'b-main' }]);
    expect(store.getState().stopReason).toBe('step');
    endAtStep3(fake);
    expect(store.getState().live).toBe(false);
  });

  it('follows the step taken, as a debugger shows its current line: F10 or F5 while an older row is read moves the view to the latest', async () => {
    const { fake, store } = setup(2);
    stepAnswersStep3(fake);
    fake.on('episode.run', () => ({
      episode: 'ep1',
      branch: 'b-main',
      state: 'running',
      step: 3,
      reason: null,
    }));
    await store.getState().open('b-main');
    store.getState().select(1);
    expect(selectViewingHistory(store.getState())).toBe(true);
    await store.getState().step();
    expect(store.getState().selectedStep).toBeNull();
    expect(selectViewingHistory(store.getState())).toBe(false);
    store.getState().select(1);
    await store.getState().run();
    expect(fake.callsOf('episode.run')).toEqual([{ id: 'b-main' }]);
    expect(store.getState().selectedStep).toBeNull();
  });

  it('keeps the row read when the step is refused', async () => {
    const { fake, store } = setup(2);
    fake.on('episode.step', () => ({ code: 'busy', message: 'a step is running' }));
    await store.getState().open('b-main');
    store.getState().select(1);
    await store.getState().step();
    expect(store.getState().selectedStep).toBe(1);
  });

  it('stays ended once its end is seen: the end\'s reload, answered after the release, does not say "no episode"', async () => {
    const { fake, store } = setup(2);
    // Started with run: the window opens it while it runs.
    await openRunning(fake, store);
    expect(store.getState().state).toBe('running');
    // The server released the ended episode's sandbox before the window's reload arrived:
    // the view it answers has no live state, only the recorded end.
    const end = { status: 'succeeded' as const, end_reason: 'final_answer', verifier: null };
    fake.on('episode.open', () => episodeView(3, { state: null, end }));
    endAtStep3(fake);
    expect(store.getState().state).toBe('ended');
    await vi.waitFor(() => expect(store.getState().rows).toHaveLength(3));
    expect(store.getState().state).toBe('ended');
    expect(store.getState().live).toBe(false);
  });

  it('a reload answered after the release but before the end is readable keeps "ended", and the release brings the end and its flags', async () => {
    const { fake, store } = setup(2);
    await openRunning(fake, store);
    // Released, the trace not yet closed: no live state, no end in the view.
    fake.on('episode.open', () => episodeView(3, { state: null, end: null }));
    endAtStep3(fake);
    // The reload's answer is in (its third row), and the bar still says the branch ended.
    await vi.waitFor(() => expect(store.getState().rows).toHaveLength(3));
    expect(store.getState().state).toBe('ended');
    // The release closes the trace and says so: the reload brings the end and its QA flag.
    const end = { status: 'error' as const, end_reason: 'script_exhausted', verifier: null };
    const flag = {
      rule: 'early_termination',
      step: 2,
      severity: 'error' as const,
      message: 'ended with status error',
    };
    fake.on('episode.open', () => ({ ...episodeView(3, { state: null, end }), flags: [flag] }));
    fake.emit('library.changed', { episode: 'ep1' });
    await vi.waitFor(() => expect(store.getState().flags).toHaveLength(1));
    expect(store.getState().state).toBe('ended');
  });

  it('the bar reads the end it saw live ("succeeded") while the reload cannot read the end yet, not "recorded"', async () => {
    const { fake, store } = setup(2);
    await openRunning(fake, store);
    // Released, the trace not yet closed: the view has no live state, no end and no status.
    fake.on('episode.open', () => episodeView(3, { state: null, end: null }));
    endAtStep3(fake, { status: 'succeeded', end_reason: 'final_answer' });
    await vi.waitFor(() => expect(store.getState().rows).toHaveLength(3));
    expect(store.getState().view?.summary.status ?? null).toBeNull();
    expect(selectRecordedStatus(store.getState())).toBe('succeeded');
    // Another branch opened: what was seen of the first is not carried over.
    fake.on('episode.open', () => episodeView(1, { state: null, end: null }));
    await store.getState().open('b-other');
    expect(selectRecordedStatus(store.getState())).toBe('recorded');
  });

  it('opens a run that ended before the window saw it as ended; a branch never run stays stateless', async () => {
    const { fake, store } = setup(2);
    const end = { status: 'succeeded' as const, end_reason: 'final_answer', verifier: null };
    fake.on('episode.open', () => episodeView(2, { state: null, end }));
    await store.getState().open('b-fixed');
    expect(store.getState().state).toBe('ended');
    fake.on('episode.open', () => episodeView(0, { state: null, end: null }));
    await store.getState().open('b-empty');
    expect(store.getState().state).toBeNull();
  });

  it('scrubs with ←/→ within the recorded steps and reports viewing history', async () => {
    const { store } = setup(3);
    await store.getState().open('b-main');
    const s = store.getState();
    s.selectPrevious();
    s.selectPrevious();
    s.selectPrevious();
    s.selectPrevious();
    expect(store.getState().selectedStep).toBe(1);
    expect(selectViewingHistory(store.getState())).toBe(true);
    expect(selectViewedRow(store.getState())?.summary).toBe('echo 1');
    for (let i = 0; i < 5; i++) store.getState().selectNext();
    expect(store.getState().selectedStep).toBe(3);
    expect(selectViewingHistory(store.getState())).toBe(false);
  });

  it('toggles a step breakpoint on the live branch and rolls back when the call fails', async () => {
    const { fake, store } = setup(2);
    let fail = false;
    fake.on('episode.setBreakpoints', (req) =>
      fail ? { code: 'busy', message: 'running' } : { breakpoints: req.breakpoints },
    );
    await store.getState().open('b-main');
    await store.getState().toggleBreakpoint(4);
    expect(store.getState().breakpoints).toEqual([{ kind: 'step', step: 4 }]);
    expect(fake.callsOf('episode.setBreakpoints')).toEqual([
      { id: 'b-main', breakpoints: [{ kind: 'step', step: 4 }] },
    ]);
    fail = true;
    await store.getState().toggleBreakpoint(4);
    expect(store.getState().breakpoints).toEqual([{ kind: 'step', step: 4 }]);
    expect(store.getState().error).toBe('running');
  });

  it('finds the viewed row in sparse rows', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(0, { rows: [stepRow(2), stepRow(5), stepRow(9)] }));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b');
    store.getState().select(5);
    expect(selectViewedRow(store.getState())?.step).toBe(5);
  });

  it('never selects a step the branch does not have, from any path (a compare\'s "show step 2" of a 1-step branch)', async () => {
    const { fake, store } = setup(1);
    await store.getState().open('b-main');
    store.getState().select(2);
    expect(store.getState().selectedStep).toBe(1);
    expect(selectViewedRow(store.getState())?.step).toBe(1);
    store.getState().select(-3);
    expect(store.getState().selectedStep).toBe(1);
    store.getState().select(null);
    expect(store.getState().selectedStep).toBeNull();
    // A reload that brings fewer rows keeps the selection within them.
    fake.on('episode.open', () => episodeView(3));
    await store.getState().reload();
    store.getState().select(3);
    fake.on('episode.open', () => episodeView(2));
    await store.getState().reload();
    expect(store.getState().selectedStep).toBe(2);
  });

  it('says why it stopped above the inspector once: not a plain step, not what the held card says', async () => {
    const { fake, store } = setup(2);
    await store.getState().open('b-main');
    const held = {
      step: 3,
      stage: 'before_answer' as const,
      why: 'the 2nd message the model is about to read (a tool result) matches /IndexError/',
      request: null,
      message: { content: 'look', tool_calls: [] },
      edited: false,
      calls: [],
      final: 'look',
      parse_error: null,
      replaced: [],
    };
    const at = (reason: StopReason, extra: Partial<EpisodeStateInfo> = {}) =>
      fake.emit('episode.state', {
        episode: 'ep1',
        branch: 'b-main',
        state: 'paused',
        step: 2,
        reason,
        ...extra,
      });
    at({ kind: 'step', message: 'step 2 done' });
    expect(selectStopNotice(store.getState())).toBeNull();
    at({ kind: 'paused', message: 'step 3 waits for your decision' });
    expect(selectStopNotice(store.getState())).toBe('step 3 waits for your decision');
    // Held by the stop points alone: the card says it all.
    at({ kind: 'before_answer', held }, { held });
    expect(store.getState().stopReason).toBe("paused before the agent gets step 3's answer");
    expect(selectStopNotice(store.getState())).toBeNull();
    // Held by a breakpoint: the notice names the breakpoint, the card the rest.
    at(
      { kind: 'before_answer', held, breakpoint: { kind: 'request_match', pattern: 'IndexError' } },
      { held },
    );
    expect(selectStopNotice(store.getState())).toBe(
      'paused at a breakpoint (before the answer, when a message matches /IndexError/)',
    );
  });
});

describe('the rollback notice', () => {
  /**
   * b-main (3 steps) is rolled back to k: the window opens the branch the rollback made, b-new
   * (steps 1..k, paused at k, under b-main closed as rolled back to k), whose pause's reason is the
   * engine's word of the rollback: what of a person's it dropped, by step.
   */
  async function rolledBack(k: number, dropped: Partial<RollbackDropped> = {}) {
    const fake = createFakeBackend();
    const parent = branchSummary({
      live: false,
      status: 'interrupted',
      end_reason: `rolled_back_to_${k}`,
      steps: 3,
    });
    const child = branchSummary({ branch: 'b-new', parent_branch: 'b-main', fork_step: k, steps: k });
    fake.on('episode.open', () =>
      episodeView(k, {
        summary: child,
        branches: [parent, child],
        state: {
          episode: 'ep1',
          branch: 'b-new',
          state: 'paused',
          step: k,
          reason: {
            kind: 'paused',
            message: `rolled back to step ${k}`,
            rollback: {
              from: 'b-main',
              to_step: k,
              dropped: { injected: [], overridden: [], typed: [], ...dropped },
            },
          },
        },
      }),
    );
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-new');
    return store;
  }

  it('says the window is on the new branch, paused at k, where the undone steps are, and what Continue does', async () => {
    const store = await rolledBack(1);
    expect(selectBranchedFrom(store.getState())).toEqual({ parent: 'b-main', step: 1 });
    expect(selectStopNotice(store.getState())).toBe(
      // The parent by its name in the tree, not its id; what became of steps 2–3 in plain words
      // ("Steps 2–3 stay in main's trace" read as a riddle with a long name: "fork 2 at step 1's trace").
      // Nothing of a person's was dropped: nothing is said of it.
      'Rolled back to step 1: a new live branch from main, paused at step 1. Steps 2–3 are undone here; main keeps them. Step (F10) or Continue (F5) to go on.',
    );
    // The how, behind a disclosure under the notice: what was restored, and that nothing is lost.
    expect(selectRollbackDetails(store.getState())).toBe(
      "Snapshot 1 was restored in the same sandbox: the files, memory, conversation, and the shell's directory and environment as they were after step 1; leftover processes were stopped and /tmp cleared. Nothing is lost: main keeps its whole trace (open it in the branch tree).",
    );
    // One step undone: said of it alone.
    expect(selectRollbackNotice((await rolledBack(2)).getState())).toContain(
      'Step 3 is undone here; main keeps it.',
    );
  });

  it('names every message, override and command the rollback dropped, by count and step, whichever step they came after', async () => {
    // A message after step 2 (undone) and an override of step 1's result, after snapshot 1: the
    // notice said nothing of either (only a message after step k itself was named).
    const both = await rolledBack(1, { injected: [2], overridden: [1] });
    expect(selectRollbackNotice(both.getState())).toMatch(
      /to go on\. Dropped: 1 message injected after step 2; 1 overridden result of step 1\. Redo what the next step needs\.$/,
    );
    expect(selectRollbackDetails(both.getState())).toMatch(
      /Recorded after snapshot 1, which this branch starts from, so not in it: 1 message injected after step 2; 1 overridden result of step 1\.$/,
    );
    // Counted, the steps said once each, commands typed too.
    const many = await rolledBack(1, { injected: [1, 2, 2], typed: [1] });
    expect(selectRollbackNotice(many.getState())).toMatch(
      /Dropped: 3 messages injected after steps 1, 2; 1 command typed after step 1\. Redo what the next step needs\.$/,
    );
    await expect(
      rolledBack(1, { overridden: [1] }).then((s) => selectRollbackNotice(s.getState())),
    ).resolves.toMatch(
      /to go on\. Dropped: 1 overridden result of step 1\. Redo what the next step needs\.$/,
    );
  });
});

describe('endText', () => {
  it('says what it knows of the verifier, and nothing where it does not know', () => {
    expect(endText('failed', 'final_answer', false)).toBe(
      'the agent gave its final answer; the verifier failed',
    );
    expect(endText('failed', 'final_answer', null)).toBe(
      'the agent gave its final answer; no verifier passed it',
    );
    // A list's summary has no verifier result: no claim either way (the walkthrough said "no verifier passed it").
    expect(endText('failed', 'final_answer')).toBe('the agent gave its final answer');
    expect(endText('succeeded', 'final_answer', true)).toBe('the agent gave its final answer');
  });

  it('Replay with no step to scrub says what can be done: a step only where Step and Continue can act', () => {
    type S = Parameters<typeof whyNothingToScrub>[0];
    const end = { status: 'error' as const, end_reason: 'model_error', verifier: null };
    const ended = {
      branch: 'b',
      live: false,
      state: null,
      busy: false,
      rows: [],
      view: { end },
    } as unknown as S;
    // Ended at setup (a model server that was not up): not "take one (Step, F10)" with both greyed.
    expect(whyNoStep(ended)).not.toBeNull();
    // Its agent cannot go on as recorded (way-on.ts): the way on the other panes offer, not the library.
    expect(whyNothingToScrub(ended)).toBe(
      'It ended before its first step. Its model endpoint kept failing: going on as recorded would call it again, so fork it with another agent or endpoint.',
    );
    // Another fatal end at setup (the sandbox died): started again from the library.
    const died = { ...ended, view: { end: { ...end, end_reason: 'sandbox_lost' } } } as S;
    expect(whyNothingToScrub(died)).toMatch(/nothing to scrub: start it again from the library\.$/);
    const paused = {
      branch: 'b',
      live: true,
      state: 'paused',
      busy: false,
      rows: [],
      view: null,
    } as unknown as S;
    expect(whyNoStep(paused)).toBeNull();
    expect(whyNothingToScrub(paused)).toMatch(/Take one \(Step, F10\) or run it \(Continue, F5\)\.$/);
    // Step 0's row (the setup) on screen: the Replay panel does not say "no step" beside it.
    expect(whyNothingToScrub({ ...paused, rows: [stepRow(0, { tools: [] })] })).toBe(
      'Nothing to scrub yet: the episode has only step 0, its setup. Take one (Step, F10) or run it (Continue, F5).',
    );
    expect(whyNothingToScrub({ ...paused, state: 'running' })).toBe(
      'Nothing to scrub yet: its first step is under way.',
    );
    // A manual agent asking the person for its first step: nothing is under way until they answer.
    const asking = {
      ...paused,
      state: 'running',
      held: null,
      rows: [],
      view: { summary: { agent_traits: { decides: 'person', as_case: 'script' } } },
    } as unknown as S;
    expect(whyNothingToScrub(asking)).toBe(
      'Nothing to scrub yet: the agent is waiting for you to decide its first step (Inject, Decision tab).',
    );
    expect(whyNothingToScrub({ ...paused, branch: null })).toMatch(/open an episode/);
    // Ended at its setup, the end not read yet: not "press … under Replay" inside Replay, which has no button.
    expect(
      whyNothingToScrub({
        ...paused,
        live: false,
        seenLive: true,
        selectedStep: null,
        rows: [stepRow(0, { tools: [] })],
      } as S),
    ).toBe(
      'This episode has ended. It ended before its first step, so there is nothing to scrub: start it again from the library.',
    );
  });

  it('an episode that ran live in this window is one that has ended; a trace opened from the store is a recorded trace', async () => {
    const { fake, store } = setup(2);
    await store.getState().open('b-main');
    expect(store.getState().seenLive).toBe(true);
    // Ended (its view has no live state now): still the episode that ran here, after another was open.
    fake.on('episode.open', () => episodeView(2, { state: null }));
    await store.getState().open('b-other');
    expect(store.getState().seenLive).toBe(false);
    expect(selectWayOn(store.getState()).what).toBe('This is a recorded trace');
    await store.getState().open('b-main');
    expect(store.getState().live).toBe(false);
    expect(selectWayOn(store.getState()).what).toBe('This episode has ended');
  });

  it('a released episode viewed at the step it never finished goes on from the step before, as its notice does: one rule names the way on everywhere', () => {
    type S = Parameters<typeof whyNoReopen>[0];
    const rows = [stepRow(0), stepRow(1), { ...stepRow(2), snapshot: false, status: 'pending' as const }];
    const recorded = {
      branch: 'b',
      live: false,
      seenLive: true,
      state: 'ended',
      held: null,
      rows,
      rowsBefore: 0,
    } as unknown as S;
    const atTwo = { ...recorded, selectedStep: 2 } as S;
    // Reopen and Fork act (they were greyed with no reason on screen), at step 1, and say so.
    expect(whyNoReopen(atTwo)).toBeNull();
    expect(whyNoFork(atTwo)).toBeNull();
    expect(selectBranchStep(atTwo)).toBe(1);
    expect(selectWayOn(atTwo)).toEqual({
      what: 'This episode has ended',
      step: 1,
      reopen: 'Reopen live at step 1',
      fork: 'Fork at step 1',
      againFails: null,
    });
    // The labels the Replay buttons, the release notice and Inject show are the rule's.
    expect(REPLAY_ACTIONS.reopen.label(1)).toBe(selectWayOn(atTwo).reopen);
    expect(REPLAY_ACTIONS.fork.label(1)).toBe(selectWayOn(atTwo).fork);
    // Step (F10) on it says the same way on.
    expect(whyNoStep(atTwo)).toBe(
      'This episode has ended. To go on, press “Reopen live at step 1” or “Fork at step 1” under Replay.',
    );
    // Under the inspector's end line, which says the episode ended, the hint says the way on
    // only (it read "This episode has ended" right under "This episode was interrupted: …").
    const endedHere = {
      ...atTwo,
      view: { end: { status: 'interrupted', end_reason: 'stopped', detail: 'left idle', verifier: null } },
    } as unknown as S;
    expect(selectEndNotice(endedHere)).toBe('This episode was interrupted: left idle.');
    expect(selectHintBelowEnd(endedHere)).toBe(
      'To go on, press “Reopen live at step 1” or “Fork at step 1” under Replay.',
    );
    // A recorded trace's end line does not say it is one: its hint still does.
    expect(selectHintBelowEnd({ ...endedHere, seenLive: false } as S)).toMatch(
      /^This is a recorded trace\. To go on/,
    );
    // No end line: the hint says it whole.
    expect(selectHintBelowEnd(atTwo)).toBe(whyNoStep(atTwo));
    // A finished step goes on from itself.
    expect(selectWayOn({ ...recorded, selectedStep: 1 } as S).step).toBe(1);
    expect(selectBranchStep({ ...recorded, selectedStep: 0 } as S)).toBe(0);
    // A trace that never ran in this window is one, in the same sentence.
    expect(whyNoStep({ ...atTwo, seenLive: false } as S)).toBe(
      'This is a recorded trace. To go on, press “Reopen live at step 1” or “Fork at step 1” under Replay.',
    );
    // No finished step at or before the one viewed: nothing to go on from, said.
    const none = { ...recorded, rows: [{ ...stepRow(1), snapshot: false }], selectedStep: 1 } as S;
    expect(selectWayOn(none).step).toBeNull();
    expect(whyNoReopen(none)).toBe('Step 1 never finished, so it has no snapshot: reopen from step 0.');
    // A live branch keeps its own rule: its held step is not forked from silently.
    expect(whyNoReopen({ ...recorded, live: true, selectedStep: 1 } as S)).toMatch(/live already/);
    expect(whyNoFork({ ...recorded, live: true, state: 'paused', selectedStep: 2 } as S)).toBe(
      'Step 2 never finished, so it has no snapshot: roll back or fork from step 1.',
    );
  });

  it("tells a Harbor verifier's result and reward where the end is told (it said only 'solution ran.')", () => {
    const end = {
      status: 'succeeded' as const,
      end_reason: 'final_answer',
      detail: 'solution ran',
      verifier: { success: true, exit_code: 0, reward: 1, reward_file: '/logs/verifier/reward.txt' },
    };
    const s = { live: false, view: { end } } as unknown as Parameters<typeof selectEndNotice>[0];
    expect(selectEndNotice(s)).toBe(
      'This episode succeeded: solution ran. Verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt.',
    );
    const zero = {
      ...end,
      status: 'failed' as const,
      detail: undefined,
      verifier: { ...end.verifier, success: false, reward: 0 },
    };
    expect(selectEndNotice({ live: false, view: { end: zero } } as unknown as typeof s)).toBe(
      'This episode failed: the agent gave its final answer. Verifier failed (exit 0), reward 0.00 from /logs/verifier/reward.txt.',
    );
    // A verifier whose exit code decides (a bare folder's Check, a task.json's) is named as well:
    // "succeeded: the agent gave its final answer" read as if the agent's word had decided.
    const exit = { ...end, detail: undefined, verifier: { success: true, exit_code: 0 } };
    expect(selectEndNotice({ live: false, view: { end: exit } } as unknown as typeof s)).toBe(
      'This episode succeeded: the agent gave its final answer. Verifier passed (exit 0).',
    );
    const failedExit = { ...exit, status: 'failed' as const, verifier: { success: false, exit_code: 1 } };
    expect(selectEndNotice({ live: false, view: { end: failedExit } } as unknown as typeof s)).toBe(
      'This episode failed: the agent gave its final answer. Verifier failed (exit 1).',
    );
  });

  it("gives the verifier's reward to the last row from the branch's summary, and its output's tail to the end's Details", () => {
    type S = Parameters<typeof selectVerifierReward>[0];
    const verifier = {
      success: true,
      exit_code: 0,
      stdout: 'hello.txt is right\n',
      reward: 1,
      reward_file: '/logs/verifier/reward.txt',
    };
    const end = { status: 'succeeded' as const, end_reason: 'final_answer', verifier };
    const s = {
      live: false,
      rows: [stepRow(0), stepRow(1), stepRow(2)],
      view: { end, summary: { final_reward: 1 } },
    } as unknown as S;
    // The summary's final_reward (branch-outcome.ts), on the last step: the rows' own reward leaves it out.
    expect(selectVerifierReward(s)).toEqual({
      step: 2,
      reward: 1,
      verdict: 'verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt',
    });
    expect(selectVerifierOutput(s)).toBe('hello.txt is right');
    // While live nothing is told; a branch no verifier judged has no verifier's part.
    expect(selectVerifierReward({ ...s, live: true } as S)).toBeNull();
    expect(selectVerifierOutput({ ...s, live: true } as S)).toBeNull();
    expect(
      selectVerifierReward({
        ...s,
        view: { end: { ...end, verifier: null }, summary: { final_reward: 0 } },
      } as unknown as S),
    ).toBeNull();
  });

  it('says why a verifier gave no verdict: a timeout in its own words', () => {
    const message = 'the verifier did not finish within its timeout (1 s, "verifier.timeout" in the task)';
    const end = {
      status: 'failed' as const,
      end_reason: 'final_answer',
      verifier: { success: false, exit_code: null, error: { code: 'timeout', message } },
    };
    const s = { live: false, view: { end } } as unknown as Parameters<typeof selectEndNotice>[0];
    expect(selectEndNotice(s)).toBe(
      `This episode failed: the agent gave its final answer; the verifier failed (${message}).`,
    );
  });

  it("says what the fatal error that ended it said (a model server's failure), whole; Replay keeps to what can be done", () => {
    const said =
      'the model endpoint http://127.0.0.1:1/v1 failed: Connection error. Check the server is up (its address comes after @ in the agent, openai:MODEL@URL, or from OPENAI_BASE_URL) and the model name';
    const end = { status: 'error' as const, end_reason: 'model_error', verifier: null, detail: said };
    const s = { branch: 'b', live: false, state: null, busy: false, view: { end } } as unknown as Parameters<
      typeof selectEndNotice
    >[0];
    expect(selectEndNotice(s)).toBe(`This episode ended in an error: ${said}.`);
    // Replay's hint is about scrubbing: the short words, the message once (above the inspector).
    expect(whyNothingToScrub(s)).toBe(
      'It ended before its first step. Its model endpoint was not reachable: going on as recorded would call it again, so fork it with another agent or endpoint.',
    );
    // One rule for every pane: the way on says it, and the buttons give way until another agent is named.
    const way = selectWayOn(s);
    expect(way.againFails).toMatch(/^Its model endpoint was not reachable/);
    expect(wayOnButtons(way, false)).toBe('other-agent');
    expect(wayOnButtons(way, true)).toBe('plain');
    // Step's reason, in the bar's two lines: the few words Inject and Sandbox say (the whole
    // sentence was cut there); Replay says why, and the inspector's hint after a press says it whole.
    expect(selectRecordedHint(s)).toBe(
      'This is a recorded trace. Its agent cannot go on as recorded: see Replay.',
    );
    expect(selectHintBelowEnd(s)).toBe(`This is a recorded trace. ${way.againFails}`);
    // After steps it answered, the endpoint became unreachable: said so, with the last step it took.
    const rows = [0, 1, 2].map((step) => ({ step, snapshot: true }));
    const after = { ...s, rows, selectedStep: 2 } as unknown as typeof s;
    expect(selectWayOn(after).againFails).toBe(
      'Its model endpoint became unreachable after step 2: going on as recorded would call it again, so fork it with another agent or endpoint.',
    );
    // The failed call's row (step 3: its error, no snapshot) is no step it answered; at that row
    // the fork goes on from step 2. Read as the last row, it said "after step 3".
    const failedRow = {
      ...after,
      rows: [...rows, { step: 3, snapshot: false }],
      selectedStep: 3,
    } as unknown as typeof s;
    expect(selectWayOn(failedRow).againFails).toMatch(/^Its model endpoint became unreachable after step 2:/);
    expect(selectWayOn(failedRow).step).toBe(2);
    // Never answered (step 1's call failed, its row the only one after the setup): not reachable.
    const never = {
      ...s,
      rows: [rows[0], { step: 1, snapshot: false }],
      selectedStep: 1,
    } as unknown as typeof s;
    expect(selectWayOn(never).againFails).toMatch(/^Its model endpoint was not reachable:/);
    expect(selectWayOn(never).step).toBe(0);
    // A message that ends its own sentence is not given a second period.
    const done = { ...s, view: { end: { ...end, detail: 'sandbox 3f2a was destroyed.' } } } as typeof s;
    expect(selectEndNotice(done)).toBe('This episode ended in an error: sandbox 3f2a was destroyed.');
  });

  it('says where the episode went on when it was stopped for a picked candidate or a fork', () => {
    expect(endText('interrupted', 'continued_in_candidate')).toBe(
      'a candidate picked at its paused step went on in a branch of its own',
    );
    expect(endText('interrupted', 'superseded_by_fork')).toBe(
      'a fork from it went on, so its sandbox was stopped',
    );
    expect(endText('interrupted', 'stopped')).toBe('a person stopped it');
  });
});

describe('a branch just made live at a step (fork, reopen)', () => {
  it('says where it came from while it has taken no step, then nothing once it steps', async () => {
    const fake = createFakeBackend();
    const view = (steps: number, state: 'idle' | 'paused') =>
      episodeView(steps, {
        summary: branchSummary({ branch: 'b-fork', parent_branch: 'b-main', fork_step: 2, steps }),
        branches: [
          branchSummary({ branch: 'b-main' }),
          branchSummary({ branch: 'b-fork', parent_branch: 'b-main', fork_step: 2, steps }),
        ],
        state: { episode: 'ep1', branch: 'b-fork', state, step: steps, reason: null },
      });
    fake.on('episode.open', () => view(2, 'idle'));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-fork');
    expect(selectBranchedFrom(store.getState())).toEqual({ parent: 'b-main', step: 2 });
    expect(selectStopNotice(store.getState())).toBe(
      "New live branch at step 2, from main: a copy of main's steps 1–2, in a fresh sandbox. Step (F10) or Continue (F5) to go on. main is kept as it was: pick it in the timeline's branch tree to go back.",
    );
    // Stepped once: its own step 3 is there, the notice has done its work.
    fake.on('episode.open', () => view(3, 'paused'));
    await store.getState().reload();
    expect(selectBranchedFrom(store.getState())).toBeNull();
    expect(selectStopNotice(store.getState())).toBeNull();
  });
});

describe("the bar's word for a live branch", () => {
  it('a start waiting at step 0 for the person reads "paused at step 0", as a fork waiting at K reads "paused at step K" (never "idle")', async () => {
    const fake = createFakeBackend();
    const started = (state: 'idle' | 'paused' | 'running', steps: number) =>
      episodeView(steps, {
        summary: branchSummary({ branch: 'b-main', steps, status: null }),
        state: { episode: 'ep1', branch: 'b-main', state, step: steps, reason: null },
      });
    fake.on('episode.open', () => started('idle', 0));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-main');
    expect(selectStateText(store.getState())).toBe('paused at step 0');
    // Stepped: paused after its step, as any branch a person steps.
    fake.on('episode.open', () => started('paused', 1));
    await store.getState().reload();
    expect(selectStateText(store.getState())).toBe('paused');
    fake.on('episode.open', () => started('running', 1));
    await store.getState().reload();
    expect(selectStateText(store.getState())).toBe('running');
    // A fork that has taken no step yet: where it waits.
    fake.on('episode.open', () =>
      episodeView(2, {
        summary: branchSummary({ branch: 'b-fork', parent_branch: 'b-main', fork_step: 2, steps: 2 }),
        state: { episode: 'ep1', branch: 'b-fork', state: 'idle', step: 2, reason: null },
      }),
    );
    await store.getState().open('b-fork');
    expect(selectStateText(store.getState())).toBe('paused at step 2');
  });

  it('an ended branch never reads "working…": the end is seen before the Stop answers', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(1));
    let done: () => void = () => undefined;
    fake.on(
      'episode.stop',
      () => new Promise((r) => (done = () => r({ status: 'interrupted', end_reason: 'stopped' }))),
    );
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-main');
    const stopping = store.getState().stop();
    expect(selectWorkingText(store.getState())).toBe('working…');
    const ended: EpisodeStateInfo = {
      episode: 'ep1',
      branch: 'b-main',
      state: 'ended',
      step: 1,
      reason: { kind: 'ended', end: { status: 'interrupted', end_reason: 'stopped' } },
    };
    fake.emit('episode.state', ended);
    // The Stop's answer still waits (the sandbox is being given back): the episode has ended.
    expect(store.getState().busy).toBe(true);
    expect(selectWorkingText(store.getState())).toBeNull();
    done();
    await stopping;
  });

  it('a manual agent asked for its next step reads "waiting for you", not "running · working…"; the step it was given runs', async () => {
    const fake = createFakeBackend();
    const manual = (state: 'paused' | 'running', agent_traits?: { decides: 'person'; as_case: 'script' }) =>
      episodeView(1, {
        summary: branchSummary({ steps: 1, ...(agent_traits ? { agent_traits } : {}) }),
        state: { episode: 'ep1', branch: 'b-main', state, step: 1, reason: null },
      });
    const PERSON = { decides: 'person' as const, as_case: 'script' as const };
    fake.on('episode.open', () => manual('paused', PERSON));
    // F10: the step waits for the person's decision (the call answers only once the step is done).
    let done: (v: ReturnType<typeof manual>['state']) => void = () => undefined;
    fake.on('episode.step', () => new Promise((r) => (done = r as typeof done)));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-main');
    const stepping = store.getState().step();
    fake.emit('episode.state', { episode: 'ep1', branch: 'b-main', state: 'running', step: 1, reason: null });
    expect(store.getState().busy).toBe(true);
    expect(selectWaitsForPerson(store.getState())).toBe(true);
    expect(selectStateText(store.getState())).toBe('waiting for you');
    expect(selectWorkingText(store.getState())).toBeNull();
    // The person decided: step 2's call runs, and the bar says so.
    shellCall(fake, 2, 'ls');
    expect(selectWaitsForPerson(store.getState())).toBe(false);
    expect(selectStateText(store.getState())).toBe('running');
    expect(selectWorkingText(store.getState())).toBe('working…');
    done({ episode: 'ep1', branch: 'b-main', state: 'paused', step: 2, reason: null });
    await stepping;

    // An agent that decides by itself is running, not waiting for anyone.
    fake.on('episode.open', () => manual('running'));
    await store.getState().open('b-main');
    expect(selectStateText(store.getState())).toBe('running');
  });
});
