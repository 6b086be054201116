import { useEffect, useRef, type KeyboardEvent } from 'react';
import { CHECK_FIELD, GOAL_FIELD, pathForPeople, startFieldOf } from '../../../shared/start-paths';
import { PeopleText, usePathPlaces } from './people-text';
import { useSlice, useStores } from '../stores/use-stores';
import { Modal } from './modal';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { projectKindWords } from '../model/project-kind';
import { WorldWarnings } from './world-warnings';
import { selectProjectAgent } from '../stores/episodes/start-agent';
import { OPEN_PATH_TAB } from '../hooks/action-keys';

/**
 * What Open… takes, in the words the welcome screen and the dialog's hint both say (the hint
 * left Harbor task folders out while the welcome named them).
 */
export const OPENABLE =
  'your own project folder (a devcontainer one too), a task.json or a Harbor task folder';

/** Moves the caret to the end of a field once the value just set is drawn. */
function caretToEnd(input: HTMLInputElement): void {
  requestAnimationFrame(() => {
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  });
}

/**
 * "Open…" (issue 30, item 6): a folder or a task.json by its path — typed with completion in web
 * mode, or the desktop app's native dialog — listed as a project a person starts with the
 * library's Agent like any sample task; a bare folder has a Goal field of its own. Opened
 * projects stay listed (kept in the store).
 */
