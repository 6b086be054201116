import { createStore, type StoreApi } from 'zustand/vanilla';
import { runsInSandboxSpec, runsOwnProgramSpec } from '../../../../shared/agent-kind';
import type { StepboxClient } from '../../../../shared/contract/client';
import type {
  Project,
  BranchSummary,
  CaseSummary,
  EpisodeEntry,
  UnreadableEpisode,
  TaskSource,
  TaskSummary,
} from '../../../../shared/contract/models';
import type { RequestOf } from '../../../../shared/contract/operations';
import { errorText } from '../result';
import { selectProjectAgent, selectTaskAgent } from './start-agent';
import { endText } from '../stepper/stepper-store';
import type { StopPoints } from '../../../../shared/held-action';
import { NO_STOP_POINTS } from '../../../../shared/no-stop-points';
import type { Breakpoint } from '../../../../shared/breakpoints';
import { createNoticesStore, type Notice, type NoticesStore } from '../notices/notices-store';
import { safeStorage } from '../../model/safe-storage';
import { forgetCaseRun, loadCaseRuns, saveCaseRuns } from './case-run-memory';

/** A case's two variants: as it ships (broken) and with its fix applied. */
export type CaseVariant = 'broken' | 'fixed';

/** A case opened beside the timeline: its summary and walkthrough, and the runs started from it. */
export interface ActiveCase {
  readonly case: CaseSummary;
  readonly readme: string | null;
  /** The variant shown (the last one started). */
  readonly variant: CaseVariant;
  /** The branch each variant's latest run opened, so the walkthrough can set them side by side. */
  readonly runs: Readonly<Partial<Record<CaseVariant, string>>>;
  /**
   * Every run the case started in this window, oldest first: a newer run stopped before its
   * first step (a start left unrun) gives way to the one before it (see {@link selectCaseRuns}).
   */
  readonly started?: readonly { readonly branch: string; readonly variant: CaseVariant }[];
  /**
   * The broken run opened again by a second click on the case (not started anew): the drawer
   * says so and offers a fresh run (a new user's click to read the case again threw the
   * ended run away for an empty one, and Compare then compared step 0).
   */
  readonly reopened?: string;
  /**
   * The name of the case's task (its task.json), once read: a run of another task is never
   * paired with the case, whatever the window's memory says (see {@link selectCaseRuns}).
   */
  readonly task?: string;
}

/** The notices' kind of what the window's case-run memory held that was not the case's. */
export const CASE_MEMORY_NOTICE = 'case-memory';

/** The live episode the window shows when the library starts another (see {@link createEpisodesStore}). */
export interface LeftEpisode {
  readonly branch: string;
  readonly task: string;
  /** Its last step taken. */
  readonly steps: number;
  /**
   * It has work a stop would cut short: it runs, has taken a step, or holds one. A live
   * episode only set up (step 0, idle) is stopped without asking: nothing is lost.
   */
  readonly working: boolean;
}

/** The question before a start stops the live episode: which one, and what would start instead. */
export interface StopQuestion {
  readonly left: LeftEpisode;
  /** What starts if the person says yes, in words (a case's title, a task's name). */
  readonly next: string;
}

/** The episode library: episodes and branches, bundled tasks and cases, the search box. */
export interface EpisodesState {
  readonly query: string;
  /** The episodes the library list shows: those matching the search box. */
  readonly episodes: readonly EpisodeEntry[];
  /** Episodes matching the search whose trace cannot be read: shown with why, never dropped. */
  readonly unreadable: readonly UnreadableEpisode[];
  /**
   * Every episode, whatever the search: what is live (the Running list) and how a case's runs
   * went are facts of the store, not of what the person typed into the search box.
   */
  readonly allEpisodes: readonly EpisodeEntry[];
  /**
   * Whether {@link allEpisodes} has been read: `loading` until the first answer (after a reload
   * the library's lists come after the open's rows are painted, and an empty list then is not
   * "none running"), `error` when no read has answered yet but one failed.
   */
  readonly allLoad: 'loading' | 'ready' | 'error';
  readonly tasks: readonly TaskSummary[];
  readonly cases: readonly CaseSummary[];
  readonly load: 'idle' | 'loading' | 'ready' | 'error';
  /** Why the library's list could not be read; null once a read answers. */
  readonly error: string | null;
  readonly catalogError: string | null;
  /** The bundled tasks and cases: loading until the first answer (an empty list then means none). */
  readonly catalogLoad: 'loading' | 'ready';
  readonly activeCase: ActiveCase | null;
  /** The task or case being started, by id. */
  readonly starting: string | null;
  /**
   * The task, case or project whose start failed, and why: said beside it, not atop the library,
   * until the person acts (another start, the Agent changed, its project edited or removed).
   * Apart from {@link error}: it was that field, which every read of the library set to null, so
   * a failed build was shown and then gone at the next library.changed (CI run 8).
   */
  readonly startFailed: StartFailure | null;
  /** The Running list's Stop that failed, and why: said under its branch while it still runs. */
  readonly stopFailed: { readonly branch: string; readonly text: string } | null;
  /** Asked before a start stops the live episode the window shows (null: nothing asked). */
  readonly stopQuestion: StopQuestion | null;
  /** The live branch being stopped from the Running list, or null. */
  readonly stopping: string | null;
  /** Agent spec for the next start (`openai:MODEL`, `manual`, …); empty: the task's own. */
  readonly agent: string;
  /** What answers an `exec:CMD` agent's model calls (`scripted:FILE`, `openai:MODEL`, `manual`). */
  readonly model: string;
  /** A `sandbox:CMD` agent's folder (read-only at /opt/agent), as typed: relative to the task's folder. */
  readonly agentDir: string;
  /**
   * The start the agent fields hold the agent of, while its episode is on screen (a project's
   * path or a task's id, and its name); null once typed or chosen anew. Another project's Start
   * does not take them unseen: the Agent field showed the last script under every project card,
   * and a Start there ran it (walk 11).
   */
  readonly agentOf: { readonly key: string; readonly name: string } | null;
}

