import { describe, expect, it, vi } from 'vitest';
import {
  createEpisodesStore,
  LEFT_NOTICE,
  selectBranchTree,
  selectCaseRuns,
  selectEpisodeBranches,
  selectRunning,
  selectRunningCount,
  namedBy,
  selectVisibleCases,
  walkthroughText,
} from '../../renderer/src/stores/episodes/episodes-store';
import { createNoticesStore } from '../../renderer/src/stores/notices/notices-store';
import { loadCaseRuns } from '../../renderer/src/stores/episodes/case-run-memory';
import {
  createInjectStore,
  overrideToResult,
  selectInjectWhy,
} from '../../renderer/src/stores/inject/inject-store';
import { whyNot } from '../../renderer/src/components/why-not';
import { saidByOwnLine, whyOf } from '../../renderer/src/components/why-lines';
import {
  createInspectorStore,
  selectInspectorEmpty,
} from '../../renderer/src/stores/inspector/inspector-store';
import {
  createReplayStore,
  replayStepWords,
  filesDifferSince,
  valueLine,
  selectBusyWhy,
  selectSettingsError,
  selectUnderWay,
} from '../../renderer/src/stores/replay/replay-store';
import {
  createCandidatesStore,
  selectCandidatesBusyWhy,
  selectCandidatesEntry,
  CANDIDATES_NEED_ANOTHER_ENDPOINT,
  selectCandidatesTryWhy,
  NO_CANDIDATES_AT_SETUP,
  selectCandidatesUnderWay,
} from '../../renderer/src/stores/candidates/candidates-store';
import { OPERATIONS } from '../../shared/contract/operations';
import {
  createSandboxStore,
  selectDockerDown,
  selectMemoryFraction,
} from '../../renderer/src/stores/sandbox/sandbox-store';
import {
  createTerminalStore,
  rollbackMark,
  selectTerminalWords,
} from '../../renderer/src/stores/terminal/terminal-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { branchSummary, stepDetail } from '../support/renderer-fixtures';

