import { describe, expect, it } from 'vitest';
import type { Project } from '../../shared/contract/models';
import { createAppStores } from '../../renderer/src/stores/app-stores';
import { createFakeBackend } from '../support/renderer-fake-client';
import { branchSummary, episodeView, stepDetail } from '../support/renderer-fixtures';

/** Waits (bounded) for a condition the async wiring makes true. */
async function until(cond: () => boolean, ms = 1000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('app stores wiring', () => {
  it('a window opened on a branch asks for it alone, and for the library and the rest once its rows are drawn', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(2, { state: null }));
    let painted: (() => void) | null = null;
    const stores = createAppStores(fake.client, {
      schedule: (f) => f(),
      afterPaint: (f) => {
        painted = f;
      },
    });
    stores.start('b1');
    await until(() => stores.stepper.getState().load === 'ready');
    // Asked beside the open, these were answered first and the open behind them (issue 33.9).
    const rest = [
      'library.list',
      'tasks.list',
      'cases.list',
      'projects.list',
      'batch.list',
      'agents.list',
      'settings.get',
    ] as const;
    expect(fake.calls[0].op).toBe('episode.open');
    for (const op of rest) expect(fake.callsOf(op)).toEqual([]);
    expect(painted).not.toBeNull();
    painted!();
    for (const op of rest) expect(fake.callsOf(op)).toHaveLength(1);
    stores.dispose();
  });

  it("a task's image being built shows in the notification area, line by line, one notice", () => {
    const fake = createFakeBackend();
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    const image = 'stepbox-build:abc';
    /** One progress event of the build of `image` for task `task`, and the notices it leaves. */
    const said = (phase: 'start' | 'step' | 'built', line: string, from?: string, task = '/p'): string[] => {
      fake.emit('image.progress', { task, image, kind: 'build', phase, line, ...(from ? { from } : {}) });
      return stores.notices.getState().items.map((n) => n.text);
    };
    said('start', '');
    expect(said('step', 'Step 2/4 : RUN make')).toEqual([
      'Building image stepbox-build:abc: Step 2/4 : RUN make',
    ]);
    expect(said('built', '')).toEqual(['Image stepbox-build:abc built']);
    // Named by its Dockerfile, from its folder, where the build says which.
    const from = '/home/me/projects/nopy/Dockerfile';
    expect(said('start', '', from)).toEqual(['Building the image of nopy/Dockerfile…']);
    expect(said('step', '[build] Step 2/4 : RUN make', from)).toEqual([
      'Building the image of nopy/Dockerfile: Step 2/4 : RUN make',
    ]);
    expect(said('built', '', from)).toEqual(['The image of nopy/Dockerfile is built (stepbox-build:abc)']);
    // A Dockerfile in a folder of the task's (a Harbor task's environment/): said from the task's folder.
    expect(
      said('start', '', '/home/me/harbor-shout/environment/Dockerfile', '/home/me/harbor-shout'),
    ).toEqual(['Building the image of harbor-shout/environment/Dockerfile…']);
    stores.dispose();
  });

  it("a made image's line goes once the episode's first step starts; a build under way stays", async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(0));
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    const image = 'stepbox-build:abc';
    fake.emit('image.progress', { task: '/p', image, kind: 'build', phase: 'built', line: '' });
    await stores.stepper.getState().open('b-main');
    await until(() => stores.stepper.getState().load === 'ready');
    // Still said at step 0, on the episode it was made for.
    expect(stores.notices.getState().items.map((n) => [n.branch, n.text])).toEqual([
      ['b-main', 'Image stepbox-build:abc built'],
    ]);
    stores.stepper.setState({ state: 'running' });
    expect(stores.notices.getState().items).toEqual([]);
    // A build still going says on.
    stores.stepper.setState({ state: 'paused' });
    fake.emit('image.progress', { task: '/p', image, kind: 'build', phase: 'start', line: '' });
    stores.stepper.setState({ state: 'running' });
    expect(stores.notices.getState().items.map((n) => n.text)).toEqual([`Building image ${image}…`]);
    stores.dispose();
  });

  it("a task's image being pulled shows the same way: the layer's progress, then pulled", () => {
    const fake = createFakeBackend();
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    const image = 'registry.example/team/app:1';
    const emit = (phase: 'start' | 'step' | 'pulled', line: string) =>
      fake.emit('image.progress', { task: '/p', image, kind: 'pull', phase, line });
    emit('start', `[pull] ${image}: not in the engine, pulling it`);
    expect(stores.notices.getState().items.map((n) => n.text)).toEqual([`Pulling image ${image}…`]);
    emit(
      'step',
      `[pull] ${image}: layer 0123456789ab Downloading 5.0 MB/10.0 MB (0/2 layers, 5.0 MB of 10.0 MB)`,
    );
    expect(stores.notices.getState().items.map((n) => n.text)).toEqual([
      `Pulling image ${image}: layer 0123456789ab Downloading 5.0 MB/10.0 MB (0/2 layers, 5.0 MB of 10.0 MB)`,
    ]);
    emit('pulled', `[pull] ${image}: pulled in 812 ms`);
    expect(stores.notices.getState().items.map((n) => n.text)).toEqual([`Image ${image} pulled`]);
    stores.dispose();
  });

  it('opening a live branch points the sandbox, terminal and inspector at it', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(2));
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('sandbox.info', () => ({ docker: { ok: true, message: 'ok', fix: null }, sandbox: null }));
    fake.on('terminal.open', () => ({ terminal: 't1' }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().open('b-main');
    await until(
      () => stores.inspector.getState().detail !== null && stores.terminal.getState().status === 'open',
    );
    expect(fake.callsOf('sandbox.info')).toContainEqual({ id: 'b-main' });
    expect(fake.callsOf('terminal.open')).toEqual([{ id: 'b-main', cols: 80, rows: 24 }]);
    expect(stores.inspector.getState().detail?.step).toBe(2);
    stores.stepper.getState().select(1);
    await until(() => stores.inspector.getState().detail?.step === 1);
    stores.dispose();
  });

  it("What-if starts from the viewed step's call, set in the same update as the step's detail (no render of its own)", async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(3, { state: null }));
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('episode.stepDetails', (req) => ({ details: req.steps.map((s) => stepDetail(s)) }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().open('b-main');
    await until(() => stores.inspector.getState().detail?.step === 3);
    expect(stores.replay.getState().whatIfArgs).toBe(JSON.stringify({ command: 'echo 3' }, null, 2));
    // Step 2 was fetched ahead: shown at the click, its arguments with it, before anything renders.
    await until(() => fake.callsOf('episode.stepDetails').length > 0);
    await new Promise((r) => setTimeout(r, 10));
    let seen: string | null = null;
    const off = stores.inspector.subscribe(() => {
      seen = stores.replay.getState().whatIfArgs;
    });
    stores.stepper.getState().select(2);
    off();
    expect(stores.inspector.getState().detail?.step).toBe(2);
    expect(stores.replay.getState().whatIfArgs).toBe(JSON.stringify({ command: 'echo 2' }, null, 2));
    expect(seen).toBe(JSON.stringify({ command: 'echo 2' }, null, 2));
    // A person's edit stays while the same step is viewed.
    stores.replay.getState().setWhatIfArgs('{"command": "ls"}');
    stores.stepper.getState().select(2);
    expect(stores.replay.getState().whatIfArgs).toBe('{"command": "ls"}');
    stores.dispose();
  });

  it('a step shown from the details held asks for its neighbours only once its frame is painted; a step not held asks at once', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(40, { state: null }));
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('episode.stepDetails', (req) => ({ details: req.steps.map((s) => stepDetail(s)) }));
    const painted: (() => void)[] = [];
    const stores = createAppStores(fake.client, { schedule: (f) => f(), afterPaint: (f) => painted.push(f) });
    const fetched = () => (fake.callsOf('episode.stepDetails') as { steps: number[] }[]).map((c) => c.steps);
    await stores.stepper.getState().open('b-main');
    // Not held: asked for with its neighbours at once (the step first).
    stores.stepper.getState().select(20);
    expect(fetched().at(-1)?.[0]).toBe(20);
    await until(() => stores.inspector.getState().detail?.step === 20);
    // Its neighbours, 12 each side, arrive in calls one after the other.
    await until(() => fetched().flat().includes(8) && fetched().flat().includes(32));
    await new Promise((r) => setTimeout(r, 10));
    const asked = fake.calls.length;
    // Held: shown in the same update, and nothing sent before the frame is painted.
    painted.length = 0;
    stores.stepper.getState().select(21);
    expect(stores.inspector.getState().detail?.step).toBe(21);
    expect(fake.calls.length).toBe(asked);
    // A newer step change before the paint drops the older wish.
    stores.stepper.getState().select(19);
    expect(painted).toHaveLength(2);
    painted[0]();
    expect(fake.calls.length).toBe(asked);
    painted[1]();
    expect(fake.calls.length).toBe(asked + 1);
    expect(fetched().at(-1)).toContain(7);
    stores.dispose();
  });

  it("the Replay pane's 'forked … now on …' goes once the person steps on the new branch, not while it loads", async () => {
    const fake = createFakeBackend();
    const fork = episodeView(1, {
      summary: branchSummary({ branch: 'b-fork', parent_branch: 'b-main', fork_step: 1, steps: 1 }),
      state: { episode: 'ep1', branch: 'b-fork', state: 'idle', step: 1, reason: null },
    });
    fake.on('episode.open', (req) => (req.id === 'b-fork' ? fork : episodeView(2)));
    fake.on('episode.fork', () => ({ episode: 'ep1', branch: 'b-fork', state: fork.state! }));
    let answer: (() => void) | null = null;
    fake.on(
      'episode.step',
      () =>
        new Promise((resolve) => {
          answer = () =>
            resolve({ episode: 'ep1', branch: 'b-fork', state: 'paused', step: 2, reason: null });
        }),
    );
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().open('b-main');
    await stores.replay.getState().fork('b-main', 1);
    await until(
      () => stores.stepper.getState().load === 'ready' && stores.stepper.getState().branch === 'b-fork',
    );
    // The fork's rows arriving are not a step: the answer stays.
    expect(stores.replay.getState().notice).toBe('forked at step 1 — see the Inspector');
    // F10 on the fork: from the moment the step is asked for, the answer is history.
    const stepping = stores.stepper.getState().step();
    expect(stores.replay.getState().notice).toBeNull();
    answer!();
    await stepping;
    stores.dispose();
  });

  it('a recorded branch gets no terminal session', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(2, { state: null }));
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('sandbox.info', () => ({ docker: { ok: true, message: 'ok', fix: null }, sandbox: null }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().open('b-main');
    await until(() => stores.inspector.getState().detail !== null);
    expect(stores.stepper.getState().live).toBe(false);
    expect(fake.callsOf('terminal.open')).toEqual([]);
    stores.dispose();
  });

  it('a start sends the session’s pause switches and breakpoints, so a case run at once pauses at its first tool (not after the window set them)', async () => {
    const fake = createFakeBackend();
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    fake.on('episode.setStopPoints', (r) => ({
      episode: 'ep1',
      branch: r.id,
      state: 'paused',
      step: 0,
      reason: null,
      stop_points: { before_tool: r.stop_points.before_tool ?? false, before_answer: false },
    }));
    fake.on('episode.setBreakpoints', (r) => ({ breakpoints: r.breakpoints }));
    fake.on('episode.start', () => ({
      episode: 'ep2',
      branch: 'b-new',
      state: 'running',
      step: 0,
      reason: null,
    }));
    // The new episode ran to its end before the window opened it, its sandbox already returned.
    fake.on('episode.open', () => episodeView(3, { state: null }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    await stores.stepper.getState().setStopPoint('before_tool', true);
    await stores.stepper.getState().setBreakpoints([{ kind: 'step', step: 2 }]);
    const task = { id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null };
    expect(await stores.episodes.getState().startTask(task)).toBe('b-new');
    expect(fake.callsOf('episode.start').at(-1)).toMatchObject({
      stop_points: { before_tool: true },
      breakpoints: [{ kind: 'step', step: 2 }],
    });
    // The switch still shows ticked on the recorded branch: it is the person's, for what starts next.
    await until(() => stores.stepper.getState().load === 'ready');
    expect(stores.stepper.getState().stopPoints.before_tool).toBe(true);
    stores.dispose();
  });

  it('asks before a start stops the live episode shown only when it has work: a step taken, running or held', async () => {
    const fake = createFakeBackend();
    fake.on('episode.stepDetail', (req) => stepDetail(req.step));
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    fake.on('episode.stop', () => ({ status: 'interrupted' as const, end_reason: 'stopped' }));
    fake.on('episode.checkStart', () => ({}));
    fake.on('episode.start', () => ({
      episode: 'ep2',
      branch: 'b-new',
      state: 'paused',
      step: 0,
      reason: null,
    }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    const task = { id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null };
    // Set up, no step taken: stopped without a question.
    fake.on('episode.open', () =>
      episodeView(0, { state: { episode: 'ep1', branch: 'b-main', state: 'idle', step: 0, reason: null } }),
    );
    await stores.stepper.getState().open('b-main');
    expect(await stores.episodes.getState().startTask(task)).toBe('b-new');
    expect(fake.callsOf('episode.stop')).toEqual([{ id: 'b-main' }]);
    // Two steps taken, paused: the question comes first.
    fake.on('episode.open', () => episodeView(2));
    await stores.stepper.getState().open('b-main');
    const asked = stores.episodes.getState().startTask(task);
    await until(() => stores.episodes.getState().stopQuestion !== null);
    expect(stores.episodes.getState().stopQuestion?.left).toEqual({
      branch: 'b-main',
      task: 'fix-tests',
      steps: 2,
      working: true,
    });
    stores.episodes.getState().answerStop(false);
    expect(await asked).toBeNull();
    expect(fake.callsOf('episode.stop')).toHaveLength(1);
    expect(stores.stepper.getState().branch).toBe('b-main');
    stores.dispose();
  });

  it('a start from the library closes candidates still held for the old episode (no sandbox runs unseen)', async () => {
    const fake = createFakeBackend();
    fake.on('library.list', () => ({ episodes: [], total: 0 }));
    fake.on('episode.open', () => episodeView(0, { state: null }));
    fake.on('episode.discardCandidates', () => ({}));
    fake.on('episode.start', () => ({
      episode: 'ep2',
      branch: 'b-new',
      state: 'paused',
      step: 0,
      reason: null,
    }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    stores.candidates.setState({
      set: { group: 'g1', episode: 'ep1', parent: 'b-main', step: 1, candidates: [], notes: [] },
    });
    await stores.episodes
      .getState()
      .startTask({ id: 'hello', name: 'hello', goal: 'g', path: 'p', agent: null });
    expect(fake.callsOf('episode.discardCandidates')).toEqual([{ group: 'g1' }]);
    await until(() => stores.candidates.getState().set === null);
    // The new episode's Replay pane says nothing of the old episode's candidates.
    expect(stores.candidates.getState().notice).toBeNull();
    stores.dispose();
  });

  it("a failed start stays said beside what was started while the lists are read again; the project's edit, a new kind or its removal takes it away", async () => {
    const fake = createFakeBackend();
    let listed = 0;
    fake.on('library.list', () => {
      listed++;
      return { episodes: [], total: 0 };
    });
    const project: Project = { path: '/home/me/nopy', name: 'nopy', kind: 'folder', opened_at: 1 };
    let projects = [project];
    fake.on('projects.list', () => ({ projects, native_picker: false }));
    fake.on('projects.remove', () => ({ removed: true }));
    const built = "The command '/bin/sh -c false' returned a non-zero code: 1: fix the Dockerfile";
    fake.on('episode.start', () => ({ code: 'build_failed' as const, message: built }));
    fake.on('episode.stop', () => ({ code: 'internal' as const, message: 'the engine did not answer' }));
    const stores = createAppStores(fake.client, { schedule: (f) => f() });
    const { episodes } = stores;
    await stores.projects.getState().load();
    stores.projects.getState().setGoal(project.path, 'Count the words');
    stores.projects.getState().setCheck(project.path, 'test -f count.txt');
    // A project names no agent of its own: with the field empty its Start is refused before asking.
    episodes.getState().setAgent('manual');
    const failed = { key: project.path, text: built };
    const start = () => episodes.getState().startProject(project, 'Count the words');
    expect(await start()).toBeNull();
    expect(episodes.getState().startFailed).toEqual(failed);
    // The store watch tells library.changed (a build writing, another process's episode): the
    // list is read again, and the error was gone with it (CI run 8). The projects read again too.
    const before = listed;
    fake.emit('library.changed', { episode: null, on_disk: ['ep-elsewhere'] });
    await until(() => listed > before && episodes.getState().load === 'ready');
    await episodes.getState().refresh();
    await stores.projects.getState().load();
    expect(episodes.getState().startFailed).toEqual(failed);
    // The Goal and Check typed on the card are kept by the same reads.
    expect(stores.projects.getState().goals[project.path]).toBe('Count the words');
    expect(stores.projects.getState().checks[project.path]).toBe('test -f count.txt');
    // A failed Stop is said under its branch the same way, through the list's read after it.
    expect(await episodes.getState().stopBranch('b-live')).toBe(false);
    expect(episodes.getState().stopFailed).toEqual({ branch: 'b-live', text: 'the engine did not answer' });
    // The person acts on the project: its Goal edited, the error no longer says what Start meets.
    stores.projects.getState().setGoal(project.path, 'Count the lines');
    expect(episodes.getState().startFailed).toBeNull();
    expect(await start()).toBeNull();
    stores.projects.getState().setCheck(project.path, 'test -f words.txt');
    expect(episodes.getState().startFailed).toBeNull();
    // Read anew as another kind (a task.json written in a shell): stale.
    expect(await start()).toBeNull();
    projects = [{ ...project, kind: 'task' }];
    await stores.projects.getState().load();
    expect(episodes.getState().startFailed).toBeNull();
    // Removed: gone with its card (opened again, it does not bring the old error back).
    expect(await start()).toBeNull();
    projects = [];
    await stores.projects.getState().remove(project.path);
    expect(episodes.getState().startFailed).toBeNull();
    stores.dispose();
  });
});