export function ProjectsSection() {
  const stores = useStores();
  const projects = useSlice('projects', (s) => s.projects);
  const goals = useSlice('projects', (s) => s.goals);
  const checks = useSlice('projects', (s) => s.checks);
  const removeError = useSlice('projects', (s) => s.removeError);
  const dialog = useSlice('projects', (s) => s.dialog);
  const opened = useSlice('projects', (s) => s.opened);
  // The card Open… just listed, brought into view once (the list may be long above it).
  const openedCard = useRef<HTMLLIElement | null>(null);
  useEffect(() => {
    if (opened === null || !openedCard.current) return;
    openedCard.current.scrollIntoView({ block: 'nearest' });
    stores.projects.getState().shownOpened();
  }, [opened, projects, stores]);
  const starting = useSlice('episodes', (s) => s.starting);
  const agent = useSlice('episodes', (s) => s.agent);
  const agentOf = useSlice('episodes', (s) => s.agentOf);
  const startFailed = useSlice('episodes', (s) => s.startFailed);
  const { roots } = usePathPlaces();
  const p = stores.projects.getState();
  const e = stores.episodes.getState();
  return (
    <>
      <div className="lib-heading">
        <h3>Projects</h3>
        <button
          type="button"
          data-testid="projects-open"
          title="Open a project folder or a task.json by its path"
          onClick={() => p.openDialog()}
        >
          Open…
        </button>
      </div>
      {projects.length === 0 ? (
        <p className="muted state-empty" data-testid="projects-empty">
          Your own folder or task.json: Open… lists it here to start with any agent.
        </p>
      ) : null}
      <ul className="lib-list">
        {projects.map((project) => {
          const goal = goals[project.path] ?? '';
          const check = checks[project.path] ?? '';
          const needsGoal = project.kind === 'folder' && goal.trim() === '';
          // The agent Start uses here, or why it cannot run here (the store's rule).
          const agentHere = selectProjectAgent(project, agent, agentOf);
          const goalId = `project-goal-${encodeURIComponent(project.path)}`;
          const checkId = `project-check-${encodeURIComponent(project.path)}`;
          // The words beside Start that say which agent it uses, or why none: a Start greyed for
          // the Agent field's agent is described by them (they are its reason, in view).
          const agentId = `${goalId}-agent`;
          const startWhyIds =
            needsGoal && project.problem === undefined
              ? `${goalId}-why ${goalId}-start-why`
              : agentHere.refusal !== null && project.problem === undefined
                ? `${agentId} ${goalId}-start-why`
                : `${goalId}-start-why`;
          return (
            <li
              key={project.path}
              ref={project.path === opened ? openedCard : undefined}
              className="project"
              data-testid="project"
              data-path={project.path}
              // Read again from disk as the card is reached (a folder may have got a task.json
              // in a shell since it was opened): its kind, its Goal box, its Start.
              onPointerEnter={() => void p.load()}
              onFocus={(ev) => {
                if (!ev.currentTarget.contains(ev.relatedTarget as Node | null)) void p.load();
              }}
            >
              <div className="project-head">
                <span className="lib-task">{project.name}</span>
                <span className="muted mono project-path" title={project.path}>
                  {projectKindWords(project)} · {pathForPeople(project.path, roots)}
                </span>
              </div>
              {/* What its task asks, before its Start (a person could not tell what a task.json or a
                  Harbor task asks): two lines cut with an ellipsis, whole on hover (its title) and
                  when focused (styles.css), so the card is no taller than it needs. */}
              {project.goal !== undefined && project.goal.trim() !== '' ? (
                <p
                  className="project-task-goal"
                  data-testid="project-task-goal"
                  tabIndex={0}
                  title={project.goal}
                  aria-label={`Goal: ${project.goal}`}
                >
                  {project.goal}
                </p>
              ) : null}
              {/* Before its Goal and Start: what its start would leave out (the CLI's warnings). */}
              <WorldWarnings warnings={project.warnings} testId="project-warnings" />
              {project.kind === 'folder' ? (
                <>
                  <label className="field-label" htmlFor={goalId}>
                    {GOAL_FIELD}
                  </label>
                  {/* A few lines, growing with the goal: a one-line input showed "Read notes.txt and say whe". */}
                  <textarea
                    id={goalId}
                    className="search project-goal"
                    data-testid="project-goal"
                    rows={2}
                    placeholder="what the agent should do"
                    value={goal}
                    onChange={(ev) => p.setGoal(project.path, ev.target.value)}
                  />
                  {/* The CLI's --verify: without it the episode ends "failed: … no verifier passed it". */}
                  <label className="field-label" htmlFor={checkId}>
                    {CHECK_FIELD} <span className="muted">optional</span>
                  </label>
                  <input
                    id={checkId}
                    className="search mono"
                    data-testid="project-check"
                    placeholder="test -f out.txt"
                    title="Run in /workspace after the agent ends; exit 0 = success (the CLI’s --verify)"
                    value={check}
                    onChange={(ev) => p.setCheck(project.path, ev.target.value)}
                  />
                </>
              ) : null}
              <button
                type="button"
                className="primary"
                data-testid="project-start"
                {...whyNot(
                  (project.problem !== undefined &&
                    'Its task does not read (said below): fix the file, then open it again with Open….') ||
                    (needsGoal && 'Type its Goal first: a bare folder has no task.json to say what to do.') ||
                    // Refused at the click before (walk 12): greyed now, the card's words beside it say why.
                    agentHere.refusal ||
                    // Its own start said as its own ("Another start…" stood under the button just pressed).
                    (starting === project.path && 'It is starting: step 0 opens once its sandbox is up.') ||
                    (starting !== null && 'Another start is under way.'),
                  'Start it with the library’s Agent',
                  startWhyIds,
                )}
                onClick={() =>
                  void (async () => {
                    // Its kind read again first: a task.json written since takes no Goal.
                    await p.load();
                    const now = stores.projects.getState().projects.find((q) => q.path === project.path);
                    if (now && !now.problem && (now.kind === 'task' || goal.trim() !== ''))
                      await e.startProject(now, goal, check);
                  })()
                }
              >
                {starting === project.path ? 'starting…' : '▶ Start'}
              </button>{' '}
              {/* Greyed with its reason in view, not behind a hover: the Goal box above is empty. */}
              {needsGoal && project.problem === undefined ? (
                <span className="muted" id={`${goalId}-why`} data-testid="project-start-why">
                  needs a goal
                </span>
              ) : null}{' '}
              {/* Which agent Start uses, where it is pressed: the field is sections above. */}
              <span
                className="muted project-agent"
                id={agentId}
                data-testid="project-agent"
                title="The library’s Agent field"
              >
                {/* A project never names an agent of its own (a sample task or a case may): "with the
                  task’s own agent" was promised here, and Start was refused for the lack of one. */}
                {agentHere.runs !== null ? (
                  <>
                    with <code>{agentHere.runs}</code>
                  </>
                ) : (
                  agentHere.why
                )}
              </span>{' '}
              <button
                type="button"
                data-testid="project-remove"
                title="Forget this project: it leaves the list; its folder and files on disk are not touched"
                aria-label={`Remove ${project.name} from the list (its folder is not deleted)`}
                onClick={() => void p.remove(project.path)}
              >
                Remove
              </button>
              <WhySlot id={`${goalId}-start-why`} />
              {removeError?.path === project.path ? (
                <div className="state state-error" role="alert" data-testid="project-remove-error">
                  {removeError.text}
                </div>
              ) : null}
              {project.problem !== undefined ? (
                <div className="state state-error" data-testid="project-problem">
                  <PeopleText text={project.problem} />
                </div>
              ) : null}
              {/* An error naming a start-form field (Agent) shows under that field, at the panel's top. */}
              {startFailed?.key === project.path && startFieldOf(startFailed.text) === null ? (
                <div className="state state-error" role="alert" data-testid="project-error">
                  <PeopleText text={startFailed.text} />
                </div>
              ) : null}
            </li>
          );
        })}
      </ul>
      {dialog ? <OpenDialog /> : null}
    </>
  );
}