/** A start that failed: who asked it (a task's or case's id, a project's path) and why, in words. */
export interface StartFailure {
  readonly key: string;
  readonly text: string;
}

/** What the library does. */
export interface EpisodesActions {
  refresh(): Promise<void>;
  /**
   * Filters as the person types: tasks and cases at once, episodes (a server search) once
   * typing pauses ({@link SEARCH_DEBOUNCE_MS}); resolves when this query's list is in (or
   * a newer query took over).
   */
  setQuery(query: string): Promise<void>;
  loadCatalog(): Promise<void>;
  /** Starts a bundled sample task as a new episode; returns its branch, or null on failure. */
  startTask(task: TaskSummary): Promise<string | null>;
  /** Starts a project opened with Open… (a bare folder with the goal typed for it) with the form's agent. */
  /** Starts an opened project; a bare folder with its Goal and optional Check (the CLI's --goal, --verify). */
  startProject(project: Project, goal: string, check?: string): Promise<string | null>;
  /** One click: starts the case (or its fixed variant) and shows its walkthrough beside the timeline. */
  openCase(
    c: CaseSummary,
    variant?: CaseVariant,
    /** `run`: run it at once (F5); `fresh`: start a new run even when an ended one is at hand. */
    options?: { readonly run?: boolean; readonly fresh?: boolean },
  ): Promise<string | null>;
  closeCase(): void;
  /** The person's answer to {@link EpisodesState.stopQuestion}: stop the live episode and start, or keep it. */
  answerStop(stop: boolean): void;
  /** Stops a live branch from the Running list (its sandbox released, its trace kept). */
  stopBranch(branch: string): Promise<boolean>;
  /** The failed start of `key` no longer holds (its project was edited, read anew or removed). */
  dropStartFailure(key: string): void;
  setAgent(agent: string): void;
  setModel(model: string): void;
  /** The "Agent folder" of a `sandbox:` agent (its files at /opt/agent), from the task's folder. */
  setAgentDir(dir: string): void;
  /**
   * Another episode is on screen (the library, a batch slot, a case): the start form's agent
   * fields empty, so an agent typed for one episode (claude-code) is not the next start's
   * unseen (issue 33, item 7). The episode they started, and its forks and reopens, keep them.
   */
  follow(episode: string | null): void;
  /**
   * A branch is on screen: an earlier run of the open case (opened from the library) becomes
   * that variant's run, so the drawer says it is the case's, not "another episode".
   */
  showBranch(branch: string | null): void;
  dispose(): void;
}

/** How long typing must pause before the episode list is searched again (ms). */
export const SEARCH_DEBOUNCE_MS = 200;

/** The episodes slice. */
export type EpisodesStore = StoreApi<EpisodesState & EpisodesActions>;

/** The notices' kind of what became of the live episode a start left (see {@link leftNotice}). */
export const LEFT_NOTICE = 'left-episode';

/**
 * What a stop of the episode left for a new one did, in one line for the notification area
 * (its `status` is the trace's end): said there, not atop the library, where it took seven
 * lines and stayed while other episodes were opened.
 */
export function releasedText(left: LeftEpisode, end: { status: string; end_reason: string }): string {
  const which = `${left.task} (${left.branch})`;
  if (end.status === 'interrupted')
    return `Stopped ${which} at step ${left.steps} so it does not run unseen; its trace is kept.`;
  // It ended on its own while the new one started: nothing to stop, the list shows its end.
  return `${which} had already ended (${end.status}).`;
}

/**
 * The notice about the live episode a start left, tied to the episode started (the one on
 * screen: opening another clears it), with the way back to the one left.
 */
