import { memo, useEffect, useRef, useState } from 'react';
import { firstWhy, whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { useSlice, useStores } from '../stores/use-stores';
import { Modal } from './modal';
import { caseRefusal } from '../stores/stepper/agent-traits';
import { caseNameProblem } from '../../../shared/case-name';
import { CONFLICT_WAY_OUT } from '../stores/teaching/teaching-store';
import type { AgentTraits } from '../../../shared/contract/models';

/**
 * Why Save as case cannot act on this branch now, with the way forward (null when it can): said
 * before the click, not after a name was typed (issue 33, item 6).
 */
export function saveWhy(s: {
  readonly busy: boolean;
  readonly live: boolean;
  /** What the branch's agent says of itself (whether a case can replay it). */
  readonly traits: AgentTraits | null;
  readonly flagged: boolean;
  readonly ended: boolean;
}): string | null {
  if (s.busy) return 'Working…';
  const refusal = caseRefusal(s.traits);
  if (refusal) return refusal;
  if (s.live && !s.ended) return 'Stop the episode first (Shift+F5): a case is saved from an ended episode.';
  if (!s.flagged)
    return 'A case teaches a failure QA catches, and this episode raised no QA flag at warning or worse.';
  return null;
}

/**
 * The line at the top of the timeline where Save as case… says why it cannot act, pointed at or
 * focused (why-lines.tsx WhySlot): its bubble lay over the timeline's filter row.
 */
export const SAVE_CASE_WHY_ID = 'save-case-why';

/**
 * Why the dialog's Save cannot act on the name typed (null when it can). A name the library
 * cannot take is said as it is typed, and Save waits for a good one: the button and the line
 * under the field give one reason, not an enabled Save beside a red line.
 */
export function saveNameWhy(busy: boolean, typed: string, conflict: string | null = null): string | null {
  return firstWhy(
    busy && 'Saving…',
    typed === '' && 'Type a name for the case first.',
    typed !== '' && caseNameProblem(typed),
    // The library refused this very name: Save would be refused again; Replace is the way.
    typed !== '' && typed === conflict && `“${typed}” is taken: ${CONFLICT_WAY_OUT}`,
  );
}

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
  const conflict = useSlice('teaching', (s) => s.conflict);
  const traits = useSlice('stepper', (s) => s.view?.summary.agent_traits ?? null);
  const flagged = useSlice('stepper', (s) => s.flags.some((f) => f.severity !== 'info'));
  const state = useSlice('stepper', (s) => s.state);
  const download = useSlice('teaching', (s) => s.download);
  const loadFailed = useSlice('stepper', (s) => s.load === 'error');
  const [name, setName] = useState('');
  // A case name typed for one episode is not another's (issue 33, item 7).
  useEffect(() => setName(''), [branch]);
  const link = useRef<HTMLAnchorElement>(null);
  const nameField = useRef<HTMLInputElement>(null);
  // A refused name is where the way out starts (type another): the field takes the focus, its text selected.
  useEffect(() => {
    if (refused) nameField.current?.select();
  }, [refused]);
  const t = stores.teaching.getState();
  // A fresh file is saved at once, as a browser's download.
  useEffect(() => {
    if (download) link.current?.click();
  }, [download]);
  // A branch that could not be read is neither saved nor shared: the pane says why, and the fix.
  if (!branch || loadFailed) return null;
  const typed = name.trim();
  const nameProblem = typed === '' ? null : caseNameProblem(typed);
  const saveBlocked = saveNameWhy(busy, typed, conflict);
  return (
    <span className="teaching" data-testid="teaching">
      <button
        type="button"
        data-testid="btn-save-case"
        {...whyNot(
          saveWhy({ busy, live, traits, flagged, ended: !live || state === 'ended' }),
          'Save this episode as a case in your case library (stepbox case new)',
          SAVE_CASE_WHY_ID,
        )}
        onClick={() => t.openSave()}
      >
        Save as case…
      </button>
      <button
        type="button"
        data-testid="btn-share"
        {...whyNot(
          busy && 'Working…',
          'Write this episode as one HTML file that opens offline (stepbox share)',
          SAVE_CASE_WHY_ID,
        )}
        onClick={() => void t.share(branch)}
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
                ref={nameField}
                data-testid="save-case-name"
                value={name}
                placeholder="my-failure"
                aria-describedby="save-case-refused"
                aria-invalid={refused || nameProblem ? true : undefined}
                onChange={(e) => setName(e.target.value)}
                autoFocus
              />
            </label>
            <button
              type="submit"
              data-testid="save-case-save"
              // The line under the field says the name's problem: the bubble leaves it in view.
              {...whyNot(saveBlocked, undefined, 'save-case-refused save-case-why')}
            >
              Save
            </button>
            {/* The refusal asked; this answers it, for the name it was about (a new name is a new try). */}
            {conflict !== null && conflict === typed ? (
              <button
                type="button"
                data-testid="save-case-replace"
                {...whyNot(
                  busy && 'Saving…',
                  `Overwrite the library case “${conflict}” with this episode`,
                  'save-case-why',
                )}
                onClick={() => void t.saveAsCase(branch, conflict, true)}
              >
                Replace
              </button>
            ) : null}
            <button type="button" data-testid="save-case-cancel" onClick={() => t.close()}>
              Cancel
            </button>
          </form>
          <p
            id="save-case-refused"
            className={refused || nameProblem ? 'bad' : 'muted'}
            data-testid="save-case-refused"
            role={refused || nameProblem ? 'alert' : undefined}
          >
            {nameProblem ??
              refused ??
              'lower-case letters, digits and dashes; the case joins your case library'}
          </p>
          <WhySlot id="save-case-why" />
        </Modal>
      ) : null}
    </span>
  );
});