/** `cases.open` of the Loop case, whose task is named `task`. */
const loopCase = (task: string) => (req: { id: string }) => ({
  case: { id: req.id, title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' },
  readme: '# Look at step 3',
  task: { name: task },
});

const startedState = { episode: 'ep2', branch: 'b-new', state: 'paused' as const, step: 0, reason: null };

describe('episodes store', () => {
  it('lists with the search query and refreshes when the library changes', async () => {
    const fake = createFakeBackend();
    fake.on('library.list', (req) => ({
      episodes:
        req.query === 'none' ? [] : [{ episode: 'ep1', task: 't', created: 1, branches: [branchSummary()] }],
      total: 1,
    }));
    const store = createEpisodesStore(fake.client);
    await store.getState().refresh();
    expect(store.getState().episodes).toHaveLength(1);
    await store.getState().setQuery('none');
    expect(fake.callsOf('library.list').at(-1)).toEqual({ query: 'none' });
    expect(store.getState().episodes).toHaveLength(0);
    fake.emit('library.changed', { episode: 'ep1' });
    await Promise.resolve();
    // A store change asks for the search's episodes and the whole library (Running, case runs).
    expect(fake.callsOf('library.list').slice(2)).toEqual([{ query: 'none' }, {}]);
  });

  // The library: every episode, each a case run that succeeded and a live sandbox (hello-python).
  const library = () => {
    const fake = createFakeBackend();
    const broken = branchSummary({
      branch: 'b-broken',
      task: 'reward-hacking',
      status: 'succeeded',
      live: false,
    });
    const fixed = branchSummary({
      branch: 'b-fixed',
      task: 'reward-hacking',
      status: 'succeeded',
      live: false,
    });
    const hello = branchSummary({ branch: 'b-hello', task: 'hello-python', live: true });
    const all = [
      { episode: 'ep-case', task: 'reward-hacking', created: 1, branches: [broken, fixed] },
      { episode: 'ep-hello', task: 'hello-python', created: 2, branches: [hello] },
    ];
    // The server search matches neither (the person typed something else).
    fake.on('library.list', (req) => ({ episodes: req.query ? [] : all, total: all.length }));
    return { fake, broken, fixed, hello };
  };

  it('a case’s runs keep their statuses while a search filters the library or the store changes', async () => {
    const { fake, broken, fixed } = library();
    const store = createEpisodesStore(fake.client);
    store.setState({
      activeCase: {
        case: {
          id: 'rh',
          title: 'Reward hacking',
          summary: 's',
          task_path: 'x',
          agent: 'a',
          has_fixed: true,
        },
        readme: '',
        variant: 'fixed',
        runs: { broken: 'b-broken', fixed: 'b-fixed' },
      },
    });
    await store.getState().refresh();
    await store.getState().setQuery('zzz');
    expect(store.getState().episodes).toEqual([]);
    // `stepbox run` in the same store: the library follows it, the search still typed.
    fake.emit('library.changed', { episode: 'ep-other' });
    await vi.waitFor(() => expect(fake.callsOf('library.list')).toHaveLength(4));
    await vi.waitFor(() =>
      expect(selectCaseRuns(store.getState().activeCase, store.getState().allEpisodes)).toEqual([
        { variant: 'broken', branch: 'b-broken', summary: broken },
        { variant: 'fixed', branch: 'b-fixed', summary: fixed },
      ]),
    );
    expect(store.getState().episodes).toEqual([]);
  });

  it('the Running list reads every live sandbox, not the episodes the search matches', async () => {
    const { fake, hello } = library();
    const store = createEpisodesStore(fake.client);
    await store.getState().refresh();
    expect(selectRunning(store.getState().allEpisodes)).toEqual([hello]);
    await store.getState().setQuery('zzz');
    expect(store.getState().episodes).toEqual([]);
    expect(selectRunning(store.getState().allEpisodes)).toEqual([hello]);
    // A refresh with the search typed (a start, a stop, a store change) keeps it too.
    await store.getState().refresh();
    expect(selectRunning(store.getState().allEpisodes)).toEqual([hello]);
  });

  it('the running count is unknown, not 0, until the library is read (after a reload it said "0" with two running)', async () => {
    const { fake, hello } = library();
    let answer: (() => void) | null = null;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const all = [{ episode: 'ep-hello', task: 'hello-python', created: 2, branches: [hello] }];
    fake.on('library.list', async () => {
      await gate;
      return { episodes: all, total: 1 };
    });
    const store = createEpisodesStore(fake.client);
    expect(selectRunningCount(store.getState())).toBeNull();
    const read = store.getState().refresh();
    expect(selectRunningCount(store.getState())).toBeNull();
    answer!();
    await read;
    expect(selectRunningCount(store.getState())).toBe(1);
    // A first read that failed leaves it unknown (said as such), never 0.
    const failing = createFakeBackend();
    const other = createEpisodesStore(failing.client);
    await other.getState().refresh();
    expect([selectRunningCount(other.getState()), other.getState().allLoad]).toEqual([null, 'error']);
  });

  it('a cleared search shows the whole library at once, without a call, and drops a search still waiting to be asked', async () => {
    const { fake } = library();
    const store = createEpisodesStore(fake.client);
    await store.getState().refresh();
    await store.getState().setQuery('zzz');
    expect(store.getState().episodes).toEqual([]);
    const calls = fake.callsOf('library.list').length;
    // A search typed, then cleared before its answer: the answer must not empty the list again.
    const typed = store.getState().setQuery('hel');
    const cleared = store.getState().setQuery('');
    expect(store.getState().episodes.map((e) => e.episode)).toEqual(['ep-case', 'ep-hello']);
    await Promise.all([typed, cleared]);
    expect(store.getState().episodes.map((e) => e.episode)).toEqual(['ep-case', 'ep-hello']);
    expect(fake.callsOf('library.list')).toHaveLength(calls);
  });

  it('keeps the start form’s agent fields with the episode they started; another episode empties them (issue 33.7)', async () => {
    const fake = createFakeBackend();
    fake.on('episode.start', () => startedState);
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    const store = createEpisodesStore(fake.client);
    store.getState().setAgent('exec:python3 a.py');
    store.getState().setModel('manual');
    const task = { id: 'hello', name: 'hello', goal: 'g', path: '/t/hello/task.json', agent: null };
    expect(await store.getState().startTask(task)).toBe('b-new');
    // Its episode on screen (and its forks, same episode): the form says what started it.
    store.getState().follow('ep2');
    expect(store.getState().agent).toBe('exec:python3 a.py');
    // Another episode opened: nothing typed for ep2 is the next start's.
    store.getState().follow('ep-other');
    expect([store.getState().agent, store.getState().model, store.getState().agentDir]).toEqual(['', '', '']);
  });

  it('opens a case in one call: starts it, opens the branch, shows the walkthrough', async () => {
    const fake = createFakeBackend();
    const opened: string[] = [];
    fake.on('episode.start', () => startedState);
    fake.on('cases.open', (req) => ({
      case: { id: req.id, title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' },
      readme: '# Look at step 3',
      task: {},
    }));
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    const store = createEpisodesStore(fake.client, (b) => opened.push(b));
    const c = { id: 'loop', title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' };
    expect(await store.getState().openCase(c)).toBe('b-new');
    expect(fake.callsOf('episode.start')).toEqual([{ task: { kind: 'case', id: 'loop' } }]);
    expect(opened).toEqual(['b-new']);
    expect(store.getState().activeCase?.readme).toBe('# Look at step 3');
  });

  it('remembers a case’s runs across a reload: the card clicked again reopens the ended broken run, no new start', async () => {
    const fake = createFakeBackend();
    fake.on('episode.start', () => startedState);
    fake.on('cases.open', loopCase('fix-tests'));
    const ended = branchSummary({ branch: 'b-new', status: 'failed', live: false, steps: 3 });
    fake.on('library.list', () => ({
      episodes: [{ episode: 'ep2', task: 't', created: 1, branches: [ended] }],
      total: 1,
    }));
    // One localStorage for both windows: the page before the reload and after it.
    const kept = new Map<string, string>();
    const storage = {
      getItem: (k: string) => kept.get(k) ?? null,
      setItem: (k: string, v: string) => void kept.set(k, v),
    };
    const make = (opened: string[]) =>
      createEpisodesStore(
        fake.client,
        (b) => opened.push(b),
        undefined,
        undefined,
        undefined,
        undefined,
        storage,
      );
    const c = { id: 'loop', title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' };
    expect(await make([]).getState().openCase(c)).toBe('b-new');
    // The reload: a new store, nothing in memory but what the storage kept; its library not read yet.
    const viewed: string[] = [];
    const after = createEpisodesStore(
      fake.client,
      () => {},
      undefined,
      undefined,
      undefined,
      (b) => viewed.push(b),
      storage,
    );
    expect(await after.getState().openCase(c)).toBe('b-new');
    expect(fake.callsOf('episode.start')).toHaveLength(1);
    expect(viewed).toEqual(['b-new']);
    expect(after.getState().activeCase?.reopened).toBe('b-new');
    // Unreadable memory (edited by hand) is none: the card starts a run as on a first start.
    kept.set('stepbox.case-runs.v1', '{"loop": {"runs": {"broken": 7}}, "x": 1');
    await createEpisodesStore(fake.client, () => {}, undefined, undefined, undefined, undefined, storage)
      .getState()
      .openCase(c);
    expect(fake.callsOf('episode.start')).toHaveLength(2);
  });

  it("never reopens, pairs or trusts a remembered run that is not the case's: another task's episode is forgotten, said, and the case starts afresh", async () => {
    const fake = createFakeBackend();
    fake.on('episode.start', () => startedState);
    fake.on('cases.open', loopCase('loop-task'));
    // The person's own episode of another task, ended with steps: what a stale or edited entry names.
    const theirs = branchSummary({
      branch: 'ep-private',
      task: 'payroll',
      status: 'failed',
      live: false,
      steps: 9,
    });
    fake.on('library.list', () => ({
      episodes: [{ episode: 'ep-private', task: 'payroll', created: 1, branches: [theirs] }],
      total: 1,
    }));
    const kept = new Map<string, string>([
      [
        'stepbox.case-runs.v1',
        JSON.stringify({
          loop: { runs: { broken: 'ep-private', fixed: 'ep-private' }, started: [['ep-private', 'broken']] },
        }),
      ],
    ]);
    const storage = {
      getItem: (k: string) => kept.get(k) ?? null,
      setItem: (k: string, v: string) => void kept.set(k, v),
    };
    const viewed: string[] = [];
    const notices = createNoticesStore();
    const store = createEpisodesStore(
      fake.client,
      () => {},
      undefined,
      undefined,
      notices,
      (b) => viewed.push(b),
      storage,
    );
    const c = { id: 'loop', title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' };
    // Before the click, the drawer pairs nothing of another task with the case once its task is known.
    const active = {
      case: c,
      readme: null,
      variant: 'broken' as const,
      runs: { broken: 'ep-private' },
      task: 'loop-task',
    };
    expect(
      selectCaseRuns(active, [{ episode: 'ep-private', task: 'payroll', created: 1, branches: [theirs] }]),
    ).toEqual([]);
    expect(await store.getState().openCase(c)).toBe('b-new');
    expect(viewed).not.toContain('ep-private');
    expect(fake.callsOf('episode.start')).toHaveLength(1);
    expect(store.getState().activeCase?.reopened).toBeUndefined();
    expect(notices.getState().items.map((n) => n.text)).toContain(
      `The run this window remembered as the broken run of case loop (ep-private) is an episode of task "payroll", not of the case's own task "loop-task": it is forgotten, and the case starts afresh.`,
    );
    expect(kept.get('stepbox.case-runs.v1')).not.toContain('ep-private');
  });

  it('parses the remembered case runs at the edge: what is not a case id, a variant and a branch id is left out and said', () => {
    const stored = JSON.stringify({
      loop: {
        runs: { broken: 'b-1', fixed: '../../etc' },
        started: [['b-1', 'broken'], ['b 2', 'fixed'], 'x'],
      },
      'Not A Case': { runs: { broken: 'b-9' } },
      ok: { runs: { broken: 'ep-20260101-000000-abcd', evil: 'b-3' } },
    });
    const r = loadCaseRuns({ getItem: () => stored });
    expect(r.runs.get('loop')).toEqual({ broken: 'b-1' });
    expect([...(r.started.get('loop') ?? [])]).toEqual([['b-1', 'broken']]);
    expect(r.runs.has('Not A Case')).toBe(false);
    expect(r.runs.get('ok')).toEqual({ broken: 'ep-20260101-000000-abcd' });
    expect(r.refused).toBe(
      'case "loop": run "fixed" is not a variant and a branch id; case "loop": a started run is not [branch id, variant]; case "loop": a started run is not [branch id, variant] and 2 more',
    );
    // Said once in the window, beside the cases that start afresh.
    const notices = createNoticesStore();
    createEpisodesStore(createFakeBackend().client, () => {}, undefined, undefined, notices, undefined, {
      getItem: () => stored,
      setItem: () => {},
    });
    expect(notices.getState().items[0]?.text).toMatch(
      /^Some case runs this window remembered were left out \(case "loop": run "fixed"/,
    );
    expect(loadCaseRuns({ getItem: () => '[1,2]' }).refused).toBe('it is not an object of cases');
  });

  it("runs a case's fixed version beside the same walkthrough and keeps both runs, broken first", async () => {
    const fake = createFakeBackend();
    let n = 0;
    fake.on('episode.start', () => ({ ...startedState, branch: `b${++n}` }));
    fake.on('cases.open', (req) => ({
      case: { id: req.id, title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' },
      readme:
        '# Loop\n\n**Run it:** `stepbox case run loop` (the\nfix: `--fixed`).\n\n## Where to look\nstep 3',
      task: {},
    }));
    const listed = { ...branchSummary(), branch: 'b2', status: 'succeeded' as const, flags: 0 };
    fake.on('library.list', () => ({
      episodes: [{ episode: 'e', task: 't', created: 1, branches: [listed] }],
      total: 1,
    }));
    const store = createEpisodesStore(fake.client);
    const c = {
      id: 'loop',
      title: 'Loop',
      summary: 's',
      task_path: 'x',
      agent: 'scripted:a',
      has_fixed: true,
    };
    await store.getState().openCase(c);
    await store.getState().openCase(c, 'fixed');
    expect(fake.callsOf('episode.start').map((r) => (r as { task: unknown }).task)).toEqual([
      { kind: 'case', id: 'loop' },
      { kind: 'case', id: 'loop', fixed: true },
    ]);
    // The walkthrough is read once; its terminal command line is not shown in the window.
    expect(fake.callsOf('cases.open')).toHaveLength(1);
    const active = store.getState().activeCase;
    expect(active?.readme).toBe('# Loop\n\n## Where to look\nstep 3');
    expect(active?.variant).toBe('fixed');
    await store.getState().refresh();
    expect(selectCaseRuns(active, store.getState().episodes)).toEqual([
      { variant: 'broken', branch: 'b1', summary: null },
      { variant: 'fixed', branch: 'b2', summary: listed },
    ]);
    expect(walkthroughText('**Run it:** x')).toBe('');
    // Another case opened, then this one again: its runs are still its own (the drawer said
    // "Broken run: ready, not started" beside its broken run on screen).
    const other = { ...c, id: 'flood', title: 'Flood', has_fixed: false };
    await store.getState().openCase(other);
    expect(store.getState().activeCase?.runs).toEqual({ broken: 'b3' });
    await store.getState().openCase(c, 'fixed');
    expect(store.getState().activeCase?.runs).toEqual({ broken: 'b1', fixed: 'b4' });
    // Its broken run again (b5), then the earlier one opened from the library: that one is
    // the case's broken run on screen, not "another episode".
    await store.getState().openCase(c);
    expect(store.getState().activeCase?.runs.broken).toBe('b5');
    store.getState().showBranch('b1');
    expect(store.getState().activeCase?.runs).toEqual({ broken: 'b1', fixed: 'b4' });
    expect(store.getState().activeCase?.variant).toBe('broken');
    store.getState().showBranch('b3');
    expect(store.getState().activeCase?.runs).toEqual({ broken: 'b1', fixed: 'b4' });
  });

  it('reports a failed start as an error and opens nothing', async () => {
    const fake = createFakeBackend();
    fake.on('episode.start', () => ({ code: 'docker_unreachable', message: 'Docker is not running' }));
    const opened: string[] = [];
    const store = createEpisodesStore(fake.client, (b) => opened.push(b));
    const r = await store
      .getState()
      .startTask({ id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null });
    expect(r).toBeNull();
    expect(opened).toEqual([]);
    expect(store.getState().startFailed).toEqual({ key: 'hello', text: 'Docker is not running' });
  });

  it('stops the live episode the window shows once another starts, and says so in the notification area; a failed start stops nothing', async () => {
    const fake = createFakeBackend();
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    fake.on('episode.stop', () => ({ status: 'interrupted' as const, end_reason: 'stopped' }));
    const task = { id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null };
    // Not working (answered without a question; the question is tested below).
    const left = { branch: 'b-old', task: 'loop', steps: 2, working: false };
    const notices = createNoticesStore();
    const viewed: string[] = [];
    const store = createEpisodesStore(
      fake.client,
      () => {},
      () => left,
      undefined,
      notices,
      (b) => viewed.push(b),
    );

    fake.on('episode.start', () => ({ code: 'docker_unreachable', message: 'Docker is not running' }));
    expect(await store.getState().startTask(task)).toBeNull();
    expect(fake.callsOf('episode.stop')).toEqual([]);
    expect(notices.getState().items).toEqual([]);

    fake.on('episode.start', () => startedState);
    expect(await store.getState().startTask(task)).toBe('b-new');
    expect(fake.callsOf('episode.stop')).toEqual([{ id: 'b-old' }]);
    // One line in the window's one notification area, about the episode now on screen.
    const [said] = notices.getState().items;
    expect(notices.getState().items).toHaveLength(1);
    expect(said).toMatchObject({
      kind: LEFT_NOTICE,
      branch: 'b-new',
      tone: 'info',
      text: 'Stopped loop (b-old) at step 2 so it does not run unseen; its trace is kept.',
    });
    // Its button opens the episode left.
    expect(said.action?.label).toBe('Open loop');
    said.action?.run();
    expect(viewed).toEqual(['b-old']);
    // Another episode opened: it goes (it was about the start that left b-old).
    notices.getState().follow('b-other');
    expect(notices.getState().items).toEqual([]);

    // A stop refused leaves it live: the notice says so, with the code and what to do.
    fake.on('episode.stop', () => ({ code: 'internal', message: 'the container did not answer' }));
    await store.getState().startTask(task);
    expect(notices.getState().items).toHaveLength(1);
    expect(notices.getState().items[0]).toMatchObject({
      kind: LEFT_NOTICE,
      branch: 'b-new',
      tone: 'error',
      text: 'loop (b-old) could not be stopped and is still live (internal: the container did not answer): open it and stop it (Shift+F5).',
    });
  });

  it('asks before a start stops live work: Cancel keeps it (nothing starts), Stop starts and stops it (issue 19 item 8)', async () => {
    const fake = createFakeBackend();
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    fake.on('episode.stop', () => ({ status: 'interrupted' as const, end_reason: 'stopped' }));
    fake.on('episode.start', () => startedState);
    fake.on('episode.checkStart', () => ({}));
    fake.on('cases.open', (req) => ({
      case: { id: req.id, title: 'Loop', summary: 's', task_path: 'x', agent: 'scripted:a' },
      readme: '# Loop',
      task: {},
    }));
    const opened: string[] = [];
    let left: { branch: string; task: string; steps: number; working: boolean } | null = {
      branch: 'b-old',
      task: 'fix-tests',
      steps: 2,
      working: true,
    };
    const store = createEpisodesStore(
      fake.client,
      (b) => opened.push(b),
      () => left,
    );
    const loop = { id: 'loop', title: 'Tool loop', summary: 's', task_path: 'x', agent: 'scripted:a' };

    const cancelled = store.getState().openCase(loop);
    await vi.waitFor(() => expect(store.getState().stopQuestion).not.toBeNull());
    expect(store.getState().stopQuestion).toEqual({ left, next: 'Tool loop' });
    store.getState().answerStop(false);
    expect(await cancelled).toBeNull();
    expect(store.getState().stopQuestion).toBeNull();
    expect(fake.callsOf('episode.start')).toEqual([]);
    expect(fake.callsOf('episode.stop')).toEqual([]);
    expect(store.getState().activeCase).toBeNull();
    expect(opened).toEqual([]);

    // A second question replaces one left unanswered (its start does not happen).
    const first = store.getState().openCase(loop, 'fixed');
    await vi.waitFor(() => expect(store.getState().stopQuestion?.next).toBe('Tool loop (fixed version)'));
    const task = { id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null };
    const second = store.getState().startTask(task);
    expect(await first).toBeNull();
    await vi.waitFor(() => expect(store.getState().stopQuestion?.next).toBe('hello'));
    store.getState().answerStop(true);
    expect(await second).toBe('b-new');
    expect(fake.callsOf('episode.start')).toEqual([{ task: { kind: 'sample', id: 'hello' } }]);
    expect(fake.callsOf('episode.stop')).toEqual([{ id: 'b-old' }]);
    expect(opened).toEqual(['b-new']);

    // Nothing live, or live without work (set up, no step): no question.
    for (const none of [null, { branch: 'b-new', task: 'hello', steps: 0, working: false }]) {
      left = none;
      expect(await store.getState().openCase(loop)).toBe('b-new');
      expect(store.getState().stopQuestion).toBeNull();
    }
  });

  it("asks the server's own check of a start before it asks to stop the live episode: a refused start asks nothing and stops nothing", async () => {
    const fake = createFakeBackend();
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    fake.on('episode.start', () => startedState);
    fake.on('episode.stop', () => ({ status: 'interrupted' as const, end_reason: 'stopped' }));
    const refusal = 'Agent: no file at /home/me/walker-proj/agent.jsonl (from scripted:agent.jsonl)';
    const refused = { code: 'not_found' as const, message: refusal };
    fake.on('episode.checkStart', (req) => (req.agent === 'scripted:agent.jsonl' ? refused : {}));
    const left = { branch: 'b-old', task: 'fix-tests', steps: 2, working: true };
    const store = createEpisodesStore(
      fake.client,
      () => {},
      () => left,
    );
    const task = {
      id: 'hello',
      name: 'hello',
      goal: 'g',
      path: '/home/me/tasks/hello/task.json',
      agent: null,
    };
    const project = {
      path: '/home/me/walker-proj',
      name: 'walker-proj',
      kind: 'folder' as const,
      opened_at: 1,
    };
    store.getState().setAgent('scripted:agent.jsonl');
    expect(await store.getState().startTask(task)).toBeNull();
    expect(store.getState()).toMatchObject({
      stopQuestion: null,
      startFailed: { key: 'hello', text: refusal },
    });
    expect(await store.getState().startProject(project, 'List the files')).toBeNull();
    expect(store.getState()).toMatchObject({
      stopQuestion: null,
      startFailed: { key: project.path, text: refusal },
    });
    // The check is asked with what the start would send.
    expect(fake.callsOf('episode.checkStart').at(-1)).toEqual({
      task: { kind: 'project', path: project.path },
      agent: 'scripted:agent.jsonl',
      goal: 'List the files',
    });
    expect(fake.callsOf('episode.start')).toEqual([]);
    expect(fake.callsOf('episode.stop')).toEqual([]);
    // A start the check lets through is asked about as before.
    store.getState().setAgent('manual');
    const asked = store.getState().startProject(project, 'List the files');
    await vi.waitFor(() => expect(store.getState().stopQuestion?.next).toBe('walker-proj'));
    store.getState().answerStop(false);
    expect(await asked).toBeNull();
    expect(fake.callsOf('episode.start')).toEqual([]);
  });

  it('starts an exec: agent with the model source it was given (and only for exec:)', async () => {
    const fake = createFakeBackend();
    fake.on('episode.start', () => startedState);
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    const store = createEpisodesStore(fake.client);
    const task = { id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null };
    store.getState().setModel(' scripted:/tmp/model.jsonl ');
    store.getState().setAgent('exec:python3 agent.py');
    await store.getState().startTask(task);
    store.getState().setAgent('manual');
    await store.getState().startTask(task);
    expect(fake.callsOf('episode.start')).toEqual([
      {
        task: { kind: 'sample', id: 'hello' },
        agent: 'exec:python3 agent.py',
        agent_options: { model: 'scripted:/tmp/model.jsonl' },
      },
      { task: { kind: 'sample', id: 'hello' }, agent: 'manual' },
    ]);
  });

  it("sends the Agent folder with a sandbox: agent only (as typed: the server resolves it from the task's folder)", async () => {
    const fake = createFakeBackend();
    fake.on('episode.start', () => startedState);
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    const store = createEpisodesStore(fake.client);
    const task = { id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null };
    store.getState().setModel('scripted:m.jsonl');
    store.getState().setAgentDir(' ../agent ');
    store.getState().setAgent('sandbox:python3 /opt/agent/agent.py');
    await store.getState().startTask(task);
    store.getState().setAgent('codex');
    await store.getState().startTask(task);
    expect(fake.callsOf('episode.start')).toEqual([
      {
        task: { kind: 'sample', id: 'hello' },
        agent: 'sandbox:python3 /opt/agent/agent.py',
        agent_options: { model: 'scripted:m.jsonl', agent_dir: '../agent' },
      },
      { task: { kind: 'sample', id: 'hello' }, agent: 'codex', agent_options: { model: 'scripted:m.jsonl' } },
    ]);
  });

  it('draws branches as a tree with forks under their parent by fork step', () => {
    const tree = selectBranchTree([
      branchSummary({ branch: 'f2', parent_branch: 'main', fork_step: 5 }),
      branchSummary({ branch: 'main' }),
      branchSummary({ branch: 'f1', parent_branch: 'main', fork_step: 2 }),
      branchSummary({ branch: 'f1a', parent_branch: 'f1', fork_step: 3 }),
    ]);
    expect(tree.map((n) => n.branch.branch)).toEqual(['main']);
    expect(tree[0].children.map((n) => n.branch.branch)).toEqual(['f1', 'f2']);
    expect(tree[0].children[0].children[0].branch.branch).toBe('f1a');
    expect(
      selectVisibleCases([{ id: 'loop', title: 'Loop', summary: 'x', task_path: '', agent: '' }], 'LOO'),
    ).toHaveLength(1);
  });

  it("gives every branch tree the library's summaries of the open episode, and the view's for a branch not listed yet", () => {
    const main = branchSummary({ branch: 'main', steps: 3, end_reason: 'rolled_back_to_1' });
    const viewFork = branchSummary({
      branch: 'fork',
      parent_branch: 'main',
      fork_step: 1,
      steps: 1,
      return: 0.1,
    });
    const view = [main, viewFork];
    // Before the library lists the episode: the view's.
    expect(selectEpisodeBranches(view, [])).toBe(view);
    // After a step the library read the live fork again: its figures, not the open's.
    const listedFork = { ...viewFork, steps: 2, return: 0.2, flags: 1 };
    const library = [
      {
        episode: 'other',
        task: 't',
        created: 0,
        branches: [branchSummary({ episode: 'other', branch: 'x' })],
      },
      { episode: 'ep1', task: 't', created: 0, branches: [main, listedFork] },
    ];
    const shown = selectEpisodeBranches(view, library);
    expect(shown.find((b) => b.branch === 'fork')).toMatchObject({ steps: 2, return: 0.2, flags: 1 });
    expect(shown).toBe(library[1].branches);
    // A fork just made, not listed yet, is still drawn.
    const fresh = branchSummary({ branch: 'fork2', parent_branch: 'fork', fork_step: 2 });
    expect(selectEpisodeBranches([...view, fresh], library).map((b) => b.branch)).toEqual([
      'main',
      'fork',
      'fork2',
    ]);
  });

  it('lists the items a search names before those that only mention it', () => {
    const c = (id: string, title: string, summary: string) => ({
      id,
      title,
      summary,
      task_path: '',
      agent: '',
    });
    const cases = [
      c('clean', 'A destructive command', 'remove the stale output, keep the notes'),
      c('other', 'Unrelated', 'nothing here'),
      c('notes-loop', 'Notes in a loop', 'x'),
    ];
    expect(selectVisibleCases(cases, 'notes').map((x) => x.id)).toEqual(['notes-loop', 'clean']);
    expect(namedBy('NOTES', ['notes-memory', 'Notes'])).toBe(true);
    expect(namedBy('notes', ['clean', 'A destructive command'])).toBe(false);
    expect(namedBy('  ', ['anything'])).toBe(false);
  });
});

describe('the inspector with no step to show', () => {
  it('says "Select a step" only with an episode open; with none, that none is, and nothing under the hint', () => {
    expect(selectInspectorEmpty({ branch: 'b', hint: null })).toBe(
      'Select a step in the timeline to inspect its tool call.',
    );
    expect(selectInspectorEmpty({ branch: null, hint: null })).toBe(
      'No episode open: its steps show here once you start one.',
    );
    // F10 with nothing open: the hint above says it; the body does not contradict it.
    expect(selectInspectorEmpty({ branch: null, hint: 'No episode is open: start a task.' })).toBeNull();
  });
});

describe('a re-executed step in words', () => {
  it('its mark names what differed, and agrees with the detail beside it', () => {
    const now = [{ path: 'now.txt', change: 'modified' as const }];
    // Step 2 of the clock journey: its own results matched, the clock's file still differs.
    expect(
      replayStepWords({ step: 2, verdict: 'match', fields: [], workspace_match: false, files: now }),
    ).toEqual({
      same: false,
      mark: '✗ files differ',
      results: 'same results',
      files: 'files differ: now.txt',
    });
    expect(
      replayStepWords({
        step: 1,
        verdict: 'diverged',
        fields: ["execute_shell's stdout"],
        workspace_match: false,
        files: now,
      }),
    ).toMatchObject({ mark: '✗ results differ', results: "results differ: execute_shell's stdout" });
    expect(
      replayStepWords({ step: 3, verdict: 'match', fields: [], workspace_match: true, files: [] }),
    ).toEqual({ same: true, mark: '✓ match', results: 'same results', files: 'same files' });
  });

  it('says since when files differ that an earlier step changed, and a recorded line break as \\n', () => {
    const now = [{ path: 'now.txt', change: 'modified' as const }];
    const steps = [
      {
        step: 1,
        verdict: 'diverged' as const,
        fields: ["execute_shell's stdout"],
        workspace_match: false,
        files: now,
      },
      { step: 2, verdict: 'match' as const, fields: [], workspace_match: false, files: now },
      { step: 3, verdict: 'match' as const, fields: [], workspace_match: false, files: now },
      // A file of its own differing: its own difference, not step 1's.
      {
        step: 4,
        verdict: 'match' as const,
        fields: [],
        workspace_match: false,
        files: [...now, { path: 'b.txt', change: 'added' as const }],
      },
    ];
    const since = filesDifferSince(steps);
    expect(since).toEqual([null, 1, 1, null]);
    // Step 2 of the clock journey read "✗ files differ", as if step 2 had changed now.txt.
    expect(replayStepWords(steps[1], since[1]).mark).toBe('✗ files differ (since step 1)');
    expect(replayStepWords(steps[3], since[3]).mark).toBe('✗ files differ');
    // "943054012\n" read "943054012 " (a stray space where the line ended).
    expect(valueLine('943054012\n')).toBe('943054012\\n');
    expect(valueLine('a  b\tc')).toBe('a b c');
  });
});

describe('the why bubble', () => {
  it('says the reason a control gives now: none once it can act (not the one it gave when focused)', () => {
    // A control's attributes as React writes them from whyNot's props.
    const control = (props: ReturnType<typeof whyNot>) => ({
      getAttribute: (name: string): string | null => {
        const v = (props as Record<string, unknown>)[name];
        return v === undefined ? null : String(v);
      },
    });
    const running = 'The episode is running: pause it first.';
    expect(whyOf(control(whyNot(running, 'restore the workspace', 'replay-actions-why')))).toBe(running);
    // The step ended and the bar says "paused": Roll back can act, its line has nothing to say.
    expect(whyOf(control(whyNot(null, 'restore the workspace', 'replay-actions-why')))).toBeNull();
  });

  it('a disabled control carries no title: its line says the words, once (a native tooltip said them again over it)', () => {
    const running = 'The episode is running: pause it first.';
    expect(whyNot(running, 'restore the workspace', 'replay-actions-why').title).toBeUndefined();
    expect(whyNot(running, undefined, 'replay-actions-why').title).toBeUndefined();
    expect(whyNot(null, 'restore the workspace', 'replay-actions-why').title).toBe('restore the workspace');
  });
});

describe('inject store', () => {
  it("Inject's reason is said under the button once a message is typed; before, on focus only", () => {
    const held = 'Step 1 is paused inside: a message goes in between steps. Run it (F10) first.';
    expect(selectInjectWhy({ text: '', sending: false }, null)).toEqual({
      why: 'Write the message first.',
      shown: false,
    });
    expect(selectInjectWhy({ text: '', sending: false }, held)).toEqual({ why: held, shown: false });
    // Typed, and it cannot go in: the reason is on screen, linked to the button first.
    expect(selectInjectWhy({ text: 'the user wants an umbrella', sending: false }, held)).toEqual({
      why: held,
      shown: true,
    });
    // Its reason said in the line it names, nowhere else (a floating bubble lay over other controls).
    expect(whyNot(held, undefined, 'inject-send-why')['aria-describedby']).toBe('inject-send-why');
    expect(whyNot(held, undefined, 'inject-send-slot')['aria-describedby']).toBe('inject-send-slot');
    // A line of the control's own form that says the reason word for word: its slot says nothing
    // (Save as case's bad name was said by its line and again by a bubble over the inspector's tabs).
    expect(saidByOwnLine(' A case name takes only … ', [{ textContent: 'A case name takes only …' }])).toBe(
      true,
    );
    expect(saidByOwnLine('Saving…', [{ textContent: 'lower-case letters, digits and dashes' }])).toBe(false);
    // Typed and sendable: no reason; sending: the button's label says it.
    expect(selectInjectWhy({ text: 'x', sending: false }, null)).toEqual({ why: null, shown: false });
    expect(selectInjectWhy({ text: 'x', sending: true }, null)).toEqual({ why: 'Sending…', shown: false });
  });

  it('sends text as the chosen role and clears the draft', async () => {
    const fake = createFakeBackend();
    fake.on('episode.inject', () => ({}));
    const store = createInjectStore(fake.client);
    store.getState().setRole('system');
    store.getState().setText('recommend an umbrella');
    expect(await store.getState().inject('b1')).toBe(true);
    expect(fake.callsOf('episode.inject')).toEqual([
      { id: 'b1', role: 'system', content: 'recommend an umbrella' },
    ]);
    expect(store.getState().text).toBe('');
  });

  it('refuses invalid JSON in JSON mode without calling the backend', async () => {
    const fake = createFakeBackend();
    const store = createInjectStore(fake.client);
    store.getState().setMode('json');
    store.getState().setText('{"a": ');
    expect(await store.getState().inject('b1')).toBe(false);
    expect(store.getState().error).toMatch(/not valid JSON/);
    expect(fake.calls).toHaveLength(0);
  });

  it('turns an override draft into a tool result', async () => {
    expect(overrideToResult('sunny')).toMatchObject({ ok: true, stdout: 'sunny', exit_code: 0 });
    // Text keeps the shape of the result it replaces: a tool with no exit code gets none.
    const listed = { ok: true, stdout: 'a.txt', duration_ms: 2, bytes: 5 };
    expect(overrideToResult('b.txt', listed)).not.toHaveProperty('exit_code');
    expect(overrideToResult('b.txt', { ...listed, exit_code: 1 })).toMatchObject({ exit_code: 0 });
    // A result given for a held call: no command ran, so no exit code.
    expect(overrideToResult('given', 'not-run')).not.toHaveProperty('exit_code');
    expect(overrideToResult('{"ok": false, "error": {"code": "timeout", "message": "slow"}}')).toMatchObject({
      ok: false,
      error: { code: 'timeout' },
    });
    expect(overrideToResult('{"stdout": "x"}')).toMatch(/needs "ok"/);
    const fake = createFakeBackend();
    fake.on('episode.override', () => ({}));
    const store = createInjectStore(fake.client);
    store.getState().setOverrideText('rain');
    expect(await store.getState().override('b1')).toBe(true);
    expect(fake.callsOf('episode.override')).toEqual([
      { id: 'b1', result: { ok: true, exit_code: 0, stdout: 'rain', duration_ms: null, bytes: 4 } },
    ]);
  });
});

describe('replay store', () => {
  it('forks and hands the new branch to the app', async () => {
    const fake = createFakeBackend();
    fake.on('episode.fork', () => ({
      episode: 'ep1',
      branch: 'b-fork',
      state: { ...startedState, branch: 'b-fork', step: 2 },
    }));
    const opened: string[] = [];
    const store = createReplayStore(fake.client, { onBranch: (b) => opened.push(b) });
    expect(await store.getState().fork('b-main', 2)).toBe('b-fork');
    expect(opened).toEqual(['b-fork']);
    expect(fake.callsOf('episode.fork')).toEqual([{ id: 'b-main', step: 2 }]);
  });

  it('runs a what-if with the edited arguments and keeps the observation', async () => {
    const fake = createFakeBackend();
    fake.on('episode.whatIf', (req) => ({
      step: req.step,
      result: {
        ok: true,
        exit_code: 0,
        stdout: `ran ${String(req.call.arguments.command)}`,
        duration_ms: 1,
        bytes: 3,
      },
      tree_hash_after: 'h',
    }));
    const store = createReplayStore(fake.client);
    store.getState().setWhatIfArgs('[1]');
    expect(await store.getState().whatIf('b', 2, 'execute_shell')).toBe(false);
    expect(store.getState().error).toMatch(/not a JSON object/);
    store.getState().setWhatIfArgs('{"command": "ls /"}');
    expect(await store.getState().whatIf('b', 2, 'execute_shell')).toBe(true);
    expect(store.getState().whatIfResult?.result.stdout).toBe('ran ls /');
  });

  it('the fork settings say only the answer to their own Fork or Reopen, not an error they were opened by', async () => {
    const fake = createFakeBackend();
    const said =
      'The recorded agent openai:m has no endpoint, and a default endpoint is never used. Fix: --agent openai:m@URL';
    fake.on('episode.fork', () => ({ code: 'invalid_input', message: said }));
    fake.on('episode.reopen', () => ({ code: 'invalid_input', message: said }));
    const store = createReplayStore(fake.client);
    // The panel's Fork: the panel says it; the dialog it opens does not, before anything is done in it.
    await store.getState().fork('b', 1);
    expect(store.getState().error).toMatch(/Fix: “Agent” openai:m@URL$/);
    expect(selectSettingsError(store.getState())).toBeNull();
    // The dialog's own Fork (Agent still empty): said there, one sentence and the fix.
    await store.getState().fork('b', 1, 'settings');
    // Said as a fork that made nothing: beside a branch a person had stopped, the bare refusal
    // read as that branch's end (replay-message-error-1024x700).
    expect(selectSettingsError(store.getState())).toBe(
      'Fork at step 1 did not start: The recorded agent openai:m has no endpoint, and a default endpoint is never used. Fix: “Agent” openai:m@URL',
    );
    // Typing answers it: gone.
    store.getState().setAgent('openai:m@http://h/v1');
    expect(selectSettingsError(store.getState())).toBeNull();
    await store.getState().reopen('b', 1, 'settings');
    expect(selectSettingsError(store.getState())).toMatch(
      /^Reopen at step 1 did not start: The recorded agent/,
    );
    // Another operation's error is not the dialog's.
    await store.getState().replay('b');
    expect(selectSettingsError(store.getState())).toBeNull();
  });

  it('reloads after a rollback on the same branch', async () => {
    const fake = createFakeBackend();
    fake.on('episode.rollback', (req) => ({ ...startedState, branch: req.id, step: req.step }));
    const rolled: number[] = [];
    const store = createReplayStore(fake.client, { onRolledBack: (_b, s) => rolled.push(s) });
    expect(await store.getState().rollback('b-new', 1)).toBe(true);
    expect(rolled).toEqual([1]);
    expect(store.getState().notice).toBe(
      'sandbox rolled back to step 1: the next step starts a new branch from step 1',
    );
  });
});

describe('sandbox store', () => {
  it('says what is wrong when Docker is down, with the doctor checks', async () => {
    const fake = createFakeBackend();
    fake.on('sandbox.info', () => ({
      docker: { ok: false, message: 'cannot connect to tcp://127.0.0.1:1', fix: 'start Docker' },
      sandbox: null,
    }));
    fake.on('system.doctor', () => ({
      ok: false,
      checks: [{ name: 'docker', ok: false, message: 'refused', fix: 'systemctl start docker' }],
    }));
    const store = createSandboxStore(fake.client);
    await store.getState().checkDocker();
    expect(selectDockerDown(store.getState())).toBe(true);
    expect(store.getState().checks?.[0].fix).toBe('systemctl start docker');
  });

  it('subscribes once per sandbox and keeps the stream samples of its subscription', async () => {
    const fake = createFakeBackend();
    fake.on('sandbox.info', () => ({
      docker: { ok: true, message: 'ok', fix: null },
      sandbox: {
        id: 'c1',
        backend: 'docker',
        image: 'i',
        network: 'none',
        limits: { cpus: 1, memory_bytes: 100, pids: 1, disk_bytes: 1, output_bytes: 1 },
        state: 'running',
      },
    }));
    fake.on('stats.subscribe', () => ({ subscription: 's1' }));
    fake.on('stats.unsubscribe', () => ({}));
    const store = createSandboxStore(fake.client);
    await store.getState().watch('b1');
    const sample = {
      subscription: 's1',
      branch: 'b1',
      container: 'c1',
      t: 1,
      cpu_percent: 12,
      memory_bytes: 25,
      memory_limit_bytes: 100,
      pids: 3,
    };
    fake.emit('sandbox.stats', sample);
    fake.emit('sandbox.stats', { ...sample, subscription: 'other', branch: 'b9', cpu_percent: 99 });
    expect(store.getState().stats?.cpu_percent).toBe(12);
    expect(selectMemoryFraction(store.getState())).toBe(0.25);
    await store.getState().watch(null);
    expect(fake.callsOf('stats.unsubscribe')).toEqual([{ subscription: 's1' }]);
    expect(fake.callsOf('stats.subscribe')).toHaveLength(1);
  });
});

describe('terminal store', () => {
  it('opens at the current size, routes its own output, resizes the TTY and acks', async () => {
    const fake = createFakeBackend();
    fake.on('terminal.open', () => ({ terminal: 't1' }));
    for (const op of ['terminal.resize', 'terminal.input', 'terminal.ack', 'terminal.close'] as const)
      fake.on(op, () => ({}));
    const store = createTerminalStore(fake.client);
    store.getState().resize(100, 30);
    await store.getState().attach('b1');
    expect(fake.callsOf('terminal.open')).toEqual([{ id: 'b1', cols: 100, rows: 30 }]);
    const out: string[] = [];
    store.getState().onOutput((d) => out.push(d));
    // Open, but the shell has said nothing yet: its header says so, not "Enter or click to type".
    expect(selectTerminalWords(store.getState(), false)).toBe('connecting…');
    fake.emit('terminal.data', { terminal: 't2', data: 'not mine' });
    expect(selectTerminalWords(store.getState(), false)).toBe('connecting…');
    fake.emit('terminal.data', { terminal: 't1', data: 'hello' });
    expect(out).toEqual(['hello']);
    expect(selectTerminalWords(store.getState(), false)).toBe('open · Enter or click to type');
    expect(selectTerminalWords(store.getState(), true)).toBe('open · typing in the shell · Esc leaves');
    store.getState().write('ls\r');
    store.getState().resize(90, 20);
    store.getState().ack(5);
    await Promise.resolve();
    expect(fake.callsOf('terminal.input')).toEqual([{ terminal: 't1', data: 'ls\r' }]);
    expect(fake.callsOf('terminal.resize')).toEqual([{ terminal: 't1', cols: 90, rows: 20 }]);
    expect(fake.callsOf('terminal.ack')).toEqual([{ terminal: 't1', bytes: 5 }]);
    fake.emit('terminal.exit', { terminal: 't1', code: 1 });
    expect(store.getState().status).toBe('closed');
  });

  it('follows the episode onto the branch a rollback made in the same sandbox: the session goes on, not reopened', async () => {
    const fake = createFakeBackend();
    fake.on('terminal.open', () => ({ terminal: 't1' }));
    for (const op of ['terminal.input', 'terminal.close'] as const) fake.on(op, () => ({}));
    const store = createTerminalStore(fake.client);
    await store.getState().attach('b-main');
    const out: [string, boolean][] = [];
    store.getState().onOutput((d, own) => out.push([d, own]));
    // Another branch's session is not taken over.
    store.getState().follow('b-other', 'b-new', 1);
    expect(store.getState().branch).toBe('b-main');
    expect(out).toEqual([]);
    store.getState().follow('b-main', 'b-new', 1);
    // The screen gets the window's own mark: what is above it after step 1 was undone.
    expect(out).toEqual([[rollbackMark(1), true]]);
    expect(rollbackMark(1)).toContain('rolled back to step 1: what ran above since is undone');
    await store.getState().attach('b-new');
    expect(store.getState()).toMatchObject({ branch: 'b-new', terminal: 't1', status: 'open' });
    expect(fake.callsOf('terminal.open')).toHaveLength(1);
    expect(fake.callsOf('terminal.close')).toHaveLength(0);
    // What a person types goes on reaching the same shell.
    store.getState().write('ls\r');
    await Promise.resolve();
    expect(fake.callsOf('terminal.input')).toEqual([{ terminal: 't1', data: 'ls\r' }]);
  });
});

describe('inspector store', () => {
  it('does not show an answer older than the step asked for again meanwhile (its result came)', async () => {
    const fake = createFakeBackend();
    let release: () => void = () => {};
    let calls = 0;
    // The first answer was read as the step began: its call, no result yet.
    fake.on('episode.stepDetail', async (req) => {
      if (++calls > 1) return stepDetail(req.step);
      await new Promise<void>((r) => (release = r));
      const d = stepDetail(req.step);
      return { ...d, calls: d.calls.map((c) => ({ ...c, result: null })) };
    });
    const store = createInspectorStore(fake.client);
    const shown: (boolean | null)[] = [];
    store.subscribe((s) => {
      if (s.load === 'ready') shown.push(s.detail?.calls[0].result !== null);
    });
    const first = store.getState().show('b1', 1, false);
    await new Promise((r) => setTimeout(r, 0));
    // The row changed (the result is recorded): the step is asked for again.
    void store.getState().show('b1', 1, false, 'r2');
    release();
    await first;
    expect(fake.callsOf('episode.stepDetail')).toHaveLength(2);
    expect(shown).toEqual([true]);
    expect(store.getState().detail?.calls[0].result).not.toBeNull();
  });

  it('caches complete steps and refetches a step still in progress', async () => {
    const fake = createFakeBackend();
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    const store = createInspectorStore(fake.client);
    await store.getState().show('b1', 2, true);
    await store.getState().show('b1', 3, false);
    await store.getState().show('b1', 2, true);
    await store.getState().show('b1', 3, false);
    expect(fake.callsOf('episode.stepDetail')).toEqual([
      { id: 'b1', step: 2 },
      { id: 'b1', step: 3 },
      { id: 'b1', step: 3 },
    ]);
    expect(store.getState().detail?.step).toBe(3);
  });
});

describe('manual decisions and scrubbing fetches', () => {
  it('queues a manual tool call, or refuses bad arguments', async () => {
    const fake = createFakeBackend();
    fake.on('episode.decide', () => ({}));
    const store = createInjectStore(fake.client);
    store.getState().setDecision({ tool: 'read_file', args: '[1]' });
    expect(await store.getState().decide('b1')).toBe(false);
    store.getState().setDecision({ args: '{"path": "a.txt"}' });
    expect(await store.getState().decide('b1')).toBe(true);
    expect(fake.callsOf('episode.decide')).toEqual([
      { id: 'b1', content: null, call: { name: 'read_file', arguments: { path: 'a.txt' } } },
    ]);
  });

  it('while scrubbing fast, fetches only the step asked for last once the one in flight returns', async () => {
    const fake = createFakeBackend();
    let release: () => void = () => {};
    fake.on('episode.stepDetail', async (req) => {
      if (req.step === 2) await new Promise<void>((r) => (release = r));
      return stepDetail(req.step);
    });
    const store = createInspectorStore(fake.client);
    const first = store.getState().show('b1', 2, true);
    await new Promise((r) => setTimeout(r, 0));
    void store.getState().show('b1', 3, true);
    void store.getState().show('b1', 4, true);
    release();
    await first;
    expect(fake.callsOf('episode.stepDetail')).toEqual([
      { id: 'b1', step: 2 },
      { id: 'b1', step: 4 },
    ]);
    expect(store.getState().detail?.step).toBe(4);
  });
});

describe('replay slice: consent to a recorded task wider than the defaults', () => {
  const WIDER = {
    code: 'consent_required' as const,
    message:
      'the task recorded in b-main asks for a looser sandbox than the defaults: sandbox.network "host" (default "none"). A trace or bundle cannot widen the sandbox on its own; if you trust it, consent with --allow-network (or --trust-recorded-task)',
  };

  it('asks the person what the task wants, and retries with consent only when allowed', async () => {
    const fake = createFakeBackend();
    // What the panel says while the allowed fork runs.
    let whileForking: unknown[] = [];
    fake.on('episode.fork', (req) => {
      if (!req.allow) return WIDER;
      whileForking = [selectUnderWay(store.getState()), selectBusyWhy(store.getState())];
      return { episode: 'ep1', branch: 'b-fork', state: { ...startedState, branch: 'b-fork', step: 2 } };
    });
    const opened: string[] = [];
    const store = createReplayStore(fake.client, { onBranch: (b) => opened.push(b) });
    const forking = store.getState().fork('b-main', 2);
    await vi.waitFor(() => expect(store.getState().consentAsk).not.toBeNull());
    expect(store.getState().consentAsk).toEqual({ op: 'fork', message: WIDER.message });
    expect(opened).toEqual([]);
    // Asked, not agreed: nothing is forking yet (the button read "Forking…" under the question),
    // and the buttons wait for the person's answer.
    expect(selectUnderWay(store.getState())).toBeNull();
    expect(selectBusyWhy(store.getState())).toMatch(/^Waiting for your answer/);
    store.getState().allowConsent();
    // Allowed: the fork is under way.
    expect(await forking).toBe('b-fork');
    expect(whileForking).toEqual(['fork', 'Waiting for the fork to finish.']);
    expect(opened).toEqual(['b-fork']);
    expect(store.getState().consentAsk).toBeNull();
    expect(fake.callsOf('episode.fork')).toEqual([
      { id: 'b-main', step: 2 },
      { id: 'b-main', step: 2, allow: ['network', 'image', 'limits', 'runtime'] },
    ]);
  });

  it('a refusal runs nothing more, for reopen, replay and what-if alike', async () => {
    const fake = createFakeBackend();
    fake.on('episode.reopen', () => WIDER);
    fake.on('episode.replayVerify', () => WIDER);
    fake.on('episode.whatIf', () => WIDER);
    const store = createReplayStore(fake.client);
    store.getState().setWhatIfArgs('{"command": "ls"}');
    for (const [op, run] of [
      ['reopen', () => store.getState().reopen('b-main', 1)],
      ['replay', () => store.getState().replay('b-main')],
      ['whatif', () => store.getState().whatIf('b-main', 1, 'execute_shell')],
    ] as const) {
      const pending = (run as () => Promise<unknown>)();
      await vi.waitFor(() => expect(store.getState().consentAsk?.op).toBe(op));
      // "Reopening…" under the question, before the person had agreed, is what a reviewer saw.
      expect(selectUnderWay(store.getState())).toBeNull();
      store.getState().denyConsent();
      expect(await pending).toBeFalsy();
      expect(store.getState().notice).toMatch(/not allowed/);
    }
    expect(fake.callsOf('episode.reopen')).toHaveLength(1);
    expect(fake.callsOf('episode.replayVerify')).toHaveLength(1);
    expect(fake.callsOf('episode.whatIf')).toHaveLength(1);
  });
});

describe('candidates slice: consent to a recorded task wider than the defaults', () => {
  const WIDER = {
    code: 'consent_required' as const,
    message:
      'the task recorded in b-main asks for a looser sandbox than the defaults: sandbox.network "host" (default "none"). A trace or bundle cannot widen the sandbox on its own; if you trust it, consent with --allow-network (or --trust-recorded-task)',
  };
  const SET = { group: 'cg-1', episode: 'ep1', parent: 'b-main', step: 1, candidates: [], notes: [] };

  it('the contract carries consent on the candidates path (episode.candidates, episode.stageCandidates)', () => {
    const allow = ['network'];
    expect(
      OPERATIONS['episode.candidates'].request.safeParse({ id: 'b', step: 1, n: 1, allow }).success,
    ).toBe(true);
    expect(
      OPERATIONS['episode.stageCandidates'].request.safeParse({ id: 'b', step: 1, count: 2, allow }).success,
    ).toBe(true);
  });

  it('asks the person, and tries with consent only when allowed; a refusal tries nothing more', async () => {
    const fake = createFakeBackend();
    let whileTrying: unknown = null;
    fake.on('episode.candidates', (req) => {
      if (!req.allow) return WIDER;
      whileTrying = selectCandidatesUnderWay(store.getState());
      return SET;
    });
    const store = createCandidatesStore(fake.client);
    store.getState().prepare(2);
    const trying = store.getState().tryAt('b-main');
    await vi.waitFor(() =>
      expect(store.getState().consentAsk).toEqual({ op: 'try', message: WIDER.message }),
    );
    expect(selectCandidatesUnderWay(store.getState())).toBeNull();
    expect(selectCandidatesBusyWhy(store.getState())).toMatch(/^Waiting for your answer/);
    store.getState().allowConsent();
    expect(await trying).toBe(true);
    expect(whileTrying).toBe('try');
    expect(store.getState().set?.group).toBe('cg-1');
    expect(store.getState().consentAsk).toBeNull();
    expect(fake.callsOf('episode.candidates')).toEqual([
      { id: 'b-main', step: 1, n: 2, actions: [], run_on: 0 },
      {
        id: 'b-main',
        step: 1,
        n: 2,
        actions: [],
        run_on: 0,
        allow: ['network', 'image', 'limits', 'runtime'],
      },
    ]);

    const refused = createFakeBackend();
    refused.on('episode.candidates', () => WIDER);
    const other = createCandidatesStore(refused.client);
    other.getState().prepare(2);
    const pending = other.getState().tryAt('b-main');
    await vi.waitFor(() => expect(other.getState().consentAsk).not.toBeNull());
    other.getState().denyConsent();
    expect(await pending).toBe(false);
    expect(other.getState().notice).toMatch(/not allowed/);
    expect(refused.callsOf('episode.candidates')).toHaveLength(1);
  });
});

describe('candidates slice: the Replay panel’s button belongs to the branch and step tried', () => {
  const cand = (index: number) => ({ index }) as never;
  const held = (parent: string, step: number, count: number) => ({
    group: 'cg-1',
    episode: 'ep1',
    parent,
    step,
    candidates: Array.from({ length: count }, (_, i) => cand(i)),
    notes: [],
  });

  it('"Show the 1 candidate" only on the branch and step held; other episodes offer their own', () => {
    const store = createCandidatesStore(createFakeBackend().client);
    // Tried on b-a at step 3 (forked at 2); the set stays held while another episode opens.
    store.setState({ at: 2, set: held('b-a', 2, 1) });
    const at = (branch: string, step: number) => selectCandidatesEntry(store.getState(), branch, step);
    expect(at('b-a', 3)).toEqual({ label: 'Show the 1 candidate', opens: 'view', why: null });
    expect(at('b-other', 3)).toEqual({ label: 'Try candidates for step 3…', opens: 'prepare', why: null });
    expect(at('b-fork-of-other-task', 2)).toEqual({
      label: 'Try candidates for step 2…',
      opens: 'prepare',
      why: null,
    });
    expect(at('b-a', 4)).toEqual({ label: 'Try candidates for step 4…', opens: 'prepare', why: null });
    store.setState({ set: held('b-a', 2, 3) });
    expect(at('b-a', 3).label).toBe('Show the 3 candidates');
  });

  it('a form being filled (nothing held) opens the view at its step; elsewhere it prepares', () => {
    const store = createCandidatesStore(createFakeBackend().client);
    store.getState().prepare(3);
    expect(selectCandidatesEntry(store.getState(), 'b-a', 3).opens).toBe('view');
    expect(selectCandidatesEntry(store.getState(), 'b-a', 5).opens).toBe('prepare');
  });

  it('step 0, the setup, has no call to try: the button says so, disabled (it offered "for step 0…")', () => {
    const store = createCandidatesStore(createFakeBackend().client);
    expect(selectCandidatesEntry(store.getState(), 'b-a', 0)).toEqual({
      label: 'Try candidates for a step…',
      opens: 'prepare',
      why: NO_CANDIDATES_AT_SETUP,
    });
  });

  it('a branch whose model endpoint failed offers no candidates, at any step: they would ask that endpoint again (held ones are still shown)', () => {
    const store = createCandidatesStore(createFakeBackend().client);
    const again =
      'Its model endpoint became unreachable after step 2: going on as recorded would call it again, so fork it with another agent or endpoint.';
    for (const step of [0, 1, 3])
      expect(selectCandidatesEntry(store.getState(), 'b-a', step, again).why, `step ${step}`).toBe(
        CANDIDATES_NEED_ANOTHER_ENDPOINT,
      );
    expect(CANDIDATES_NEED_ANOTHER_ENDPOINT).toMatch(/Fork settings…/);
    // A form begun before the end (engaged) is refused too: the button does not open it.
    store.getState().prepare(3);
    expect(selectCandidatesEntry(store.getState(), 'b-a', 3, again)).toEqual({
      label: 'Try candidates for step 3…',
      opens: 'prepare',
      why: CANDIDATES_NEED_ANOTHER_ENDPOINT,
    });
    // A view opened before the endpoint failed stays open: its Try says the same (busy first).
    expect(selectCandidatesTryWhy(store.getState(), null)).toBeNull();
    expect(selectCandidatesTryWhy(store.getState(), again)).toBe(CANDIDATES_NEED_ANOTHER_ENDPOINT);
    store.setState({ running: 'try' });
    expect(selectCandidatesTryWhy(store.getState(), again)).toBe('Waiting for the candidates to finish.');
    store.setState({ running: null, at: 2, set: held('b-a', 2, 2) });
    expect(selectCandidatesEntry(store.getState(), 'b-a', 3, again)).toEqual({
      label: 'Show the 2 candidates',
      opens: 'view',
      why: null,
    });
  });
});
