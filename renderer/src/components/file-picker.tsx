import { useEffect, useRef, useState } from 'react';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { pickedValue, type PickField } from '../stores/picker/picker-store';
import { useSlice, useStores } from '../stores/use-stores';

const WHAT: Record<PickField, string> = {
  agent: 'the agent’s script or program',
  model: 'the script that answers its model calls',
  agentDir: 'the agent’s folder',
};

/** A size in words a person reads at a glance. */
function sizeText(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KiB`;
}

/**
 * The start form's file picker: the folders of a bundled task or an opened project, the store, and
 * the person's own folders (a file chosen there is granted for the field by the server, which
 * reads nothing else outside the places). A file (or, for the agent folder, a folder) chosen
 * here fills the field; the card then says the resolved path before the start.
 */
export function FilePicker() {
  const stores = useStores();
  const field = useSlice('picker', (s) => s.field);
  const root = useSlice('picker', (s) => s.root);
  const task = useSlice('picker', (s) => s.task);
  const listing = useSlice('picker', (s) => s.listing);
  const loading = useSlice('picker', (s) => s.loading);
  const error = useSlice('picker', (s) => s.error);
  const tasks = useSlice('episodes', (s) => s.tasks);
  // The opened projects are places a start reads from too (the error names "an opened project").
  const projects = useSlice('projects', (s) => s.projects);
  const box = useRef<HTMLDivElement>(null);
  // The file entry picked out (a click), which Choose takes: a click chose it at once before,
  // and the dialog had only Cancel, where a person looks for the button that picks. Another
  // folder shown, nothing is picked out.
  const [selected, setSelected] = useState<string | null>(null);
  useEffect(() => setSelected(null), [listing]);
  const open = field !== null;
  useEffect(() => {
    if (!open) return;
    const before = document.activeElement as HTMLElement | null;
    box.current?.focus();
    return () => before?.focus();
  }, [open]);
  if (!field) return null;
  const p = stores.picker.getState();
  const e = stores.episodes.getState();
  const choose = async (name: string | null): Promise<void> => {
    // The store decides the path, and asks the server to grant one from the person's folders.
    const path = await p.take(name);
    if (path === null) return;
    const current = field === 'agent' ? e.agent : field === 'model' ? e.model : e.agentDir;
    const value = pickedValue(field, current, path);
    if (field === 'agent') e.setAgent(value);
    else if (field === 'model') e.setModel(value);
    else e.setAgentDir(value);
    p.close();
  };
  const taskSelect = (label: string) => (
    <select
      aria-label={label}
      data-testid={root === 'host' ? 'picker-for-task' : 'picker-task'}
      value={task ?? ''}
      onChange={(ev) => void p.setTask(ev.target.value)}
    >
      {tasks.map((t) => (
        <option key={t.id} value={t.id}>
          {t.name}
        </option>
      ))}
      {projects.length ? (
        <optgroup label="Opened projects">
          {projects.map((pr) => (
            <option key={pr.path} value={pr.path}>
              {pr.name}
            </option>
          ))}
        </optgroup>
      ) : null}
    </select>
  );
  const forName =
    tasks.find((t) => t.id === task)?.name ?? projects.find((pr) => pr.path === task)?.name ?? 'this task';
  // The agent's folder is a folder: its files are listed, not taken.
  const takes = (type: string): boolean => type === 'file' && field !== 'agentDir';
  const up = listing && listing.path ? listing.path.replace(/\/?[^/]*$/, '') : null;
  return (
    <div className="sheet-backdrop" onClick={() => p.close()}>
      <div
        ref={box}
        className="file-picker"
        role="dialog"
        aria-modal="true"
        aria-label={`choose ${WHAT[field]}`}
        data-testid="file-picker"
        tabIndex={-1}
        onClick={(ev) => ev.stopPropagation()}
        onKeyDown={(ev) => {
          if (ev.key === 'Escape') {
            ev.preventDefault();
            ev.stopPropagation();
            p.close();
          }
        }}
      >
        <header>
          <h2>Choose {WHAT[field]}</h2>
          <button type="button" onClick={() => p.close()} aria-label="close the file picker">
            ✕
          </button>
        </header>
        <div className="row" role="group" aria-label="where to look">
          <button
            type="button"
            aria-pressed={root === 'task'}
            className={root === 'task' ? 'primary' : ''}
            data-testid="picker-root-task"
            onClick={() => void p.setRoot('task')}
          >
            Task’s folder
          </button>
          {root === 'task' ? taskSelect('task') : null}
          <button
            type="button"
            aria-pressed={root === 'store'}
            className={root === 'store' ? 'primary' : ''}
            data-testid="picker-root-store"
            onClick={() => void p.setRoot('store')}
          >
            Store
          </button>
          <button
            type="button"
            aria-pressed={root === 'host'}
            className={root === 'host' ? 'primary' : ''}
            data-testid="picker-root-host"
            title="Any folder of yours, as Open… browses: the file you choose there is the one stepbox may read for this field"
            onClick={() => void p.setRoot('host')}
          >
            Your folders
          </button>
          {/* A file chosen in Your folders is for one task's starts: said, and changed, here. */}
          {root === 'host' ? (
            <label className="picker-for">for {taskSelect('the task the file is chosen for')}</label>
          ) : null}
        </div>
        <div className="mono picker-path" data-testid="picker-path" title={listing?.absolute ?? ''}>
          {listing?.absolute ?? '…'}
        </div>
        {error ? (
          <div className="state state-error" role="alert" data-testid="picker-error">
            {error}
          </div>
        ) : null}
        {loading && !listing ? <div className="state state-loading">Listing…</div> : null}
        {listing ? (
          <ul className="picker-list" aria-label="files">
            {up !== null ? (
              <li>
                <button type="button" data-testid="picker-up" onClick={() => void p.browse(up)}>
                  ↑ ..
                </button>
              </li>
            ) : null}
            {listing.entries.map((en) => (
              <li key={en.name}>
                <button
                  type="button"
                  data-testid="picker-entry"
                  data-name={en.name}
                  data-type={en.type}
                  {...whyNot(
                    field === 'agentDir' &&
                      en.type === 'file' &&
                      'A file: the agent’s files come from a folder.',
                    en.type === 'dir' ? `open ${en.name}` : `choose ${en.name}`,
                    'picker-list-why',
                  )}
                  aria-selected={en.type === 'file' ? en.name === selected : undefined}
                  className={en.name === selected ? 'selected' : undefined}
                  onClick={() =>
                    en.type === 'dir'
                      ? void p.browse(listing.path ? `${listing.path}/${en.name}` : en.name)
                      : setSelected(en.name)
                  }
                  // A double click or Enter takes a file at once, as a system's open dialog does.
                  onDoubleClick={() => (takes(en.type) ? void choose(en.name) : undefined)}
                  onKeyDown={(ev) => {
                    if (ev.key !== 'Enter' || !takes(en.type)) return;
                    ev.preventDefault();
                    void choose(en.name);
                  }}
                >
                  <span className="mono">
                    {en.type === 'dir' ? '▸ ' : ''}
                    {en.name}
                    {en.type === 'dir' ? '/' : ''}
                  </span>
                  {en.type === 'file' ? <span className="muted">{sizeText(en.size)}</span> : null}
                </button>
              </li>
            ))}
            {listing.entries.length === 0 ? <li className="muted">This folder is empty.</li> : null}
          </ul>
        ) : null}
        <WhySlot id="picker-list-why" />
        <p className="muted" data-testid="picker-words">
          {root === 'host' ? (
            <>
              The file you choose here is the one stepbox may read for this field, on starts of{' '}
              <span className="task-name">{forName}</span>; nothing else in this folder is.{' '}
            </>
          ) : (
            'A path in a sample task’s folder is kept relative to it, as the form resolves it. '
          )}
          Enter or a double click takes a file; Esc closes.
        </p>
        {/* The way out last, after the words, the primary action first: as Save as case… and
            the fork settings have them. */}
        <div className="row picker-actions">
          {field === 'agentDir' ? (
            <button
              type="button"
              className="primary"
              data-testid="picker-use-folder"
              {...whyNot(!listing && 'The folder is still being listed.', undefined, 'picker-actions-why')}
              onClick={() => void choose(null)}
            >
              Use this folder
            </button>
          ) : (
            <button
              type="button"
              className="primary"
              data-testid="picker-choose"
              {...whyNot(
                selected === null &&
                  'Pick a file in the list first (a double click or Enter takes it at once).',
                selected === null ? 'Choose' : `Choose ${selected}`,
                'picker-actions-why',
              )}
              onClick={() => (selected === null ? undefined : void choose(selected))}
            >
              Choose
            </button>
          )}
          <button type="button" data-testid="picker-cancel" onClick={() => p.close()}>
            Cancel
          </button>
        </div>
        <WhySlot id="picker-actions-why" />
      </div>
    </div>
  );
}
