import { memo, useEffect, useRef, useState } from 'react';
import { useSlice, useStores } from '../stores/use-stores';

/**
 * "Save as case…" (a name, then the branch joins the case library) and "Share…" (the
 * branch as one HTML file, offered as a download) for the open branch.
 * Memoized: the timeline re-renders on every step viewed (a slider move); this does not change with it.
 */
export const TeachingButtons = memo(function TeachingButtons() {
  const stores = useStores();
  const branch = useSlice('stepper', (s) => s.branch);
  const live = useSlice('stepper', (s) => s.live);
  const dialog = useSlice('teaching', (s) => s.dialog);
  const busy = useSlice('teaching', (s) => s.busy);
  const note = useSlice('teaching', (s) => s.note);
  const download = useSlice('teaching', (s) => s.download);
  const [name, setName] = useState('');
  const link = useRef<HTMLAnchorElement>(null);
  const t = stores.teaching.getState();
  // A fresh file is saved at once, as a browser's download.
  useEffect(() => {
    if (download) link.current?.click();
  }, [download]);
  if (!branch) return null;
  return (
    <span className="teaching" data-testid="teaching">
      <button
        type="button"
        data-testid="btn-save-case"
        disabled={busy || live}
        onClick={() => t.openSave()}
        title="Save this episode as a case in your case library (stepbox case new)"
      >
        Save as case…
      </button>
      <button
        type="button"
        data-testid="btn-share"
        disabled={busy}
        onClick={() => void t.share(branch)}
        title="Write this episode as one HTML file that opens offline (stepbox share)"
      >
        Share…
      </button>
      {download ? (
        <a ref={link} href={download.url} download={download.name} data-testid="share-download" hidden>
          {download.name}
        </a>
      ) : null}
      {dialog === 'save' ? (
        <form
          className="teaching-dialog"
          role="dialog"
          aria-label="save as case"
          data-testid="save-case-dialog"
          onSubmit={(e) => {
            e.preventDefault();
            void t.saveAsCase(branch, name.trim());
          }}
        >
          <label>
            Case name{' '}
            <input
              data-testid="save-case-name"
              value={name}
              placeholder="my-failure"
              pattern="[a-z0-9-]{1,64}"
              onChange={(e) => setName(e.target.value)}
              autoFocus
            />
          </label>
          <button type="submit" disabled={busy || name.trim() === ''}>
            Save
          </button>
          <button type="button" onClick={() => t.close()}>
            Cancel
          </button>
        </form>
      ) : null}
      {note ? (
        <span
          className={`teaching-note ${note.error ? 'error' : 'muted'}`}
          data-testid="teaching-note"
          role="status"
          title={note.text}
        >
          {note.text}
        </span>
      ) : null}
    </span>
  );
});