export function leftNotice(
  left: LeftEpisode,
  started: string,
  stop:
    | { ok: true; value: { status: string; end_reason: string } }
    | { ok: false; error: { code: string; message: string } },
  view: (branch: string) => void,
): Omit<Notice, 'id'> {
  const action = { label: `Open ${left.task}`, run: () => view(left.branch) };
  return stop.ok
    ? { kind: LEFT_NOTICE, branch: started, tone: 'info', text: releasedText(left, stop.value), action }
    : {
        kind: LEFT_NOTICE,
        branch: started,
        tone: 'error',
        text: `${left.task} (${left.branch}) could not be stopped and is still live (${stop.error.code}: ${stop.error.message}): open it and stop it (Shift+F5).`,
        action,
      };
}

/**
 * Creates the episodes slice; `onOpen` receives every branch the library starts, and
 * `leaving` names the live episode the window shows (null when none): once another starts,
 * it is stopped, so no episode runs or holds a sandbox where the person no longer sees it.
 */
export function createEpisodesStore(
  client: StepboxClient,
  onOpen: (branch: string) => void = () => {},
  leaving: () => LeftEpisode | null = () => null,
  /** The window's session switches: a start sends them, so the episode has them from its first step. */
  switches: () => { readonly stopPoints: StopPoints; readonly breakpoints: readonly Breakpoint[] } = () => ({
    stopPoints: NO_STOP_POINTS,
    breakpoints: [],
  }),
  /** The window's one notification area: what became of the episode a start left is said there. */
  notices: NoticesStore = createNoticesStore(),
  /** Opens a branch already recorded (the left episode, from its notice). */
  view: (branch: string) => void = onOpen,
  /** Where the case runs are remembered across a reload (the window's localStorage; none in a test). */
  storage: Pick<Storage, 'getItem' | 'setItem'> | null = safeStorage(),
): EpisodesStore {
  const remembered = loadCaseRuns(storage);
  if (remembered.refused)
    notices.getState().post({
      kind: CASE_MEMORY_NOTICE,
      branch: null,
      tone: 'info',
      text: `Some case runs this window remembered were left out (${remembered.refused}): those cases start afresh.`,
    });
  /** Each case's runs started in this window (and before a reload of it), kept while another case is open. */
  const caseRuns = remembered.runs;
  /** Every run each case started here, with its variant (an earlier run opened again is the case's). */
  const caseStarted = remembered.started;
  /** Sets a case's runs and remembers them, the case last run listed last (the most recent kept). */
  const rememberRuns = (id: string, runs: ActiveCase['runs'], started?: [string, CaseVariant]): void => {
    caseRuns.delete(id);
    caseRuns.set(id, runs);
    if (started) caseStarted.set(id, (caseStarted.get(id) ?? new Map()).set(...started));
    saveCaseRuns(remembered, storage);
  };
  let generation = 0;
  let wholeGeneration = 0;
  let answer: ((stop: boolean) => void) | null = null;
  let typing: { timer: ReturnType<typeof setTimeout>; done: () => void } | null = null;
  // The episode on screen when the form was last emptied (see follow).
  let shown: string | null = null;
  const startedOf = (id: string) =>
    [...(caseStarted.get(id) ?? new Map<string, CaseVariant>())].map(([branch, variant]) => ({
      branch,
      variant,
    }));
  const store = createStore<EpisodesState & EpisodesActions>()((set, get) => {
    /**
     * True when the start may go on: nothing live with work is shown, or the person agreed
     * to stop it. A second start asked meanwhile replaces the first question (its answer: no).
     */
    const mayStop = async (next: string): Promise<boolean> => {
      const left = leaving();
      if (!left?.working) return true;
      answer?.(false);
      const yes = await new Promise<boolean>((resolve) => {
        answer = resolve;
        set({ stopQuestion: { left, next } });
      });
      return yes;
    };
    /** What a start sends: the task, the form's agent fields and the window's session switches. */
    const startRequest = (
      task: Extract<TaskSource, { kind: 'sample' | 'case' | 'project' }>,
      agent?: string,
      /** Run it at once (F5) instead of stopping after setup. */
      run = false,
      /** A bare project folder's goal. */
      goal?: string,
      /** A bare project folder's check (`--verify`). */
      verify?: string,
    ) => {
      const model = agent && runsOwnProgramSpec(agent) ? get().model.trim() : '';
      const agentDir = agent && runsInSandboxSpec(agent) ? get().agentDir.trim() : '';
      const agentOptions = { ...(model ? { model } : {}), ...(agentDir ? { agent_dir: agentDir } : {}) };
      // Sent with the start, not set after it: a case that runs at once (F5) had passed the
      // stop a person asked for before the window could set it (it then showed unticked).
      const { stopPoints, breakpoints } = switches();
      const on = (Object.keys(stopPoints) as (keyof StopPoints)[]).filter((k) => stopPoints[k]);
      return {
        task,
        ...(on.length ? { stop_points: Object.fromEntries(on.map((k) => [k, true])) } : {}),
        ...(breakpoints.length ? { breakpoints: [...breakpoints] } : {}),
        ...(agent ? { agent } : {}),
        ...(model || agentDir ? { agent_options: agentOptions } : {}),
        ...(run ? { run: true } : {}),
        ...(goal ? { goal } : {}),
        ...(verify ? { verify } : {}),
      };
    };
    /**
     * True when the start may go on: nothing live with work is shown, or the server's own check
     * of the start (episode.checkStart) passed and then the person agreed to stop it. Checked
     * first: a new user agreed to stop the live episode for a start that was then refused
     * ("Agent: no file at …"); the refusal shows as the start's would, where it says.
     */
    const mayStart = async (
      key: string,
      next: string,
      request: RequestOf<'episode.start'>,
    ): Promise<boolean> => {
      if (!leaving()?.working) return true;
      set({ starting: key, startFailed: null });
      const checked = await client.episode.checkStart(request);
      set({ starting: null });
      if (!checked.ok) {
        set({ startFailed: { key, text: errorText(checked) ?? '' } });
        return false;
      }
      return mayStop(next);
    };
    /** After a start with the form's agent: the fields are that start's while its episode is shown. */
    const started = (
      of: { readonly key: string; readonly name: string },
      branch: string | null,
      request: RequestOf<'episode.start'>,
    ): string | null => {
      if (branch !== null && request.agent !== undefined) set({ agentOf: of });
      return branch;
    };
    const start = async (key: string, request: RequestOf<'episode.start'>): Promise<string | null> => {
      set({ starting: key, startFailed: null });
      // Read after any question: the episode may have ended while the person answered.
      const left = leaving();
      const res = await client.episode.start(request);
      set({ starting: null });
      // A start that failed changes nothing: the earlier episode stays live and shown.
      if (!res.ok) {
        set({ startFailed: { key, text: errorText(res) ?? '' } });
        return null;
      }
      if (left && left.branch !== res.value.branch) {
        const stop = await client.episode.stop({ id: left.branch });
        notices.getState().post(leftNotice(left, res.value.branch, stop, view));
      }
      // The form's agent fields stay with the episode they started, until another is on screen
      // (a case starts with its own agent: the form's were not its, and it empties them).
      if (request.agent !== undefined) shown = res.value.episode;
      onOpen(res.value.branch);
      void get().refresh();
      return res.value.branch;
    };
    /**
     * Lists the episodes matching the search and, when `whole` (the store changed, or a start or
     * stop), every episode too. An answer a later call superseded is dropped.
     */
    const list = async (whole: boolean): Promise<void> => {
      const mine = ++generation;
      const wholeMine = whole ? ++wholeGeneration : wholeGeneration;
      if (get().load !== 'ready') set({ load: 'loading' });
      const q = get().query.trim();
      const [res, all] = await Promise.all([
        client.library.list(q ? { query: q } : {}),
        whole && q ? client.library.list({}) : null,
      ]);
      // Unfiltered, the search's answer is the whole library.
      const every = q ? all : res;
      if (wholeMine === wholeGeneration && every?.ok)
        set({ allEpisodes: every.value.episodes, allLoad: 'ready' });
      // A failed read after a good one keeps the list it had (the library says the error).
      else if (wholeMine === wholeGeneration && every && get().allLoad !== 'ready') set({ allLoad: 'error' });
      if (mine !== generation) return;
      if (res.ok)
        set({
          episodes: res.value.episodes,
          unreadable: res.value.unreadable ?? [],
          load: 'ready',
          error: null,
        });
      else set({ load: 'error', error: errorText(res) });
    };
    return {
      query: '',
      episodes: [],
      unreadable: [],
      allEpisodes: [],
      allLoad: 'loading',
      tasks: [],
      cases: [],
      load: 'idle',
      error: null,
      catalogError: null,
      catalogLoad: 'loading',
      activeCase: null,
      starting: null,
      stopping: null,
      startFailed: null,
      stopFailed: null,
      stopQuestion: null,
      agent: '',
      model: '',
      agentDir: '',
      agentOf: null,
      // A new agent spec makes the last start's error stale; typed or chosen, it is for the next start.
      setAgent: (agent) =>
        set(get().startFailed ? { agent, agentOf: null, startFailed: null } : { agent, agentOf: null }),
      dropStartFailure(key) {
        if (get().startFailed?.key === key) set({ startFailed: null });
      },
      setModel: (model) => set({ model, agentOf: null }),
      setAgentDir: (agentDir) => set({ agentDir, agentOf: null }),
      follow(episode) {
        // Null while a branch loads: the episode it belongs to is not known yet.
        if (episode === null || episode === shown) return;
        shown = episode;
        const s = get();
        if (s.agent || s.model || s.agentDir || s.agentOf)
          set({ agent: '', model: '', agentDir: '', agentOf: null });
      },
      showBranch(branch) {
        const active = get().activeCase;
        if (!active || branch === null) return;
        const variant = caseStarted.get(active.case.id)?.get(branch);
        if (!variant || active.runs[variant] === branch) return;
        const runs = { ...active.runs, [variant]: branch };
        rememberRuns(active.case.id, runs);
        set({ activeCase: { ...active, variant, runs } });
      },
      refresh: () => list(true),
      async setQuery(query) {
        set({ query });
        // A newer keystroke supersedes the wait: the earlier call resolves, the list is asked once.
        if (typing) {
          clearTimeout(typing.timer);
          typing.done();
        }
        if (!query.trim()) {
          // Not read yet (the search was typed before the library's first answer): asked.
          if (get().allLoad !== 'ready') return list(true);
          // A cleared search shows the whole library at once (it is at hand): waiting for the
          // server left the last search's empty list on screen under "No episodes yet".
          ++generation;
          set({ episodes: get().allEpisodes, load: 'ready', error: null });
          return;
        }
        const waited = await new Promise<boolean>((resolve) => {
          const entry = {
            timer: setTimeout(() => {
              typing = null;
              resolve(true);
            }, SEARCH_DEBOUNCE_MS),
            done: () => resolve(false),
          };
          typing = entry;
        });
        // A keystroke asks only for the matching episodes: the whole library did not change.
        if (waited) await list(false);
      },
      async loadCatalog() {
        const [tasks, cases] = await Promise.all([client.tasks.list({}), client.cases.list({})]);
        set({
          tasks: tasks.ok ? tasks.value.tasks : [],
          cases: cases.ok ? cases.value.cases : [],
          catalogError: errorText(tasks) ?? errorText(cases),
          catalogLoad: 'ready',
        });
      },
      async startTask(task) {
        // The fields holding another start's agent: the sample runs its own (said on its card).
        const { spec } = selectTaskAgent(task, get().agent, get().agentOf);
        const request = startRequest({ kind: 'sample', id: task.id }, spec ?? undefined);
        if (!(await mayStart(task.id, task.name, request))) return null;
        return started({ key: task.id, name: task.name }, await start(task.id, request), request);
      },
      async startProject(project, goal, check = '') {
        // The agent fields hold another start's agent: refused under Agent, not run here unseen.
        const { refusal } = selectProjectAgent(project, get().agent, get().agentOf);
        if (refusal !== null) {
          set({ startFailed: { key: project.path, text: refusal } });
          return null;
        }
        const bare = project.kind === 'folder';
        const request = startRequest(
          { kind: 'project', path: project.path },
          get().agent.trim() || undefined,
          false,
          bare ? goal.trim() : undefined,
          bare ? check.trim() || undefined : undefined,
        );
        if (!(await mayStart(project.path, project.name, request))) return null;
        return started(
          { key: project.path, name: project.name },
          await start(project.path, request),
          request,
        );
      },
      async openCase(c, variant = 'broken', options = {}) {
        const request = startRequest(
          { kind: 'case', id: c.id, ...(variant === 'fixed' ? { fixed: true } : {}) },
          undefined,
          options.run ?? false,
        );
        // The case opened again to read it: its ended broken run comes back on screen, no new
        // run is started unseen (the drawer offers one). Only a run that took a step counts.
        const known = get().activeCase?.case.id === c.id ? get().activeCase?.runs : caseRuns.get(c.id);
        const earlier = variant === 'broken' && !options.fresh && !options.run ? known?.broken : undefined;
        // Just after a reload the library may not be read yet: the run is looked for in it first.
        if (earlier && get().allLoad !== 'ready') await list(true);
        const ended = earlier ? findBranch(get().allEpisodes, earlier) : null;
        // The memory is a hint, not a fact: the run is reopened only as a run of the case's own task.
        const opened =
          earlier && ended && !ended.live && ended.status !== null && ended.steps > 0
            ? await client.cases.open({ id: c.id })
            : null;
        // A task without a name is listed as '(unnamed)' (episode-meta.ts).
        const task = opened?.ok ? (taskNameOf(opened.value.task) ?? '(unnamed)') : null;
        if (earlier && ended && opened && ended.task !== task) {
          forgetCaseRun(remembered, c.id, earlier);
          saveCaseRuns(remembered, storage);
          notices.getState().post({
            kind: CASE_MEMORY_NOTICE,
            branch: null,
            tone: 'info',
            text: opened.ok
              ? `The run this window remembered as the broken run of case ${c.id} (${earlier}) is an episode of task "${ended.task}", not of the case's own task "${task}": it is forgotten, and the case starts afresh.`
              : `The run this window remembered as the broken run of case ${c.id} (${earlier}) could not be checked (${opened.error.message}): the case starts afresh.`,
          });
        } else if (earlier && ended && opened?.ok) {
          const was = get().activeCase;
          const runs = (was?.case.id === c.id ? was.runs : null) ?? caseRuns.get(c.id) ?? {};
          set({
            activeCase: {
              case: c,
              readme: was?.case.id === c.id ? was.readme : null,
              variant,
              runs,
              started: startedOf(c.id),
              reopened: earlier,
              ...(task !== null ? { task } : {}),
            },
          });
          view(earlier);
          const now = get().activeCase;
          if (now?.case.id === c.id && now.readme === null)
            set({ activeCase: { ...now, readme: walkthroughText(opened.value.readme) } });
          return earlier;
        }
        // Cancelled, nothing changes: the live episode runs on and its case stays open.
        const next = variant === 'fixed' ? `${c.title} (fixed version)` : c.title;
        if (!(await mayStart(c.id, next, request))) return null;
        const was = get().activeCase;
        const same = was?.case.id === c.id ? was : null;
        // The walkthrough stays while its other variant starts; a new case loads its own. Its
        // runs are remembered per case: a case opened again after another one said "Broken
        // run: ready, not started" beside its own broken run on screen.
        const runs = same?.runs ?? caseRuns.get(c.id) ?? {};
        set({
          activeCase: { case: c, readme: same?.readme ?? null, variant, runs, started: startedOf(c.id) },
        });
        const [branch, readme] = await Promise.all([
          start(c.id, request),
          same?.readme ? null : client.cases.open({ id: c.id }),
        ]);
        if (branch)
          rememberRuns(c.id, { ...(caseRuns.get(c.id) ?? runs), [variant]: branch }, [branch, variant]);
        const now = get().activeCase;
        if (now?.case.id === c.id)
          set({
            activeCase: {
              ...now,
              readme:
                readme === null ? now.readme : readme.ok ? walkthroughText(readme.value.readme) : c.summary,
              ...(readme?.ok ? { task: taskNameOf(readme.value.task) ?? '(unnamed)' } : {}),
              runs: branch ? { ...now.runs, [variant]: branch } : now.runs,
              started: startedOf(c.id),
            },
          });
        return branch;
      },
      closeCase() {
        set({ activeCase: null });
      },
      answerStop(stop) {
        const resolve = answer;
        answer = null;
        set({ stopQuestion: null });
        resolve?.(stop);
      },
      async stopBranch(branch) {
        set({ stopping: branch, stopFailed: null });
        const res = await client.episode.stop({ id: branch });
        set({ stopping: null, stopFailed: res.ok ? null : { branch, text: errorText(res) ?? '' } });
        await get().refresh();
        return res.ok;
      },
      dispose() {
        if (typing) clearTimeout(typing.timer);
        off();
      },
    };
  });
  const off = client.onLibraryChanged(() => void store.getState().refresh());
  return store;
}

