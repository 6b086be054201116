import type { StepboxClient } from '../../../shared/contract/client';
import { formatSpan } from '../../../shared/format-span';
import { pathForPeople, pathRoots } from '../../../shared/start-paths';
import type { ToolCall } from '../../../shared/trace-events';
import { createAgentOutputStore, type AgentOutputStore } from './agent-output/agent-output-store';
import { createAgentsStore, type AgentsStore } from './agents/agents-store';
import {
  batchEndText,
  createBatchesStore,
  selectBatchesEnded,
  type BatchesStore,
} from './batches/batches-store';
import { createCandidatesStore, type CandidatesStore } from './candidates/candidates-store';
import { createEpisodesStore, type EpisodesStore } from './episodes/episodes-store';
import { createInjectStore, type InjectStore } from './inject/inject-store';
import { createProjectsStore, type ProjectsStore } from './projects/projects-store';
import { NEXT_BRANCH, createNoticesStore, type NoticesStore } from './notices/notices-store';
import { createInspectorStore, type InspectorState, type InspectorStore } from './inspector/inspector-store';
import { detailFinal, detailRevision, detailsToHold } from './inspector/details-ahead';
import { createPickerStore, type PickerStore } from './picker/picker-store';
import { createReplayStore, type ReplayStore } from './replay/replay-store';
import { createRunningStore, type Released, type RunningStore } from './running/running-store';
import { createSandboxStore, type SandboxStore } from './sandbox/sandbox-store';
import { createSideBySideStore, type SideBySideStore } from './side-by-side/side-by-side-store';
import {
  afterNextPaint,
  createStepperStore,
  selectLastStep,
  selectMovedOn,
  selectViewedRow,
  selectViewedStep,
  type StepperOptions,
  type StepperStore,
} from './stepper/stepper-store';
import { createTeachingStore, type TeachingStore } from './teaching/teaching-store';
import { createTerminalStore, type TerminalStore } from './terminal/terminal-store';
import { reopenLabel } from './stepper/way-on';

/** Every slice of the window, created over one client. */
export interface AppStores {
  readonly episodes: EpisodesStore;
  readonly stepper: StepperStore;
  readonly terminal: TerminalStore;
  readonly inspector: InspectorStore;
  /** An exec: agent's own stdout/stderr, live, per step of the open branch. */
  readonly agentOutput: AgentOutputStore;
  readonly replay: ReplayStore;
  readonly candidates: CandidatesStore;
  /** Candidates and compare in a view of their own (over the centre and right columns). */
  readonly sideBySide: SideBySideStore;
  readonly sandbox: SandboxStore;
  readonly inject: InjectStore;
  readonly batches: BatchesStore;
  /** Save as case and Share… for the open branch. */
  readonly teaching: TeachingStore;
  /** The window's one notification area (a bar at its foot): messages tied to their episode. */
  readonly notices: NoticesStore;
  /** Open… and the projects opened with it. */
  readonly projects: ProjectsStore;
  /** The start form's file picker (the task's folder and the store only). */
  readonly picker: PickerStore;
  /** The Agents panel: recipes, installs and their progress (the start form offers the installed ones). */
  readonly agents: AgentsStore;
  /** Live sandboxes' idle times and the idle limit (the Running list); releases become notices. */
  readonly running: RunningStore;
  /** Loads the library, catalog and Docker status (first render does not wait on them); opens `branch` if given. */
  start(branch?: string | null): void;
  dispose(): void;
}

/**
 * Creates the slices and wires them: opening a branch points the sandbox panel, the
 * terminal and the inspector at it; the viewed step drives the inspector.
 */
