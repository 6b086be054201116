import { installLineWords } from '../model/install-words';
import { useEffect, useRef } from 'react';
import type { AgentProgress, AgentView } from '../../../shared/contract/agents';
import { selectInstalledNames, sizeText, type AgentNote } from '../stores/agents/agents-store';
import { useSlice, useStores } from '../stores/use-stores';
import { whyNot } from '../components/why-not';
import { WhySlot } from '../components/why-lines';

/** The start form's opener of the Agents panel, beside the Agent field (a Tab stop like any button). */
export function AgentsButton() {
  const setOpen = useSlice('agents', (s) => s.setOpen);
  const open = useSlice('agents', (s) => s.open);
  return (
    <>
      <button
        type="button"
        data-testid="open-agents"
        aria-haspopup="dialog"
        title="Agents: add (install) codex, claude-code, gemini… with npm, see what is installed, remove"
        onClick={() => setOpen(true)}
      >
        Agents…
      </button>
      {open ? <AgentsPanel onClose={() => setOpen(false)} /> : null}
    </>
  );
}

/** The installed agents as suggestions of the Agent field (`<input list="installed-agents">`). */
export function InstalledAgentsList() {
  const agents = useSlice('agents', (s) => s.agents);
  const names = selectInstalledNames({ agents });
  return (
    <datalist id="installed-agents" data-testid="installed-agents">
      {names.map((n) => (
        <option key={n} value={n} />
      ))}
    </datalist>
  );
}

/**
 * The Agents panel: every recipe (shipped, and the user's own from $STEPBOX_HOME/agents/recipes)
 * with what is installed of it, Add with npm's progress (Cancel leaves nothing half-made), Remove.
 */
export function AgentsPanel(props: { readonly onClose: () => void }) {
  const box = useRef<HTMLDivElement>(null);
  const agents = useSlice('agents', (s) => s.agents);
  const loaded = useSlice('agents', (s) => s.loaded);
  const error = useSlice('agents', (s) => s.error);
  // Focus goes into the panel (a screen reader reads it) and back to the opener when it closes.
  const { onClose } = props;
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    box.current?.focus();
    return () => before?.focus();
  }, []);
  // Esc closes it wherever focus is (a clicked Add is replaced by Cancel, and focus falls to the page).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      onClose();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [onClose]);
  return (
    <div className="sheet-backdrop" onClick={props.onClose}>
      <div
        ref={box}
        className="agents-panel"
        role="dialog"
        aria-modal="true"
        aria-labelledby="agents-title"
        data-testid="agents-panel"
        tabIndex={-1}
        onClick={(e) => e.stopPropagation()}
        onKeyDown={(e) => {
          // Keys typed here are the panel's: the debugger's keys wait until it closes.
          e.stopPropagation();
        }}
      >
        <header>
          <h2 id="agents-title">Agents</h2>
          <button type="button" onClick={props.onClose} aria-label="close the Agents panel">
            ✕
          </button>
        </header>
        <p className="muted agents-intro">
          Coding agents people already use, run inside the sandbox. Add installs one with npm into the store;
          then type its name in the Agent field (with a model). Your own recipes, in agents/recipes in the
          store, are listed too.
        </p>
        {error ? (
          <p className="bad" role="alert" data-testid="agents-error">
            {error}
          </p>
        ) : null}
        {!loaded ? <p className="muted">Reading the recipes…</p> : null}
        {loaded && !error && agents.length === 0 ? (
          <p className="muted">No recipes found: the shipped ones are missing from this install.</p>
        ) : null}
        <ul className="agents-list">
          {agents.map((a) => (
            <AgentRow key={a.name} agent={a} />
          ))}
        </ul>
        <p className="muted">Esc closes this panel; an install goes on in the background.</p>
      </div>
    </div>
  );
}