/**
 * The open episode's branches as every branch tree shows them: one summary per branch, the
 * library's. The library reads them again whenever a live branch pauses or ends
 * (library.changed), while the open view's copy (`stepper.branches`) is read at the open and
 * kept until the next one: after a rollback and a step, the timeline's tree said "1 step ·
 * return 0.10" under a count of "2 steps" and beside the library's "2 steps · return 0.20 ⚑1".
 * A branch the library does not list yet (a fork just made, or before its first read) is
 * the view's. `view` unchanged and nothing newer listed, the same array comes back.
 */
export function selectEpisodeBranches(
  view: readonly BranchSummary[],
  library: readonly EpisodeEntry[],
): readonly BranchSummary[] {
  const episode = view[0]?.episode;
  const listed = episode === undefined ? undefined : library.find((e) => e.episode === episode)?.branches;
  if (!listed) return view;
  const ids = new Set(listed.map((b) => b.branch));
  const unlisted = view.filter((b) => !ids.has(b.branch));
  return unlisted.length ? [...listed, ...unlisted] : listed;
}

/** One node of the branch tree: a branch and the branches forked from it. */
export interface BranchNode {
  readonly branch: BranchSummary;
  readonly children: readonly BranchNode[];
}

/** An episode's branches as a tree: forks under their parent, ordered by fork step. */
export function selectBranchTree(branches: readonly BranchSummary[]): readonly BranchNode[] {
  const ids = new Set(branches.map((b) => b.branch));
  const byParent = new Map<string | null, BranchSummary[]>();
  for (const b of branches) {
    const parent = b.parent_branch && ids.has(b.parent_branch) ? b.parent_branch : null;
    byParent.set(parent, [...(byParent.get(parent) ?? []), b]);
  }
  const build = (parent: string | null): BranchNode[] =>
    [...(byParent.get(parent) ?? [])]
      .sort((a, b) => (a.fork_step ?? 0) - (b.fork_step ?? 0) || a.created - b.created)
      .map((branch) => ({ branch, children: build(branch.branch) }));
  return build(null);
}