export function createAppStores(client: StepboxClient, options: StepperOptions = {}): AppStores {
  const stepper = createStepperStore(client, options);
  const open = (branch: string): void => void stepper.getState().open(branch);
  // The window shows one live episode: one the library starts replaces the live one shown,
  // and candidates still held for the old one close (their sandboxes would run unseen).
  const startedFromLibrary = (branch: string): void => {
    void candidates.getState().discard({ quiet: true });
    open(branch);
  };
  const notices = createNoticesStore();
  const episodes = createEpisodesStore(
    client,
    startedFromLibrary,
    () => {
      const s = stepper.getState();
      return s.branch !== null && s.live
        ? {
            branch: s.branch,
            task: s.view?.summary.task ?? s.branch,
            steps: selectLastStep(s),
            working: s.state === 'running' || selectLastStep(s) > 0 || s.held !== null,
          }
        : null;
    },
    () => stepper.getState().sessionSwitches(),
    notices,
    open,
  );
  const terminal = createTerminalStore(client);
  const picker = createPickerStore(client);
  const inspector = createInspectorStore(client);
  const agentOutput = createAgentOutputStore(client);
  const sandbox = createSandboxStore(client);
  const inject = createInjectStore(client);
  // A batch slot opens its episode (an episode id opens its main branch).
  const batches = createBatchesStore(client, open);
  const agents = createAgentsStore(client);
  const candidates = createCandidatesStore(client, { onBranch: open });
  const sideBySide = createSideBySideStore();
  // A saved case joins the library's case list.
  const projects = createProjectsStore(client);
  const teaching = createTeachingStore(client, () => void episodes.getState().loadCatalog(), notices);
  const replay = createReplayStore(client, {
    onBranch: open,
    rolledBack: (r) => stepper.getState().noteRollback(r),
    // A rollback is recorded inside the current step (the rows after `step` stay), and the live
    // sandbox now holds step `step`'s files: the window follows the latest step, so the terminal
    // is the live one, not step `step`'s recorded history.
    onRolledBack: () => {
      inspector.getState().invalidate();
      void stepper
        .getState()
        .reload()
        .then(() => stepper.getState().select(null));
    },
  });

  // A live sandbox released (idle past ui.idle_release, or the last window closed): a notice
  // about that episode with the way back, "Reopen live at step k": the Replay panel's Reopen, in
  // its words (way-on.ts), acting at the same step for the step the release cut short.
  const running = createRunningStore(client, (released: Released) => {
    const summary = episodes
      .getState()
      .allEpisodes.flatMap((e) => e.branches)
      .find((b) => b.branch === released.branch);
    notices.getState().post({
      kind: 'idle-release',
      branch: released.branch,
      tone: 'info',
      text: releasedNotice(summary?.task ?? null, released),
      action: {
        label: reopenLabel(released.step),
        run: () =>
          void replay
            .getState()
            .reopen(released.branch, released.step)
            .then((b) => {
              const error = replay.getState().error;
              if (b === null && error)
                notices
                  .getState()
                  .post({ kind: 'idle-release', branch: released.branch, tone: 'error', text: error });
            }),
      },
    });
  });

  // The desktop menu's debugger items arrive as events (the keys themselves reach the page too).
  const offCommand = client.onAppCommand(({ command }) => {
    const s = stepper.getState();
    if (command === 'step') void s.step();
    else if (command === 'continue') void s.run();
    else if (command === 'stop') void s.stop();
    else if (command === 'pause') void s.pause();
    else void s.toggleBreakpoint(Math.max(1, s.selectedStep ?? selectLastStep(s) + 1));
  });

  // Candidates being chosen, tried or held open their view; a pick (the chosen branch now
  // open, the set cleared) closes it, so the window shows the branch it continues on.
  const offCandidates = candidates.subscribe((c, prev) => {
    const engaged = c.at !== null || c.set !== null || c.running !== null;
    const was = prev.at !== null || prev.set !== null || prev.running !== null;
    if (engaged && !was) sideBySide.getState().show('candidates');
    if (prev.running === 'pick' && c.running === null && c.set === null) sideBySide.getState().close();
  });
  // A task's image being built for a start (its Dockerfile, a devcontainer's, a Harbor task's),
  // or pulled (the engine lacks it): what the engine is doing, line by line, in the
  // notification area, tied to the episode it is for (the next shown) and gone with it.
  // Once made (built, found built, pulled), its line has said what it had to: it goes when the
  // episode's first step starts (it stayed at the window's foot for the whole episode).
  let imageMade: number | null = null;
  const offImage = client.onImageProgress((p) => {
    const id = notices
      .getState()
      .post({ kind: 'image', branch: NEXT_BRANCH, tone: 'info', text: imageProgressText(p) });
    imageMade = p.phase === 'built' || p.phase === 'cached' || p.phase === 'pulled' ? id : null;
  });
  // The library changed (a start, a stop, a sandbox given back): the warm pool's idle count too.
  const offLibrary = episodes.subscribe((e, prev) => {
    if (e.allEpisodes !== prev.allEpisodes) void sandbox.getState().countWarm();
    // A start that failed says why where it was asked, in full (a build's last lines and the
    // fix); the image line it left ("Building image …: the failed command") read as still going.
    if (e.startFailed !== null && e.startFailed !== prev.startFailed)
      for (const n of notices.getState().items)
        if (n.kind === 'image' && n.branch === NEXT_BRANCH) notices.getState().dismiss(n.id);
  });
  // A project's failed start stays said on its card while the lists are read again (a card's
  // pointer or focus reads the projects; the store watch, the episodes). It no longer says what
  // the next Start would meet once the person edits the project's Goal or Check, removes it, or
  // it is read as another kind of world or with a problem: then it goes.
  const offProjects = projects.subscribe((p, prev) => {
    const key = episodes.getState().startFailed?.key;
    const was = prev.projects.find((q) => q.path === key);
    if (key === undefined || was === undefined) return;
    const now = p.projects.find((q) => q.path === key);
    if (
      now?.kind !== was.kind ||
      now.world !== was.world ||
      now.problem !== was.problem ||
      p.goals[key] !== prev.goals[key] ||
      p.checks[key] !== prev.checks[key]
    )
      episodes.getState().dropStartFailure(key);
  });
  // A batch that stops running says how it went in the notification area (its section may be
  // scrolled out of view at the library's foot).
  const offBatches = batches.subscribe((b, prev) => {
    if (b.batches === prev.batches) return;
    for (const ended of selectBatchesEnded(prev.batches, b.batches))
      notices.getState().post({
        kind: 'batch',
        branch: null,
        tone: ended.state === 'done' ? 'info' : 'error',
        text: batchEndText(ended),
        action: { label: 'Show the batch', run: () => batches.getState().reveal(ended.batch) },
      });
  });
  // A comparison asked for shows in the compare tab.
  const offReplay = replay.subscribe((r, prev) => {
    if (r.running === 'compare' && prev.running !== 'compare') sideBySide.getState().show('compare');
  });

  // What-if starts from the viewed step's recorded call: its arguments are set when the
  // inspector's detail changes, in the same update (set by WhatIf's effect after the commit,
  // every click and slider move was a second render and commit before its frame, issue 33.9).
  const offWhatIf = inspector.subscribe((i, prev) => {
    const call = whatIfCall(i);
    if (call && call !== whatIfCall(prev))
      replay.getState().setWhatIfArgs(JSON.stringify(call.arguments, null, 2));
  });

  // The neighbours' details asked for after the frame of a step shown from the cache (below);
  // a newer step change cancels the wish of the one before.
  const whenPainted = options.afterPaint ?? afterNextPaint;
  let aheadWish = 0;
  const offStepper = stepper.subscribe((s, prev) => {
    // A rollback goes on in a branch it makes in the same sandbox: the terminal session goes on
    // with it (asked before the replay slice is reset for the new branch, below).
    if (
      s.branch !== prev.branch &&
      s.branch !== null &&
      prev.branch !== null &&
      replay.getState().running === 'rollback' &&
      s.rolledBack?.from === prev.branch
    )
      terminal.getState().follow(prev.branch, s.branch, s.rolledBack.to_step);
    // The Replay pane's answer ("rolled back to step 1: now on …", "forked at step 2: now on …")
    // is about the moment it answered: once the person steps on, it is stale (it stayed beside
    // step 2 after a rollback to 1). Another branch opened resets the slice (below).
    if (selectMovedOn(prev, s) && replay.getState().notice !== null) replay.getState().dismissNotice();
    if (imageMade !== null && s.state === 'running' && prev.state !== 'running') {
      notices.getState().dismiss(imageMade);
      imageMade = null;
    }
    if (s.branch !== prev.branch) {
      // Another branch opened (not a pick, which holds the set until it lands): what the view
      // showed was about the branch left.
      if (candidates.getState().set === null && candidates.getState().running === null)
        sideBySide.getState().close();
      agentOutput.getState().follow(s.branch);
      replay.getState().reset();
      // Held candidates stay while another branch opens: a pick opens the chosen one, then clears them.
      if (candidates.getState().set === null) candidates.getState().reset();
      inspector.getState().invalidate();
      inspector.getState().follow(s.branch);
      // Messages about the branch left go with it.
      notices.getState().follow(s.branch);
      // What was typed for the branch left stays with it (issue 33, item 7).
      inject.getState().follow(s.branch);
    }
    if (s.branch !== prev.branch || (s.load === 'ready' && prev.load !== 'ready') || s.live !== prev.live) {
      const live = s.load === 'ready' && s.live && s.branch !== null;
      if (s.load !== 'loading')
        void sandbox.getState().watch(s.branch && s.load === 'ready' ? s.branch : null);
      // Not while the branch a rollback made loads: its session was just carried over.
      const carried = s.load === 'loading' && terminal.getState().branch === s.branch;
      if (live && s.branch) void terminal.getState().attach(s.branch);
      else if (!s.live && !carried && terminal.getState().branch !== null) void terminal.getState().detach();
    }
    // The start form's agent fields were typed for the episode left (issue 33, item 7).
    const episode = s.view?.summary.episode ?? null;
    if (episode !== (prev.view?.summary.episode ?? null)) episodes.getState().follow(episode);
    if (s.branch !== prev.branch) episodes.getState().showBranch(s.branch);
    // "Queued: the next step uses it" is stale once a step took it, and on another branch.
    if (s.branch !== prev.branch || selectLastStep(s) > selectLastStep(prev)) inject.getState().settle();
    // The library's step counts and statuses move when a live branch stops (not when a
    // branch opens already stopped or ended: the list knows it).
    if (s.state !== prev.state && prev.state !== null && (s.state === 'paused' || s.state === 'ended'))
      void episodes.getState().refresh();
    const step = selectViewedStep(s);
    const row = selectViewedRow(s);
    if (s.branch !== prev.branch || step !== selectViewedStep(prev) || row !== selectViewedRow(prev)) {
      const wish = ++aheadWish;
      const { branch, rows, live } = s;
      const final = detailFinal(row, live);
      const revision = detailRevision(row);
      if (branch !== null && step !== null) {
        const ahead = (now: boolean) =>
          void inspector.getState().prefetch(branch, detailsToHold(rows, step, live), now);
        // Held (a click beside the viewed row, ←/→): the step shows from the cache in this
        // update, and its neighbours are asked for once the frame that shows it is painted.
        // Asked here, the call's sending and its answer (decoded, checked, cached) came
        // before that frame (issue 33.9).
        if (final && inspector.getState().holds(branch, step, revision))
          whenPainted(() => {
            if (wish === aheadWish) ahead(false);
          });
        // Else its details and its neighbours', asked for first (`show` then waits for that
        // call): a click beside the viewed row (or ←/→) then shows from what the window holds,
        // in the frame of the click.
        else ahead(final);
      }
      void inspector.getState().show(branch, step, final, revision);
    }
  });

  return {
    episodes,
    teaching,
    notices,
    projects,
    picker,
    stepper,
    terminal,
    inspector,
    agentOutput,
    replay,
    candidates,
    sideBySide,
    sandbox,
    inject,
    batches,
    agents,
    running,
    start(branch) {
      const rest = (): void => {
        void episodes.getState().refresh();
        void episodes.getState().loadCatalog();
        void projects.getState().load();
        // The files chosen in Your folders are kept by the server: a reload's cards say them readable.
        void picker.getState().loadChosen();
        void sandbox.getState().checkDocker();
        void batches.getState().refresh();
        void agents.getState().refresh();
        void running.getState().loadSettings();
      };
      if (!branch) return rest();
      // A window opened on a branch asks for it alone, and for the rest once its rows are
      // drawn: asked together, the server answered the open behind them (the library, the
      // catalog, Docker's info: 300–700 ms instead of 60–70 on a busy 2-core machine, the
      // largest part of the first render's wait, issue 33.9).
      void stepper
        .getState()
        .open(branch)
        .finally(() => (options.afterPaint ?? afterNextPaint)(rest));
    },
    dispose() {
      offStepper();
      offWhatIf();
      offCandidates();
      offReplay();
      offBatches();
      offProjects();
      offLibrary();
      offCommand();
      offImage();
      stepper.getState().dispose();
      episodes.getState().dispose();
      terminal.getState().dispose();
      agentOutput.getState().dispose();
      sandbox.getState().dispose();
      batches.getState().dispose();
      agents.getState().dispose();
      running.getState().dispose();
    },
  };
}

