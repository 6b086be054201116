import { NO_AGENT } from '../../shared/agent-words.js';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  OPERATIONS,
  isOperationName,
  type ContractHandler,
  type OperationName,
  type ParsedRequestOf,
  type ResponseOf,
} from '../../shared/contract/index.js';
import { appError, type AppError } from '../../shared/errors.js';
import { err, ok, type Result } from '../../shared/result.js';
import { logger } from '../engine/log.js';
import { oracleProblem } from '../engine/agents/oracle-agent.js';
import { AgentsService } from './agents-service.js';
import { BatchService } from './batch-service.js';
import { CandidatesService } from './candidates-service.js';
import { EpisodeManager } from './episode-manager.js';
import { EventBus, type BusListener } from './event-bus.js';
import { LibraryService } from './library-service.js';
import { listInside } from './host-files.js';
import type { EnginePorts } from './ports.js';
import { ServiceError, toAppError } from './service-error.js';
import {
  AGENT_DIR_FIELD,
  AGENT_FIELD,
  CHECK_FIELD,
  MODEL_FIELD,
  TASK_PATH_FIELD,
  commonPlaces,
  taskFolderOf,
} from '../../shared/start-paths.js';
import { ChosenFiles } from './chosen-files.js';
import { FileFields } from './file-fields.js';
import { ProjectsService } from './projects-service.js';
import { StatsService } from './stats-service.js';
import { sandboxInfo } from './system-service.js';
import { TerminalService } from './terminal-service.js';
import { describeIssues } from '../../shared/validation-issues.js';
import { systemClock, type Clock } from './clock.js';
import { IdleReleaser } from './idle-release.js';
import { DEFAULT_LOADED_SETTINGS, type LoadedSettings } from './settings-file.js';
import { WindowPresence } from './window-presence.js';

const log = logger('services');

/** Who is calling: the connection (WebSocket client or window) that owns streams it opens. */
export interface CallContext {
  readonly client: string;
}

type Impl = {
  [O in OperationName]: (
    request: ParsedRequestOf<O>,
    ctx: CallContext,
  ) => Promise<ResponseOf<O>> | ResponseOf<O>;
};

/** The app services behind both transports: one dispatch wrapper, one event bus. */
export interface AppServices extends ContractHandler {
  /** Validates `rawInput` against `op`'s schema, runs it, and returns errors as data; never rejects. */
  handle(op: string, rawInput: unknown, ctx?: CallContext): Promise<Result<unknown>>;
  /** Every event, with the client it is meant for (null: everyone). */
  subscribeAudience(listener: BusListener): () => void;
  /** A window connected (a WebSocket client, an Electron window): see {@link WindowPresence}. */
  openClient(client: string): void;
  /**
   * Closes the terminals and stats streams a client opened (its connection closed); when it was
   * the last window, its live episodes are released after `ui.release_after_close`.
   */
  closeClient(client: string): Promise<void>;
  /** Releases every live branch idle past `ui.idle_release` now (what the timer does); the released ones. */
  sweepIdle(): Promise<string[]>;
  /** Stops every live episode and destroys its sandbox; closes every stream. */
  dispose(): Promise<void>;
  readonly episodes: EpisodeManager;
}

const LOCAL: CallContext = { client: 'local' };

/** Binds every contract operation to the engine ports. */
/** What the shell adds to the services (the desktop app: its native dialog). */
export interface AppServicesOptions {
  /** Opens a native dialog for a folder or a task.json; null when cancelled (Electron only). */
  readonly pickPath?: () => Promise<string | null>;
  /** The settings in effect (default: the defaults, read from no file). */
  readonly settings?: LoadedSettings;
  /** The clock idle release and the close grace read (tests move a fake one). */
  readonly clock?: Clock;
}