/** The unreadable branches of each listed episode, by its id (the others are listed on their own). */
export function selectUnreadableByEpisode(
  episodes: readonly EpisodeEntry[],
  unreadable: readonly UnreadableEpisode[],
): Map<string, UnreadableEpisode[]> {
  const listed = new Set(episodes.map((e) => e.episode));
  const out = new Map<string, UnreadableEpisode[]>();
  for (const u of unreadable)
    if (listed.has(u.episode)) out.set(u.episode, [...(out.get(u.episode) ?? []), u]);
  return out;
}

/** Bundled tasks matching the search box. */
export function selectVisibleTasks(tasks: readonly TaskSummary[], query: string): readonly TaskSummary[] {
  return visibleByName(
    tasks,
    query,
    (t) => [t.id, t.name],
    (t) => t.goal,
  );
}

/** Bundled cases matching the search box. */
export function selectVisibleCases(cases: readonly CaseSummary[], query: string): readonly CaseSummary[] {
  return visibleByName(
    cases,
    query,
    (c) => [c.id, c.title],
    (c) => c.summary,
  );
}

/**
 * Whether the search names an item (its id, name or title holds the query), not only its
 * description: Enter in the search box goes to the first item so named.
 */
export function namedBy(query: string, names: readonly string[]): boolean {
  const q = query.trim().toLowerCase();
  return q !== '' && names.some((n) => n.toLowerCase().includes(q));
}