/** The call What-if starts from: the inspected step's first, once its detail is the step's. */
export function whatIfCall(i: InspectorState): ToolCall | undefined {
  return i.detail !== null && i.detail.step === i.step ? i.detail.calls[0]?.call : undefined;
}

/** What a person reads when a live sandbox was released: which episode, why, and that nothing is lost. */
export function releasedNotice(task: string | null, r: Released): string {
  const which = `${task ?? 'An episode'} (${r.branch})`;
  const what =
    r.reason === 'idle'
      ? `was idle ${formatSpan(r.idle_ms)}, so its sandbox was released at step ${r.step}`
      : `had its sandbox released at step ${r.step} when the last window closed`;
  return `${which} ${what}. Its trace is kept: reopen it to go on from there.`;
}

/** What a person reads while a task's image is made: which image, built or pulled, and the latest line. */
export function imageProgressText(p: {
  readonly image: string;
  readonly kind?: 'build' | 'pull';
  readonly phase: 'cached' | 'start' | 'step' | 'built' | 'pulled';
  readonly line: string;
  readonly from?: string;
  /** The task the start was asked for: its Dockerfile is said from the task's folder. */
  readonly task?: string;
}): string {
  // A build named by its Dockerfile, from its folder: "stepbox-build:<hash>" alone named nothing
  // a person wrote.
  if (p.from) {
    // From the task's folder ("harbor-shout/environment/Dockerfile", not "environment/Dockerfile").
    const file = pathForPeople(p.from, pathRoots(null, null, p.task ? [p.task] : []));
    if (p.phase === 'cached') return `The image of ${file} is built already (${p.image}): nothing to build`;
    if (p.phase === 'built') return `The image of ${file} is built (${p.image})`;
    if (p.phase === 'start') return `Building the image of ${file}…`;
    if (p.phase === 'step')
      return `Building the image of ${file}: ${p.line.replace(/^\[build\] /, '').replace(`${p.image}: `, '')}`;
  }
  if (p.phase === 'cached') return `Image ${p.image}: already built, nothing to build`;
  if (p.phase === 'built') return `Image ${p.image} built`;
  if (p.phase === 'pulled') return `Image ${p.image} pulled`;
  const doing = p.kind === 'pull' ? 'Pulling' : 'Building';
  if (p.phase === 'start') return `${doing} image ${p.image}…`;
  // The line without its `[pull] IMAGE: ` / `[build] ` prefix: the notice names the image already.
  const line = p.line.replace(/^\[(pull|build)\] /, '').replace(`${p.image}: `, '');
  return `${doing} image ${p.image}: ${line}`;
}