function AgentRow(props: { readonly agent: AgentView }) {
  const { agent } = props;
  const stores = useStores();
  const progress = useSlice('agents', (s) =>
    agent.name in s.installing ? s.installing[agent.name] : undefined,
  );
  const removing = useSlice('agents', (s) => agent.name in s.removing);
  const note = useSlice('agents', (s) => s.notes[agent.name] ?? null);
  const actions = stores.agents.getState();
  const installing = progress !== undefined;
  const have = agent.installed;
  const stale = have.length > 0 && have.every((i) => !i.up_to_date);
  return (
    <li className="agent-row" data-testid={`agent-${agent.name}`}>
      <div className="agent-head">
        <span className="agent-name">
          <span className="mono">{agent.name}</span>
          {agent.own ? (
            <span
              className="agent-own muted"
              data-testid="agent-own"
              title="from agents/recipes in the store"
            >
              {' '}
              your recipe
            </span>
          ) : null}
        </span>
        <span className="agent-state" data-testid="agent-state">
          {have.length === 0 ? (
            <span className="muted">not installed · pins {agent.pinned}</span>
          ) : (
            have.map((i) => (
              <span key={i.version} className={i.up_to_date ? 'good' : 'warn'}>
                {i.version} · {sizeText(i.bytes)} · {i.up_to_date ? 'up to date' : 'recipe changed'}
              </span>
            ))
          )}
        </span>
        <span className="agent-actions">
          {installing ? (
            <button
              type="button"
              data-testid="agent-cancel"
              aria-label={`cancel the install of ${agent.name}`}
              onClick={() => void actions.cancel(agent.name)}
            >
              Cancel
            </button>
          ) : have.length === 0 || stale ? (
            <button
              type="button"
              className="primary"
              data-testid="agent-add"
              aria-label={`${stale ? 'update' : 'add'} ${agent.name}`}
              {...whyNot(removing && 'Removing…', undefined, `agent-why-${agent.name}`)}
              onClick={() => void actions.install(agent.name)}
            >
              {stale ? 'Update' : 'Add'}
            </button>
          ) : null}
          {have.length > 0 && !installing ? (
            <button
              type="button"
              data-testid="agent-remove"
              aria-label={`remove ${agent.name}`}
              {...whyNot(removing && 'Removing…', undefined, `agent-why-${agent.name}`)}
              onClick={() => void actions.remove(agent.name)}
            >
              {removing ? 'Removing…' : 'Remove'}
            </button>
          ) : null}
        </span>
      </div>
      <WhySlot id={`agent-why-${agent.name}`} />
      {agent.description ? <div className="muted agent-desc">{agent.description}</div> : null}
      {installing ? <InstallProgressLine name={agent.name} progress={progress} /> : null}
      {note ? <NoteLine note={note} /> : null}
    </li>
  );
}

const PHASES: Record<AgentProgress['phase'], string> = {
  runtime: 'fetching Node',
  package: 'installing the package',
  files: 'measuring the files',
  done: 'done',
};

function InstallProgressLine(props: { readonly name: string; readonly progress: AgentProgress | null }) {
  const { progress } = props;
  const percent = progress?.percent ?? 0;
  return (
    <div className="agent-progress" data-testid="agent-progress">
      <progress max={100} value={percent} aria-label={`installing ${props.name}`} />
      <span className="muted">{progress ? `${PHASES[progress.phase]} · ${percent}%` : 'starting npm…'}</span>
      {progress ? <InstallLine message={progress.message} /> : null}
    </div>
  );
}

/** npm's last line in words, the line itself under Details (model/install-words.ts). */
function InstallLine(props: { readonly message: string }) {
  const words = installLineWords(props.message);
  return (
    <div className="agent-npm-line" data-testid="agent-install-line">
      {words ? <span className="muted">{words}</span> : null}
      {words !== props.message ? (
        <details>
          <summary className="muted">Details</summary>
          <div className="mono muted agent-npm-raw" title={props.message}>
            {props.message}
          </div>
        </details>
      ) : null}
    </div>
  );
}

function NoteLine(props: { readonly note: AgentNote }) {
  return (
    <div
      className={`agent-note ${{ ok: 'good', info: 'muted', error: 'bad' }[props.note.kind]}`}
      role={props.note.kind === 'error' ? 'alert' : 'status'}
      data-testid="agent-note"
    >
      {props.note.text}
    </div>
  );
}
