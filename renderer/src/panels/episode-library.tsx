import { AgentsButton, InstalledAgentsList } from './agents-panel';
import { useEffect, useMemo, useRef } from 'react';
import { whyNot } from '../components/why-not';
import { WhySlot } from '../components/why-lines';
import { ProjectsSection } from '../components/projects-section';
import { OPENAI_SPEC, runsInSandboxSpec, runsOwnProgramSpec } from '../../../shared/agent-kind';
import type { EpisodeEntry, TaskSummary, UnreadableEpisode } from '../../../shared/contract/models';
import { capital } from '../../../shared/capital';
import { oneLine } from '../../../shared/one-line';
import { Panel, PanelState } from '../components/panel';
import { BatchSection } from '../components/batch-section';
import { BranchTree } from '../components/branch-tree';
import { RunningList } from '../components/running-list';
import { DockerNeeded } from '../components/docker-needed';
import {
  namedBy,
  selectUnreadableByEpisode,
  selectVisibleCases,
  selectVisibleTasks,
} from '../stores/episodes/episodes-store';
import { selectTaskAgent } from '../stores/episodes/start-agent';
import { useSlice, useStores } from '../stores/use-stores';
import { fileOf, grantField, type PickField } from '../stores/picker/picker-store';
import {
  AGENT_DIR_FIELD,
  AGENT_FIELD,
  agentFolderOf,
  cardRoots,
  IN_STORE,
  MODEL_FIELD,
  pathOnCard,
  placeProblem,
  placesFor,
  placesTitle,
  sameForAll,
  scriptPathOf,
  scriptPlaceProblem,
  chosenElsewhere,
  chosenPlaces,
  grantsFor,
  startFieldOf,
  taskFolderOf,
  type PathRoot,
  type StartField,
} from '../../../shared/start-paths';
import { PeopleText, usePathPlaces } from '../components/people-text';
import { ErrorText } from '../components/error-text';
import { returnTitle } from '../model/return-title';
import { episodesApart, mainReturnText } from '../model/episode-heading';

/** About the characters the Agent field shows at 1024×700; a longer spec is also said whole under it. */
const AGENT_FITS = 26;