/**
 * The items the query matches, those it names first (a case that only mentions "notes" in its
 * summary went before the task called notes-memory, and Enter, Enter started the case).
 */
function visibleByName<T>(
  items: readonly T[],
  query: string,
  names: (item: T) => readonly string[],
  text: (item: T) => string,
): readonly T[] {
  const q = query.trim().toLowerCase();
  if (!q) return items;
  const named = items.filter((i) => namedBy(q, names(i)));
  const described = items.filter((i) => !named.includes(i) && text(i).toLowerCase().includes(q));
  return [...named, ...described];
}

/**
 * How many sandboxes are live, or null while the library has not been read (a count of an
 * unread list said "0" after a reload with two running).
 */
export function selectRunningCount(s: Pick<EpisodesState, 'allEpisodes' | 'allLoad'>): number | null {
  return s.allLoad === 'ready' ? selectRunning(s.allEpisodes).length : null;
}

/** Every live branch in the library (each holds a sandbox), newest first: pass `allEpisodes`, never the searched list. */
export function selectRunning(episodes: readonly EpisodeEntry[]): readonly BranchSummary[] {
  return episodes.flatMap((e) => e.branches.filter((b) => b.live)).sort((a, b) => b.created - a.created);
}

/** A case run as the walkthrough shows it: which variant, its branch, and its summary once listed. */
export interface CaseRun {
  readonly variant: CaseVariant;
  readonly branch: string;
  readonly summary: BranchSummary | null;
}