/** A start with no agent, said by its field (the window's Agent and the API's `agent` alike). */
export function createAppServices(ports: EnginePorts, options: AppServicesOptions = {}): AppServices {
  const bus = new EventBus();
  const clock = options.clock ?? systemClock;
  const { settings, file: settingsFile } = options.settings ?? DEFAULT_LOADED_SETTINGS;
  const episodes = new EpisodeManager(ports.harness, ports.traces, bus, clock);
  const library = new LibraryService(ports.traces, episodes);
  const terminals = new TerminalService(ports.docker, episodes, bus);
  // A branch with a terminal open is in a person's view: a fork going on does not stop it.
  episodes.setViewed((branch) => terminals.hasTerminal(branch));
  const stats = new StatsService(ports.docker, episodes, bus);
  const candidates = new CandidatesService(ports.harness, ports.traces, episodes);
  const batches = new BatchService(ports.batches, bus, (episode) => library.flags(episode));
  const agents = new AgentsService(ports.agents, bus);
  // Forgotten sandboxes go (issue 33.8): idle ones after ui.idle_release, all of them once the
  // last window has been closed for ui.release_after_close (a reload reconnects well within it).
  const idle = new IdleReleaser(episodes, settings.ui.idle_release, clock);
  idle.start();
  const windows = new WindowPresence(settings.ui.release_after_close, clock, () => {
    log.info('the last window closed: releasing live sandboxes (their traces are kept)');
    void candidates
      .disposeAll()
      .then(() => episodes.releaseAll())
      .catch((e: unknown) => log.warn(`releasing after the last window: ${String(e)}`));
  });
  // An episode written by another process (a `stepbox run` in a shell) joins the list as it
  // appears, and a trace written in place (a person, a tool, damage) is listed as it is now.
  // One event per telling, however many episodes it names (the watch coalesces them). An
  // episode live here is told by its own steps, pauses and end, not by each write of its trace.
  const unwatch = ports.traces.watch?.((change) => {
    const live = episodes.liveEpisodes();
    const onDisk = change.episodes.filter((e) => !live.has(e));
    if (!change.store && onDisk.length === 0) return;
    bus.emit('library.changed', { episode: null, ...(onDisk.length ? { on_disk: onDisk } : {}) });
  });

  const projects = new ProjectsService(ports.storeHome, options.pickPath);
  const taskPathOf = async (source: ParsedRequestOf<'episode.start'>['task']) => {
    // A task named by its path is read by the one rule too (issue 33, item 5): it started any host path.
    if (source.kind === 'path')
      return { path: await fields.task(TASK_PATH_FIELD, source.path), agent: null, episodes: 1 };
    // Only a project the person opened (Open…) is started by its path from the window.
    if (source.kind === 'project') return { path: projects.find(source.path).path, agent: null, episodes: 1 };
    if (source.kind === 'sample') {
      const task = (await ports.catalog.tasks()).find((t) => t.id === source.id);
      if (!task)
        throw new ServiceError('not_found', `no bundled sample task "${source.id}" (tasks.list shows them)`);
      return { path: task.path, agent: task.agent, episodes: 1 };
    }
    const found = await ports.catalog.caseVariant(source.id, source.fixed ?? false);
    return { path: found.task_path, agent: found.agent, episodes: found.episodes ?? 1 };
  };

  /**
   * A bare project folder's goal and check (the window's Goal and Check fields, the CLI's
   * --goal and --verify); refused where they mean nothing or the goal is missing.
   */
  const worldOf = (r: ParsedRequestOf<'episode.start'>): { goal: string; verify?: string } | undefined => {
    const goal = r.goal?.trim();
    const verify = r.verify?.trim() || undefined;
    const bare = r.task.kind === 'project' && projects.find(r.task.path).kind === 'folder';
    if (bare && !goal)
      throw new ServiceError(
        'invalid_input',
        'Goal: this folder has no task.json, so say what the agent should do in its Goal field',
      );
    if (!bare && goal)
      throw new ServiceError(
        'invalid_input',
        'Goal: only a bare project folder takes a goal; a task file has its own',
      );
    if (!bare && verify)
      throw new ServiceError(
        'invalid_input',
        `${CHECK_FIELD}: only a bare project folder takes a check; a task file has its own verifier`,
      );
    return bare && goal ? { goal, ...(verify ? { verify } : {}) } : undefined;
  };

  /**
   * Everything a start checks before it takes a sandbox, in the order a person fixes it: the
   * task (its file must read: a broken task.json was refused for its agent first), the goal,
   * then the agent fields. `episode.checkStart` is this alone, so the window asks it before
   * stopping the live episode for a start that would be refused.
   */
  const startPlan = async (r: ParsedRequestOf<'episode.start'>) => {
    const { path, agent, episodes: count } = await taskPathOf(r.task);
    const world = worldOf(r);
    ports.harness.check?.(path, world);
    // Paths a person typed are read by the one rule, from the task's folder (file-fields.ts).
    const folder = taskFolderOf(resolve(path));
    const typed = await agentFields(r.agent, r.agent_options, folder);
    const spec = typed.spec ?? agent;
    if (!spec) throw new ServiceError('invalid_input', NO_AGENT);
    // The oracle on a task without solution/solve.sh: refused under Agent before a sandbox starts.
    const noSolution = spec.trim() === 'oracle' ? oracleProblem(path, `${AGENT_FIELD}: oracle`) : null;
    if (noSolution) throw new ServiceError('invalid_input', noSolution);
    return { path, spec, options: typed.agentOptions, count, world };
  };

  /** The files chosen with Choose… → Your folders, kept in the store (chosen-files.ts). */
  const chosen = new ChosenFiles(ports.storeHome);
  /** Every file a form or the API names is read by one rule (file-fields.ts). */
  const fields = new FileFields(
    async () =>
      commonPlaces(
        ports.storeHome,
        ports.bundledDir,
        projects.list().projects.map((p) => p.path),
      ),
    chosen,
  );
  /** The folder of a task the picker names (a grant is for that task's starts). */
  const pickerTaskFolder = async (task: ParsedRequestOf<'files.choose'>['task']) =>
    taskFolderOf(resolve((await taskPathOf(task)).path));

  /** The agent fields of a start, fork or reopen resolved by the rule against `folder`. */
  const agentFields = async (
    agent: string | undefined,
    options: { model?: string; agent_dir?: string } | undefined,
    folder: string | null,
    /** `folder` is a recorded task's (a fork, a reopen): relative paths resolve there, it is no place. */
    recorded = false,
  ) => {
    const spec = agent !== undefined ? await fields.script(AGENT_FIELD, agent, folder, recorded) : undefined;
    const model =
      options?.model !== undefined
        ? await fields.script(MODEL_FIELD, options.model, folder, recorded)
        : undefined;
    const agentDir =
      options?.agent_dir !== undefined
        ? await fields.folder(AGENT_DIR_FIELD, options.agent_dir, folder, recorded)
        : undefined;
    const agentOptions =
      options === undefined
        ? undefined
        : {
            ...options,
            ...(model !== undefined ? { model } : {}),
            ...(agentDir !== undefined ? { agent_dir: agentDir } : {}),
          };
    return { spec, agentOptions };
  };

  /**
   * The folder of the task a recorded branch ran (a fork's relative paths resolve there), or
   * null: the trace's word for it, so never a place by itself (agentFields' `recorded`). A
   * project folder's task_path is the folder itself (its parent was taken for it).
   */
  const recordedTaskFolder = async (id: string): Promise<string | null> => {
    const view = await library.open(id, 0);
    return typeof view.task_path === 'string' && view.task_path
      ? taskFolderOf(resolve(view.task_path))
      : null;
  };

  const teaching = () => {
    if (!ports.teaching)
      throw new ServiceError('busy', 'saving cases and sharing need the engine, which is not available here');
    return ports.teaching;
  };

  const impl: Impl = {
    'library.list': async (r) => library.list(r.query, r.limit ?? 200),
    'library.search': async (r) => ({ hits: await library.search(r.query, r.limit ?? 50) }),
    'tasks.list': async () => {
      const tasks = await ports.catalog.tasks();
      // The window lists tasks as it opens: warm a sandbox now, so a start is a hand-over.
      ports.harness.prewarm?.(tasks.map((t) => t.path));
      return { tasks };
    },
    'cases.list': async () => ({ cases: await ports.catalog.cases() }),
    'cases.open': (r) => ports.catalog.openCase(r.id),
    'cases.save': (r) => teaching().saveCase(r.id, r.name, r.force ?? false),
    'episode.share': (r) => teaching().share(r.id, r.redact ?? []),

    'files.list': async (r) => {
      if (r.root === 'host') {
        // The person's own folders, any absolute one, as Open… browses them; names and sizes
        // only. What is listed here may be chosen (files.choose), and only then read.
        const listing = await listInside('/', r.path ?? homedir(), 'your folders');
        fields.listedHost(listing.absolute);
        return listing;
      }
      if (r.root === 'store') {
        if (!ports.storeHome)
          throw new ServiceError('not_found', 'this engine has no store folder to pick from');
        return listInside(ports.storeHome, r.path ?? '', 'the store');
      }
      if (!r.task)
        throw new ServiceError('invalid_input', 'name the task whose folder to list (task: {kind, id})');
      return listInside(await pickerTaskFolder(r.task), r.path ?? '', "the task's folder");
    },
    'files.choose': async (r) =>
      fields.choose(
        r.field,
        r.path,
        r.field === 'agent_dir' ? 'folder' : 'file',
        await pickerTaskFolder(r.task),
      ),
    'files.chosen': () => ({ chosen: chosen.list() }),
    'files.forget': async (r) => ({
      forgotten: await chosen.forget(
        r.field,
        r.path.trim(),
        r.task === undefined ? undefined : await pickerTaskFolder(r.task),
      ),
    }),
    'projects.list': () => projects.list(),
    'projects.open': (r) => projects.open(r.path),
    'projects.remove': (r) => projects.remove(r.path),
    'projects.browse': (r) => projects.browse(r.path),
    'projects.pick': () => projects.pick(),
    'episode.open': (r) => library.open(r.id, r.last_rows),
    'episode.rows': (r) => library.rows(r.id, r.from, r.limit),
    'episode.flags': async (r) => ({ flags: await library.flags(r.id) }),
    'episode.start': async (r) => {
      const plan = await startPlan(r);
      // A case that runs several episodes (state leaking between them) runs the first ones
      // to their end; the last opens live, where its flag shows.
      return episodes.start(
        plan.path,
        plan.spec,
        r.breakpoints ?? [],
        r.run ?? false,
        plan.options,
        plan.count - 1,
        r.stop_points,
        plan.world,
      );
    },
    'episode.checkStart': async (r) => {
      await startPlan(r);
      return {};
    },
    'episode.step': (r) => episodes.step(r.id),
    'episode.run': (r) => episodes.run(r.id, r.wait ?? false),
    'episode.pause': (r) => episodes.pause(r.id),
    'episode.stop': (r) => episodes.stop(r.id),
    'episode.decide': (r) => {
      episodes.decide(r.id, r.content ?? null, r.call);
      return {};
    },
    'episode.setBreakpoints': (r) => ({ breakpoints: episodes.setBreakpoints(r.id, r.breakpoints) }),
    'episode.inject': (r) => {
      episodes.inject(r.id, r.role, r.content);
      return {};
    },
    'episode.override': (r) => {
      episodes.override(r.id, r.result);
      return {};
    },
    'episode.setStopPoints': (r) => episodes.setStopPoints(r.id, r.stop_points),
    'episode.editAnswer': (r) => episodes.changeHeld(r.id, { kind: 'answer', message: r.message }),
    'episode.editArguments': (r) =>
      episodes.changeHeld(r.id, { kind: 'arguments', callId: r.call_id, args: r.arguments }),
    'episode.replaceResult': (r) =>
      episodes.changeHeld(r.id, { kind: 'result', callId: r.call_id, result: r.result }),
    'episode.rollback': (r) => episodes.rollback(r.id, r.step),
    'episode.fork': async (r) => {
      const typed =
        r.agent === undefined && r.agent_options === undefined
          ? { spec: undefined, agentOptions: undefined }
          : await agentFields(r.agent, r.agent_options, await recordedTaskFolder(r.id), true);
      return episodes.fork(r.id, r.step, typed.spec, { agentOptions: typed.agentOptions, consent: r.allow });
    },
    'episode.reopen': async (r) => {
      const typed =
        r.agent === undefined && r.agent_options === undefined
          ? { spec: undefined, agentOptions: undefined }
          : await agentFields(r.agent, r.agent_options, await recordedTaskFolder(r.id), true);
      return episodes.reopen(r.id, r.step, typed.spec, {
        agentOptions: typed.agentOptions,
        consent: r.allow,
      });
    },
    'episode.replayVerify': (r) => ports.harness.replayVerify(r.id, r.allow),
    'episode.whatIf': async (r) => {
      const { result, treeHashAfter } = await ports.harness.whatIf(r.id, r.step, r.call, r.allow);
      return { step: r.step, result, tree_hash_after: treeHashAfter };
    },
    'episode.compare': (r) => library.compare(r.a, r.b),
    'episode.candidates': (r) =>
      candidates.tryAt(r.id, r.step, r.n ?? 0, r.actions ?? [], r.run_on ?? 0, r.allow),
    'episode.stageCandidates': (r) => {
      candidates.stage(r.id, r.step, r.count, r.allow);
      return {};
    },
    'episode.pickCandidate': (r) => candidates.pick(r.group, r.index),
    'episode.discardCandidates': async (r) => {
      await candidates.discard(r.group);
      return {};
    },
    'episode.trace': (r) => library.trace(r.id, r.from_seq, r.limit),
    'episode.stepDetail': (r) => library.stepDetail(r.id, r.step),
    'episode.stepDetails': async (r) => ({ details: await library.stepDetails(r.id, r.steps) }),

    'sandbox.info': (r) => sandboxInfo(ports.docker, episodes, r.id),
    'system.doctor': () => ports.doctor.run(),
    'settings.get': () => ({
      idle_release_ms: settings.ui.idle_release,
      release_after_close_ms: settings.ui.release_after_close,
      file: settingsFile,
      home: ports.storeHome ?? null,
      bundled: ports.bundledDir ?? null,
    }),

    'terminal.open': async (r, ctx) => ({ terminal: await terminals.open(r.id, r.cols, r.rows, ctx.client) }),
    'terminal.input': (r) => {
      terminals.input(r.terminal, r.data);
      return {};
    },
    'terminal.resize': async (r) => {
      await terminals.resize(r.terminal, r.cols, r.rows);
      return {};
    },
    'terminal.ack': (r) => {
      terminals.ack(r.terminal, r.bytes);
      return {};
    },
    'terminal.close': async (r) => {
      await terminals.close(r.terminal);
      return {};
    },
    'stats.subscribe': async (r, ctx) => ({ subscription: await stats.subscribe(r.id, ctx.client) }),
    'stats.unsubscribe': (r) => {
      stats.unsubscribe(r.subscription);
      return {};
    },

    'batch.start': async (r) => {
      const sources = await Promise.all(r.tasks.map(taskPathOf));
      const agents = [...new Set(sources.map((s) => s.agent))];
      // A typed agent's file is read by the one rule, from the first task's folder, and must be
      // readable for every task of the batch (a file chosen for one task is not for the others).
      const folders = sources.map((s) => taskFolderOf(resolve(s.path)));
      const typed = r.agent !== undefined ? await fields.script(AGENT_FIELD, r.agent, folders[0]) : undefined;
      if (typed !== undefined)
        for (const folder of folders.slice(1)) await fields.script(AGENT_FIELD, typed, folder);
      const spec = typed ?? (agents.length === 1 ? agents[0] : null);
      if (!spec)
        throw new ServiceError(
          'invalid_input',
          agents.length > 1 ? 'these tasks ship different agents: pass one `agent` for the batch' : NO_AGENT,
        );
      return batches.start(
        sources.map((s) => s.path),
        spec,
        r.episodes,
        r.concurrency,
      );
    },
    'batch.list': async () => ({ batches: await batches.list() }),
    'batch.get': (r) => batches.get(r.batch),
    'batch.cancel': (r) => batches.cancel(r.batch),
    'batch.resume': (r) => batches.resume(r.batch),

    'agents.list': () => agents.list(),
    'agents.install': (r) => agents.install(r.name),
    'agents.cancelInstall': (r) => agents.cancel(r.name),
    'agents.remove': (r) => agents.remove(r.name),
  };

  /** Adds the doctor's fix to Docker failures that do not name one. */
  const withFix = async (error: AppError): Promise<AppError> => {
    if (/fix:/i.test(error.message)) return error;
    if (error.code === 'image_missing' || error.code === 'image_outdated')
      return { ...error, message: `${error.message} Fix: stepbox image build` };
    if (error.code !== 'docker_unreachable') return error;
    const status = await ports.docker.status().catch(() => null);
    return status?.fix ? { ...error, message: `${error.message} Fix: ${status.fix}` } : error;
  };

  const handle = async (
    op: string,
    rawInput: unknown,
    ctx: CallContext = LOCAL,
  ): Promise<Result<unknown>> => {
    if (!isOperationName(op)) return err(appError('invalid_input', `unknown operation "${op}"`));
    const parsed = OPERATIONS[op].request.safeParse(rawInput ?? {});
    if (!parsed.success) {
      return err(appError('invalid_input', `${op}: ${describeIssues(parsed.error.issues, '(request)')}`));
    }
    try {
      const run = impl[op] as (request: unknown, ctx: CallContext) => Promise<unknown> | unknown;
      return ok(await run(parsed.data, ctx));
    } catch (e) {
      const error = await withFix(toAppError(e, op));
      // The log says it as a sentence, as the contract does (README): the stack only at debug.
      if (error.code === 'internal') {
        log.error(error.message);
        if (e instanceof Error && e.stack) log.debug(e.stack);
      }
      return err(error);
    }
  };

  return {
    episodes,
    handle,
    subscribe: (listener) => bus.subscribe((event, payload) => listener(event, payload)),
    subscribeAudience: (listener) => bus.subscribe(listener),
    openClient(client: string) {
      windows.opened(client);
    },
    async closeClient(client: string) {
      stats.closeOwned(client);
      await terminals.closeOwned(client);
      windows.closed(client);
    },
    sweepIdle: () => idle.sweep(),
    async dispose() {
      windows.dispose();
      await idle.stop();
      unwatch?.();
      agents.dispose();
      await batches.dispose();
      stats.closeOwned(undefined);
      await terminals.closeOwned(undefined);
      await candidates.disposeAll();
      await episodes.disposeAll();
      await ports.close?.();
    },
  };
}