/** Markdown emphasis and code marks dropped for a one-line summary. */
function plain(text: string): string {
  return text.replace(/\*\*|`/g, '');
}

function Episode(props: {
  readonly entry: EpisodeEntry;
  readonly current: string | null;
  /** What tells it from the other episodes of its task (episode-heading.ts), or none. */
  readonly apart?: string;
  /** Its branches whose traces cannot be read (a corrupt fork), said under its tree. */
  readonly unreadable?: readonly UnreadableEpisode[];
}) {
  const main = props.entry.branches[0];
  const flags = props.entry.branches.reduce((a, b) => a + b.flags, 0);
  return (
    <li className="lib-episode" data-testid="library-episode" data-episode={props.entry.episode}>
      <div className="lib-episode-head">
        <span className="lib-task" title={new Date(props.entry.created).toLocaleString()}>
          {props.entry.task}
          {props.apart ? (
            <span className="lib-apart" data-testid="episode-apart">
              {' '}
              · {props.apart}
            </span>
          ) : null}
        </span>
        {main ? (
          <span className="muted">
            {/* Each branch's return is in the tree below, named; the head names whose this one is. */}
            {main.return !== null ? (
              <span title={returnTitle(main.gamma)} data-testid="episode-main-return">
                {`${mainReturnText(main)}${flags ? ' · ' : ''}`}
              </span>
            ) : (
              ''
            )}
            {flags ? (
              <span className="flag-count" title="QA flags">
                ⚑{flags}
              </span>
            ) : null}
          </span>
        ) : null}
      </div>
      <BranchTree branches={props.entry.branches} current={props.current} />
      {props.unreadable?.length ? (
        <ul className="lib-list lib-unreadable-branches">
          {props.unreadable.map((u) => (
            <UnreadableItem key={u.branch} entry={u} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/**
 * A path a start reads, said from the task's folder (or the store, the bundled files), kept whole
 * on a line of its own if it must; the words after it wrap as words.
 */
function CardPath(props: {
  readonly path: string;
  readonly taskFolder?: string;
  readonly roots?: readonly PathRoot[];
}) {
  const said = props.taskFolder ? pathOnCard(props.path, props.taskFolder, props.roots) : props.path;
  const where = said.endsWith(IN_STORE) ? IN_STORE : '';
  return (
    <>
      <span className="keep-whole" data-testid="start-path">
        {said.slice(0, said.length - where.length)}
      </span>
      {where}
    </>
  );
}

/**
 * An episode whose trace cannot be read (a line that fails validation): named, with what is
 * wrong and what to do, where it was left out of the list without a word.
 */
function UnreadableItem(props: { readonly entry: UnreadableEpisode }) {
  const u = props.entry;
  const why = u.message.startsWith(`${u.file}: `)
    ? capital(u.message.slice(u.file.length + 2))
    : u.message.startsWith(`${u.file} `)
      ? `This file ${u.message.slice(u.file.length + 1)}`
      : u.message;
  const fork = u.branch !== u.episode;
  return (
    <li
      className="lib-episode lib-unreadable"
      data-testid="library-unreadable"
      data-episode={u.episode}
      data-branch={u.branch}
    >
      <div className="lib-episode-head">
        <span className="lib-task mono">{fork ? `└ ${u.branch}` : u.episode}</span>
        <span className="bad">{fork ? 'this fork cannot be read' : 'cannot be read'}</span>
      </div>
      {/* The reader's words start with the file: said once, on its own line, what is wrong first. */}
      <details className="lib-unreadable-why" data-testid="library-unreadable-why">
        <summary>{oneLine(why, 120)}</summary>
        {why}
      </details>
      <p className="lib-unreadable-file muted" data-testid="library-unreadable-file">
        File: {u.file}
      </p>
      {u.fix ? (
        <p className="lib-unreadable-file" data-testid="library-unreadable-fix">
          What to do: {u.fix}. <code>npx stepbox show {u.branch}</code> says the same.
        </p>
      ) : null}
    </li>
  );
}

/** A bundled case or sample task: one click starts it (all are disabled while one starts). */
function StartItem(props: {
  readonly kind: 'case' | 'task';
  readonly id: string;
  readonly title: string;
  readonly detail: string;
  readonly tooltip: string;
  readonly starting: string | null;
  /** What the start will read, said before the click (a script path resolved from the task's folder). */
  readonly reads?: string | null;
  /** The folder a sandbox: agent's files come from, resolved from the task's folder, said before the click. */
  readonly agentFolder?: string | null;
  /** The file it reads was chosen in Your folders for this task (a grant): the card says so. */
  readonly readsChosen?: boolean;
  /** The task's folder: the card says paths inside it from there, the full path on hover. */
  readonly taskFolder?: string;
  /** The store and the bundled files: a path inside them is said from there, the full path on hover. */
  readonly roots?: readonly PathRoot[];
  /**
   * Why the start would refuse the typed paths for this task (outside the folders a start reads
   * from), said before the click in the refusal's own words, in place of what it would read.
   */
  readonly refusal?: string | null;
  /** False when the refusal is said once above the cards (every card's is the same). */
  readonly refusalShown?: boolean;
  /** The error of this item's last start, shown under it (where the click was). */
  readonly error?: string | null;
  /** Said when its ▶ runs the task's own agent, not the one the Agent field holds (another start's). */
  readonly ownAgent?: string | null;
  /** The search names this item (not only its description): Enter in the search goes here first. */
  readonly named?: boolean;
  readonly onStart: () => void;
}) {
  const data = props.kind === 'case' ? { 'data-case': props.id } : { 'data-task': props.id };
  const onCard = (path: string) => <CardPath path={path} taskFolder={props.taskFolder} roots={props.roots} />;
  // The answer to a click shows where the click was: scrolled into view if the list hides it.
  const errorRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (props.error) errorRef.current?.scrollIntoView({ block: 'nearest' });
  }, [props.error]);
  return (
    <li>
      <button
        type="button"
        className="lib-item"
        data-testid={`library-${props.kind}`}
        data-named={props.named ? 'true' : undefined}
        {...data}
        {...whyNot(
          (props.starting === props.id && 'It is starting: step 0 opens once its sandbox is up.') ||
            (props.starting !== null && 'Another start is under way.'),
          props.tooltip,
          `lib-why-${props.kind}-${props.id}`,
        )}
        onClick={props.onStart}
      >
        <span className="lib-task">{props.title}</span>
        <span className="muted">{props.starting === props.id ? 'starting…' : props.detail}</span>
        {props.refusal && props.refusalShown !== false ? (
          <PeopleText
            className="lib-refusal"
            testId="start-refusal"
            text={props.refusal}
            roots={props.taskFolder ? cardRoots(props.taskFolder, props.roots) : props.roots}
          />
        ) : null}
        {props.reads && !props.refusal ? (
          <span className="muted mono lib-reads" data-testid="start-reads" title={props.reads}>
            reads {onCard(props.reads)}
            {props.readsChosen ? ' · chosen in Your folders' : ''}
          </span>
        ) : null}
        {props.ownAgent ? (
          <span className="muted lib-reads" data-testid="start-agent-own">
            {props.ownAgent}
          </span>
        ) : null}
        {props.agentFolder && !props.refusal ? (
          <span className="muted mono lib-reads" data-testid="start-agent-folder" title={props.agentFolder}>
            agent files from {onCard(props.agentFolder)}
          </span>
        ) : null}
      </button>
      <WhySlot id={`lib-why-${props.kind}-${props.id}`} />
      {props.error ? (
        <div ref={errorRef} className="state state-error" role="alert" data-testid="start-error">
          <ErrorText text={props.error} />
        </div>
      ) : null}
    </li>
  );
}

/** A start's refusal under the field it names, brought into view when it comes (the field is what to fix). */
function FieldError(props: { readonly text: string; readonly roots?: readonly PathRoot[] }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    ref.current?.scrollIntoView({ block: 'nearest' });
  }, [props.text]);
  return (
    <div ref={ref} className="state state-error" role="alert" data-testid="start-field-error">
      <ErrorText text={props.text} roots={props.roots} />
    </div>
  );
}

/**
 * Under a start-form field whose file was chosen in Your folders: for which tasks (a grant is for
 * one field of one task's starts), and Forget, which drops it (clearing the field does too).
 */
function ChosenNote(props: { readonly field: PickField; readonly value: string }) {
  const stores = useStores();
  const chosen = useSlice('picker', (s) => s.chosen);
  const file = fileOf(props.field, props.value);
  const mine =
    file === null ? [] : chosen.filter((c) => c.field === grantField(props.field) && c.path === file);
  if (file === null || mine.length === 0) return null;
  const tasks = [...new Set(mine.map((c) => c.task_name))].join(', ');
  return (
    <p
      className="muted field-hint chosen-note"
      data-testid={`chosen-note-${props.field === 'agentDir' ? 'agent-dir' : props.field}`}
      title={mine.map((c) => `${c.path}\nchosen for ${c.task}`).join('\n')}
    >
      chosen in Your folders for <span className="task-name">{tasks}</span>{' '}
      <button
        type="button"
        data-testid="chosen-forget"
        aria-label={`Forget: stepbox reads ${file} no more for this field`}
        onClick={() => void stores.picker.getState().forget(props.field, file)}
      >
        Forget
      </button>
    </p>
  );
}

/** Opens the file picker for a start-form field (a file of the task's folder or the store, not typed). */
function PickButton(props: { readonly field: PickField; readonly label: string }) {
  const stores = useStores();
  const first = useSlice('episodes', (s) => s.tasks[0]?.id ?? null);
  return (
    <button
      type="button"
      data-testid={`pick-${props.field === 'agentDir' ? 'agent-dir' : props.field}`}
      // Its name begins with the words it shows, so a person who says "Choose" (speech input) reaches it.
      aria-label={`Choose… a file for “${props.label}”`}
      title="Choose from the task’s folder or the store"
      onClick={() => void stores.picker.getState().open(props.field, first)}
    >
      Choose…
    </button>
  );
}

/** Episodes with their branch trees, bundled sample tasks and cases, and a search box. */
export function EpisodeLibrary() {
  const stores = useStores();
  const query = useSlice('episodes', (s) => s.query);
  const episodes = useSlice('episodes', (s) => s.episodes);
  const unreadable = useSlice('episodes', (s) => s.unreadable);
  const load = useSlice('episodes', (s) => s.load);
  const error = useSlice('episodes', (s) => s.error);
  const catalogError = useSlice('episodes', (s) => s.catalogError);
  const catalogLoad = useSlice('episodes', (s) => s.catalogLoad);
  const starting = useSlice('episodes', (s) => s.starting);
  const allTasks = useSlice('episodes', (s) => s.tasks);
  const allCases = useSlice('episodes', (s) => s.cases);
  const current = useSlice('stepper', (s) => s.branch);
  const agent = useSlice('episodes', (s) => s.agent);
  const model = useSlice('episodes', (s) => s.model);
  const agentDir = useSlice('episodes', (s) => s.agentDir);
  const agentOf = useSlice('episodes', (s) => s.agentOf);
  const { roots, common } = usePathPlaces();
  const chosen = useSlice('picker', (s) => s.chosen);
  const startFailed = useSlice('episodes', (s) => s.startFailed);
  const searched = query.trim();
  // An error that names a start-form field shows under that field; any other under the card clicked.
  const fieldError = startFailed ? startFieldOf(startFailed.text) : null;
  const errorAt = (id: string) => (startFailed?.key === id && fieldError === null ? startFailed.text : null);
  // Said from the clicked task's folder, as its card said it before the click.
  const failedTask = allTasks.find((t) => t.id === startFailed?.key);
  const errorUnder = (field: StartField) =>
    fieldError === field && startFailed ? (
      <FieldError
        text={startFailed.text}
        roots={failedTask ? cardRoots(taskFolderOf(failedTask.path), roots) : undefined}
      />
    ) : null;
  const tasks = useMemo(() => selectVisibleTasks(allTasks, query), [query, allTasks]);
  const apart = useMemo(() => episodesApart(episodes), [episodes]);
  // A listed episode's unreadable branches (a corrupt fork) are said under its own tree.
  const unreadableOf = useMemo(() => selectUnreadableByEpisode(episodes, unreadable), [episodes, unreadable]);
  const cases = useMemo(() => selectVisibleCases(allCases, query), [query, allCases]);
  const actions = stores.episodes.getState();
  const picker = stores.picker.getState();
  // The script a typed `scripted:FILE` (the agent, or an exec agent's model) reads, per task.
  const typed = runsOwnProgramSpec(agent) ? model : agent;
  const readsOf = (taskPath: string) => scriptPathOf(typed, taskFolderOf(taskPath));
  const inSandbox = runsInSandboxSpec(agent);
  const folderOf = (taskPath: string) => (inSandbox ? agentFolderOf(agentDir, taskFolderOf(taskPath)) : null);
  // The start's own rule on the typed paths, said on the card before the click (never read to say it).
  // The files chosen for `field` of starts of the task at `taskPath` (paths as picked).
  const grantedTo = (field: PickField, taskPath: string) =>
    grantsFor(chosen, grantField(field), taskFolderOf(taskPath)).map((g) => g.path);
  const readsChosen = (taskPath: string) => {
    const reads = readsOf(taskPath);
    return (
      reads !== null && grantedTo(runsOwnProgramSpec(agent) ? 'model' : 'agent', taskPath).includes(reads)
    );
  };
  const refusalOf = (taskPath: string): string | null => {
    if (common === null) return null;
    const folder = taskFolderOf(taskPath);
    const own = runsOwnProgramSpec(agent);
    const field = own ? MODEL_FIELD : AGENT_FIELD;
    // A file chosen with Choose… in the person's folders is read for its field of this task's
    // starts alone (the server's grant, kept in the store).
    const mine = [...common, ...chosenPlaces(grantedTo(own ? 'model' : 'agent', taskPath))];
    const script = scriptPlaceProblem(field, typed, folder, mine);
    if (script !== null)
      return chosenElsewhere(script, chosen, own ? 'model' : 'agent', readsOf(taskPath) ?? '', folder);
    const dir =
      inSandbox && agentDir.trim()
        ? placeProblem(AGENT_DIR_FIELD, agentDir, folder, [
            ...placesFor(folder, common),
            ...chosenPlaces(grantedTo('agentDir', taskPath)),
          ])
        : null;
    return dir === null
      ? null
      : chosenElsewhere(dir, chosen, 'agent_dir', agentFolderOf(agentDir, folder) ?? '', folder);
  };
  // The refusal each card would say; when every card says the same (a path outside every place),
  // it is said once, under the field, not repeated under each card.
  // A card whose ▶ runs the task's own agent (the field holds another start's) reads none of it.
  const ownOf = (t: TaskSummary) => selectTaskAgent(t, agent, agentOf).own;
  const refusals = tasks.map((t) => (ownOf(t) ? null : refusalOf(t.path)));
  const ownAll = tasks.length > 1 ? sameForAll(tasks.map(ownOf)) : null;
  const forAll = sameForAll(refusals);
  // The file or folder every start reads, when it is one for all (a store file, the bundled
  // agents): said once above the cards; under each, the sample tasks at 1024×700 repeated "reads
  // … in the store / agent files from …" for the one Agent field. A relative path is each task's
  // own file, said on its card.
  // A file chosen for one task is refused on the others' cards: then each card says its own.
  const readsAll =
    tasks.length > 1 &&
    refusals.every((r) => r === null) &&
    !tasks.some((t) => !ownOf(t) && readsChosen(t.path))
      ? sameForAll(tasks.map((t) => (ownOf(t) ? null : readsOf(t.path))))
      : null;
  const folderAll =
    tasks.length > 1 ? sameForAll(tasks.map((t) => (ownOf(t) ? null : folderOf(t.path)))) : null;
  const firstFolder = tasks.length > 0 ? taskFolderOf(tasks[0].path) : undefined;
  // A start refused under this field says it there already: the card's refusal of the same
  // typed path showed as a second, identical red block under it (a project's Start).
  const refusalUnder = (field: StartField) =>
    forAll !== null && (startFieldOf(forAll) ?? AGENT_FIELD) === field && fieldError !== field ? (
      <div className="state state-error" data-testid="start-refusal-all">
        <PeopleText
          text={forAll}
          title={`${forAll}\n\n${placesTitle([{ name: "the task's folder", path: "each task's own" }, ...(common ?? [])])}`}
        />
      </div>
    ) : null;

  return (
    // "Library": the panel holds episodes, cases, sample tasks and batches, each under its own heading.
    <Panel testId="episode-library" title="Library" className="library">
      <input
        className="search"
        type="search"
        placeholder="Search episodes, tasks…"
        aria-label="search"
        data-testid="library-search"
        aria-keyshortcuts="/"
        value={query}
        onChange={(e) => void actions.setQuery(e.target.value)}
        onKeyDown={(e) => {
          // Enter goes to the first item the search names, else the first match (a second Enter
          // starts it): no Tab walk down the list.
          if (e.key !== 'Enter') return;
          const panel = e.currentTarget.closest('[data-testid="episode-library"]');
          const first =
            panel?.querySelector<HTMLButtonElement>('.lib-item[data-named="true"]:not(:disabled)') ??
            panel?.querySelector<HTMLButtonElement>('.lib-item:not(:disabled)');
          if (first) {
            e.preventDefault();
            first.focus();
          }
        }}
      />
      {error ? <PanelState kind="error">{error}</PanelState> : null}
      <RunningList />
      <h3>Episodes</h3>
      {load === 'loading' && episodes.length === 0 ? (
        <PanelState kind="loading">Loading episodes…</PanelState>
      ) : null}
      {load !== 'loading' && episodes.length === 0 && unreadable.length === 0 ? (
        <PanelState kind="empty">
          {searched
            ? `No episode matches. You searched for “${searched}”: clear the search box to see them all.`
            : 'No episodes yet. Start a sample task below.'}
        </PanelState>
      ) : null}
      <ul className="lib-list">
        {episodes.map((e) => (
          <Episode
            key={e.episode}
            entry={e}
            current={current}
            apart={apart.get(e.episode)}
            unreadable={unreadableOf.get(e.episode)}
          />
        ))}
        {unreadable
          .filter((u) => !unreadableOf.has(u.episode))
          .map((u) => (
            <UnreadableItem key={u.branch} entry={u} />
          ))}
      </ul>
      {/* Above the cases and the sample tasks, the things a click here runs. */}
      <DockerNeeded />
      <h3>Cases</h3>
      {catalogError ? <PanelState kind="error">{catalogError}</PanelState> : null}
      {catalogLoad === 'loading' ? <PanelState kind="loading">Loading cases and tasks…</PanelState> : null}
      {cases.length === 0 && !catalogError && catalogLoad === 'ready' ? (
        <PanelState kind="empty">
          {searched ? `No case matches “${searched}”.` : 'No bundled cases.'}
        </PanelState>
      ) : null}
      <ul className="lib-list">
        {cases.map((c) => (
          <StartItem
            key={c.id}
            kind="case"
            id={c.id}
            title={c.title}
            detail={plain(c.summary)}
            tooltip={c.summary}
            starting={starting}
            error={errorAt(c.id)}
            named={namedBy(query, [c.id, c.title])}
            onStart={() => void actions.openCase(c)}
          />
        ))}
      </ul>
      {/* The Agent starts both the sample tasks and the projects under them, so it heads them
          both: under "Sample tasks" it read as theirs alone, while it drove each project's Start. */}
      <h3 data-testid="library-agent-heading">
        <label htmlFor="library-agent">Agent</label>
      </h3>
      <p className="muted field-hint" data-testid="library-agent-applies">
        for a sample task’s ▶ and a project’s Start, below (a case runs its own)
      </p>
      {/* The choices are said under the field, whole: a placeholder this long is cut at 1024 px. */}
      <div className="field-row">
        <input
          id="library-agent"
          className="search"
          type="text"
          // Empty, a sample task runs its own agent; a project has none ("the task's own" read as
          // if a project's Start would find one).
          placeholder="empty: a sample’s own"
          aria-describedby="library-agent-hint"
          data-testid="library-agent"
          list="installed-agents"
          value={agent}
          // Whole on hover; left, it shows its start (the kind and the command), not the tail
          // the caret scrolled to ("0/scripts/open-project.jsonl").
          title={agent || undefined}
          onChange={(e) => {
            actions.setAgent(e.target.value);
            void picker.edited('agent', agent, e.target.value);
          }}
        />
        <PickButton field="agent" label="Agent" />
        <AgentsButton />
        <InstalledAgentsList />
      </div>
      {/* A spec longer than the field's 1024-wide width (a path, a command) is said whole under
          it, wrapped: the field showed "0/scripts/open-project.jsonl" or "exec:python3 /work/main/resc".
          (An input, not a textarea: the installed agents are its suggestions.) */}
      {agent.length > AGENT_FITS ? (
        <div className="mono muted field-whole" data-testid="library-agent-whole">
          {agent}
        </div>
      ) : null}
      <ChosenNote field="agent" value={agent} />
      {errorUnder(AGENT_FIELD)}
      {refusalUnder(AGENT_FIELD)}
      {/* One line until asked: the whole list took nine lines at 1024×700 and pushed the tasks out of sight. */}
      <details className="muted field-hint" id="library-agent-hint" data-testid="library-agent-hint">
        <summary>every form (openai:, scripted:, exec:, …)</summary>
        openai:MODEL, anthropic:MODEL, manual, scripted:FILE, exec:COMMAND (your own program), sandbox:COMMAND
        (run inside the sandbox), codex or claude-code (installed by stepbox agents add); files and commands
        are taken from the task’s folder
      </details>
      {runsOwnProgramSpec(agent) ? (
        <>
          <label className="field-label" htmlFor="library-model">
            {MODEL_FIELD}
          </label>
          <div className="field-row">
            <input
              id="library-model"
              className="search"
              type="text"
              placeholder="where answers come from"
              aria-describedby="library-model-hint"
              data-testid="library-model"
              value={model}
              onChange={(e) => {
                actions.setModel(e.target.value);
                void picker.edited('model', model, e.target.value);
              }}
            />
            <PickButton field="model" label={MODEL_FIELD} />
          </div>
          <ChosenNote field="model" value={model} />
          {errorUnder(MODEL_FIELD)}
          {refusalUnder(MODEL_FIELD)}
          <p className="muted field-hint" id="library-model-hint">
            scripted:FILE (from the task’s folder), {OPENAI_SPEC}, replay:EPISODE, or manual (you write each
            answer)
          </p>
        </>
      ) : null}
      {inSandbox ? (
        <>
          <label className="field-label" htmlFor="library-agent-dir">
            Agent folder
          </label>
          <div className="field-row">
            <input
              id="library-agent-dir"
              className="search"
              type="text"
              placeholder="none"
              aria-describedby="library-agent-dir-hint"
              data-testid="library-agent-dir"
              value={agentDir}
              onChange={(e) => {
                actions.setAgentDir(e.target.value);
                void picker.edited('agentDir', agentDir, e.target.value);
              }}
            />
            <PickButton field="agentDir" label="Agent folder" />
          </div>
          <ChosenNote field="agentDir" value={agentDir} />
          {errorUnder(AGENT_DIR_FIELD)}
          {refusalUnder(AGENT_DIR_FIELD)}
          <p className="muted field-hint" id="library-agent-dir-hint">
            the agent’s own files, from the task’s folder: read-only at /opt/agent in the sandbox
            (/opt/agent/bin on PATH)
          </p>
        </>
      ) : null}
      <h3>Sample tasks</h3>
      {forAll === null && (readsAll || folderAll) ? (
        <p className="muted mono lib-reads-all" data-testid="start-reads-all">
          {readsAll ? (
            <span title={readsAll} data-testid="start-reads-all-script">
              each ▶ reads <CardPath path={readsAll} taskFolder={firstFolder} roots={roots} />
            </span>
          ) : null}
          {readsAll && folderAll ? <br /> : null}
          {folderAll ? (
            <span title={folderAll} data-testid="start-agent-folder-all">
              agent files from <CardPath path={folderAll} taskFolder={firstFolder} roots={roots} />
            </span>
          ) : null}
        </p>
      ) : null}
      {/* Said once above the cards, in view where ▶ is pressed: the field sits sections above. */}
      {ownAll !== null ? (
        <p className="muted lib-reads-all" data-testid="start-agent-own-all">
          each ▶ {ownAll}
        </p>
      ) : null}
      {tasks.length === 0 && !catalogError && catalogLoad === 'ready' ? (
        <PanelState kind="empty">
          {searched ? `No sample task matches “${searched}”.` : 'No bundled tasks.'}
        </PanelState>
      ) : null}
      <ul className="lib-list">
        {tasks.map((t) => (
          <StartItem
            key={t.id}
            kind="task"
            id={t.id}
            title={`▶ ${t.name}`}
            detail={t.goal}
            tooltip={t.goal}
            starting={starting}
            reads={readsAll || ownOf(t) ? null : readsOf(t.path)}
            readsChosen={ownOf(t) ? false : readsChosen(t.path)}
            agentFolder={folderAll || ownOf(t) ? null : folderOf(t.path)}
            refusal={ownOf(t) ? null : refusalOf(t.path)}
            ownAgent={ownAll ? null : ownOf(t)}
            refusalShown={forAll === null}
            taskFolder={taskFolderOf(t.path)}
            roots={roots}
            error={errorAt(t.id)}
            named={namedBy(query, [t.id, t.name])}
            onStart={() => void actions.startTask(t)}
          />
        ))}
      </ul>
      <ProjectsSection />
      <BatchSection />
    </Panel>
  );
}