/** The open case's runs (broken first), each with its branch summary from the library. */
export function selectCaseRuns(
  active: ActiveCase | null,
  episodes: readonly EpisodeEntry[],
): readonly CaseRun[] {
  if (!active) return [];
  return (['broken', 'fixed'] as const).flatMap((variant) => {
    const latest = active.runs[variant];
    if (!latest) return [];
    // A run stopped before its first step (started, then left for the other version) has
    // nothing to read or compare: the latest run of this variant that took a step stands.
    const unrun = (b: BranchSummary | null) => b !== null && !b.live && b.status !== null && b.steps === 0;
    // A run the library lists under another task is not the case's, whatever was remembered.
    const foreign = (b: BranchSummary | null) =>
      b !== null && active.task !== undefined && b.task !== active.task;
    const earlier = (active.started ?? [])
      .filter((r) => r.variant === variant && r.branch !== latest)
      .map((r) => findBranch(episodes, r.branch))
      .filter((b): b is BranchSummary => b !== null && !unrun(b) && !foreign(b) && b.status !== null);
    const summary = findBranch(episodes, latest);
    if (foreign(summary)) return [];
    const stand = unrun(summary) ? earlier.at(-1) : undefined;
    return [stand ? { variant, branch: stand.branch, summary: stand } : { variant, branch: latest, summary }];
  });
}