/** Open…: the path typed with completion (web mode), or the native dialog (desktop app). */
function OpenDialog() {
  const stores = useStores();
  const path = useSlice('projects', (s) => s.path);
  const suggestions = useSlice('projects', (s) => s.suggestions);
  const completion = useSlice('projects', (s) => s.completion);
  const error = useSlice('projects', (s) => s.error);
  const opening = useSlice('projects', (s) => s.opening);
  const native = useSlice('projects', (s) => s.nativePicker);
  const p = stores.projects.getState();
  return (
    <Modal title="Open a project" testId="open-dialog" onClose={() => p.close()}>
      <form
        className="open-form"
        onSubmit={(ev) => {
          ev.preventDefault();
          void p.submit();
        }}
      >
        <label className="field-label" htmlFor="open-path">
          Path of a folder or a task.json
        </label>
        <div className="field-row">
          <input
            id="open-path"
            className="mono"
            data-testid="open-path"
            list="open-path-suggestions"
            placeholder="/home/you/project"
            autoComplete="off"
            aria-describedby="open-path-hint"
            value={path}
            onChange={(ev) => void p.setPath(ev.target.value)}
            onKeyDown={(ev: KeyboardEvent<HTMLInputElement>) => {
              // Tab fills in what the completions share, as a shell does (the one suggestion
              // whole: a folder goes on to its entries); the focus stays in the field, the caret
              // at the end, so what is typed next goes on the path. With nothing more to fill
              // in, Tab moves on.
              if (ev.key === 'Tab' && !ev.shiftKey && completion !== null) {
                ev.preventDefault();
                void p.setPath(completion);
                caretToEnd(ev.currentTarget);
              }
            }}
            autoFocus
          />
          {native ? (
            <button type="button" data-testid="open-browse" onClick={() => void p.pick()}>
              Browse…
            </button>
          ) : null}
        </div>
        <datalist id="open-path-suggestions">
          {suggestions.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
        <ul className="open-suggestions mono" data-testid="open-suggestions" aria-label="completions">
          {suggestions.slice(0, 8).map((s) => (
            <li key={s}>
              <button
                type="button"
                data-testid="open-suggestion"
                onClick={() => {
                  void p.setPath(s);
                  const input = document.getElementById('open-path');
                  if (input instanceof HTMLInputElement) caretToEnd(input);
                }}
              >
                {s}
              </button>
            </li>
          ))}
        </ul>
        <p className="muted" id="open-path-hint">
          Opens {OPENABLE}. A bare project folder&apos;s files are the workspace; you give its goal.{' '}
          <span data-testid="open-path-tab">Tab: {OPEN_PATH_TAB}.</span>
        </p>
        {error ? (
          <p className="bad" role="alert" data-testid="open-error">
            {error}
          </p>
        ) : null}
        <div className="row">
          <button
            type="submit"
            className="primary"
            data-testid="open-submit"
            {...whyNot(
              (opening && 'Opening…') ||
                (path.trim() === '' && 'Type the path of a folder or a task.json first.'),
              undefined,
              'open-submit-why',
            )}
          >
            Open
          </button>
          <button type="button" onClick={() => p.close()}>
            Cancel
          </button>
        </div>
        <WhySlot id="open-submit-why" />
      </form>
    </Modal>
  );
}
