import { memo, useEffect, useRef, useState } from 'react';
import { useSlice, useStores } from '../stores/use-stores';
import { Modal } from './modal';

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
  const refused = useSlice('teaching', (s) => s.refused);
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
        <Modal title="Save as case" testId="save-case-dialog" onClose={() => t.close()}>
          <form
            className="teaching-dialog"
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
                aria-describedby="save-case-refused"
                onChange={(e) => setName(e.target.value)}
                autoFocus
              />
            </label>
            <button type="submit" data-testid="save-case-save" disabled={busy || name.trim() === ''}>
              Save
            </button>
            <button type="button" data-testid="save-case-cancel" onClick={() => t.close()}>
              Cancel
            </button>
          </form>
          <p
            id="save-case-refused"
            className={refused ? 'bad' : 'muted'}
            data-testid="save-case-refused"
            role={refused ? 'alert' : undefined}
          >
            {refused ?? 'lower-case letters, digits and dashes; the case joins your case library'}
          </p>
        </Modal>
      ) : null}
    </span>
  );
});