/** The name of a case's task as `cases.open` gives it (the task JSON, unchecked), or null. */
function taskNameOf(task: unknown): string | null {
  const name = task && typeof task === 'object' ? (task as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : null;
}

/** A branch's summary in the library, or null when it is not listed (yet). */
function findBranch(episodes: readonly EpisodeEntry[], branch: string): BranchSummary | null {
  for (const e of episodes) for (const b of e.branches) if (b.branch === branch) return b;
  return null;
}

/**
 * A case README as the window shows it: its "**Run it:** `stepbox case run …`" paragraph
 * is for the terminal, and the walkthrough has its own buttons for both versions.
 */
export function walkthroughText(readme: string): string {
  return readme.replace(/(^|\n)\*\*Run it:\*\*[^]*?(?:\n[ \t]*\n|$(?![^]))/, '$1');
}

/**
 * What the window shows, as the case drawer must say it: one of the case's runs, a branch
 * forked from one (same episode), or an episode that is not the case's (the drawer says so
 * and gets out of the way instead of claiming the last-started variant is open).
 */
export type CaseShown =
  | { readonly kind: 'none' }
  | { readonly kind: 'run'; readonly variant: CaseVariant }
  | { readonly kind: 'branch'; readonly variant: CaseVariant }
  | { readonly kind: 'other'; readonly task: string | null };

/**
 * Which of the case's runs the open branch is: `openBranches` are the open episode's branches
 * (the stepper's), so a fork or candidate of a run counts as that run's, not as another episode.
 */
export function selectCaseShown(
  runs: readonly CaseRun[],
  openBranch: string | null,
  openBranches: readonly BranchSummary[],
  episodes: readonly EpisodeEntry[] = [],
): CaseShown {
  if (openBranch === null) return { kind: 'none' };
  const run = runs.find((r) => r.branch === openBranch);
  if (run) return { kind: 'run', variant: run.variant };
  // While the stepper still loads the branch (no branches yet), the library knows its episode.
  const known = openBranches.length
    ? openBranches
    : (episodes.find((e) => e.branches.some((b) => b.branch === openBranch))?.branches ?? []);
  const ids = new Set(known.map((b) => b.branch));
  const parent = runs.find((r) => ids.has(r.branch));
  if (parent) return { kind: 'branch', variant: parent.variant };
  return { kind: 'other', task: known.find((b) => b.branch === openBranch)?.task ?? null };
}

/** The facts of a case run the stepper has when it is the open branch (null fields when not). */
export interface OpenRunFacts {
  /** The run is the open branch and runs now. */
  readonly running: boolean;
  /** The run is the open live branch, not running: it waits for the person. */
  readonly paused: boolean;
  /** The step held inside (paused before its tools run or before its answer), or null. */
  readonly held: number | null;
  /**
   * How the open run ended, as the stepper knows it (its end state, before the library's summary
   * says so); null while it goes on or when it is not the open run. Absent: not known here.
   */
  readonly ended?: { readonly status: string; readonly end_reason: string } | null;
}

/** How a paused case run goes on: the button's own label (the walkthrough's "▶ Run it"), as a thing to press. */
const RUN_IT_HINT = 'press ▶ Run it to go on';

/**
 * How a case run stands, in words: not started, held at a step, running, stopped part-way, or
 * its status and its QA flags. The library's summary lags the open branch (its steps count
 * only what ran), so the stepper's facts of the open run come first: a step held before it
 * runs is "started", never "ready, not started".
 */
export function caseRunOutcome(
  summary: BranchSummary | null,
  open: OpenRunFacts,
): { readonly text: string; readonly flags: number | null; readonly hint?: string } {
  if (open.running) return { text: 'running…', flags: null };
  // Ended as the bar says it, while the library's summary still has it live: the drawer said
  // "live, at step 3" beside the bar's "succeeded". Its QA flags come with the summary.
  if (open.ended && (!summary || summary.status === null))
    return {
      text: `${open.ended.status} — ${endText(open.ended.status, open.ended.end_reason)}`,
      flags: null,
    };
  // The way on (the walkthrough's "▶ Run it" button, just above) is the line's hint, said on
  // hover: with it, the paused text took both of the run line's lines at 1280×800.
  if (open.held !== null)
    return { text: `paused before step ${open.held} runs`, flags: null, hint: RUN_IT_HINT };
  if (summary && summary.status === null && summary.steps === 0 && !summary.live)
    return { text: 'not started yet', flags: null };
  // Shown and not running, it waits for the person (at its setup, stepped, or at a breakpoint):
  // the bar's own words, step 0 too (it said "ready, not started" beside "paused at step 0").
  if (summary && summary.status === null && summary.live && open.paused)
    return { text: `paused at step ${summary.steps}`, flags: null, hint: RUN_IT_HINT };
  if (summary && summary.status === null && summary.steps === 0)
    return { text: 'ready, not started: press ▶ Run it', flags: null };
  if (summary && summary.status === null && summary.live)
    return {
      text: `live, at step ${summary.steps}`,
      flags: null,
    };
  if (!summary || summary.status === null) return { text: 'running…', flags: null };
  return {
    text: `${summary.status} — ${endText(summary.status, summary.end_reason ?? '')}`,
    flags: summary.flags,
  };
}
