import { MODEL_FIELD } from '../../../shared/start-paths';
import { OPENAI_SPEC } from '../../../shared/agent-kind';
import { selectBusyWhy, selectSettingsError } from '../stores/replay/replay-store';
import { useSlice, useStores } from '../stores/use-stores';
import { Modal } from './modal';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { forkLabel, KEEP_AND_CLOSE, reopenLabel } from '../stores/stepper/way-on';

/**
 * The dialog's title in its buttons' words (way-on.ts): "Fork at step K" where Fork is its one
 * action (a live branch), "Fork or reopen live at step K" where Reopen is offered too. It read
 * "Fork and Reopen" above a button that said "Fork".
 */
export function forkSettingsTitle(live: boolean, step: number): string {
  return live ? forkLabel(step) : `Fork or reopen live at step ${step}`;
}

/**
 * The agent a Fork or a Reopen goes on with, in a dialog of its own (issue 33, item 4): "Agent"
 * and "Its model calls answered by" both labelled and always shown (the Agent field scrolled
 * inside the Replay pane and the model field appeared only once an agent was typed; a first try
 * filled the start form instead). Fork and Reopen act from here too, at the viewed step.
 */
export function ForkSettings(props: {
  readonly branch: string;
  readonly step: number;
  readonly live: boolean;
  /** Why Fork cannot act at this step, or null. */
  readonly noFork: string | null;
  readonly onClose: () => void;
}) {
  const stores = useStores();
  const agent = useSlice('replay', (s) => s.agent);
  const model = useSlice('replay', (s) => s.model);
  // Only the answer to its own Fork or Reopen: not an error it was opened by or after.
  const error = useSlice('replay', selectSettingsError);
  const replay = stores.replay.getState();
  const busy = useSlice('replay', selectBusyWhy);
  return (
    <Modal title={forkSettingsTitle(props.live, props.step)} testId="fork-settings" onClose={props.onClose}>
      <label className="field-label" htmlFor="replay-agent">
        Agent
      </label>
      <input
        id="replay-agent"
        className="mono fork-field"
        data-testid="replay-agent"
        value={agent}
        placeholder="as recorded"
        aria-describedby="replay-agent-hint"
        onChange={(e) => replay.setAgent(e.target.value)}
        autoFocus
      />
      <p className="muted field-hint" id="replay-agent-hint">
        Empty goes on with the agent that ran this step. Else as in the start form: {OPENAI_SPEC},
        scripted:FILE (from the recorded task’s folder, or the store), exec:COMMAND, sandbox:COMMAND, codex,
        claude-code, manual.
      </p>
      <label className="field-label" htmlFor="replay-model">
        {MODEL_FIELD}
      </label>
      <input
        id="replay-model"
        className="mono fork-field"
        data-testid="replay-model"
        value={model}
        placeholder="as recorded"
        aria-describedby="replay-model-hint"
        onChange={(e) => replay.setModel(e.target.value)}
      />
      <p className="muted field-hint" id="replay-model-hint">
        For an agent that runs its own program (exec:, sandbox:, codex, claude-code): scripted:FILE,{' '}
        {OPENAI_SPEC}, replay:EPISODE or manual. Empty: as recorded.
      </p>
      {error ? (
        <p className="bad" role="alert" data-testid="fork-settings-error">
          {error}
        </p>
      ) : null}
      <div className="row fork-settings-actions">
        <button
          type="button"
          className="primary"
          data-testid="fork-settings-fork"
          {...whyNot(props.noFork ?? busy, undefined, 'fork-settings-why')}
          onClick={() =>
            void replay.fork(props.branch, props.step, 'settings').then((made) => {
              if (made) props.onClose();
            })
          }
        >
          {forkLabel(props.step)}
        </button>
        {!props.live ? (
          <button
            type="button"
            data-testid="fork-settings-reopen"
            {...whyNot(busy, undefined, 'fork-settings-why')}
            onClick={() =>
              void replay.reopen(props.branch, props.step, 'settings').then((made) => {
                if (made) props.onClose();
              })
            }
          >
            {reopenLabel(props.step)}
          </button>
        ) : null}
        <button
          type="button"
          data-testid="fork-settings-done"
          title="Close; the agent and model typed here stay for Fork and Reopen under Replay"
          onClick={props.onClose}
        >
          {KEEP_AND_CLOSE}
        </button>
      </div>
      <WhySlot id="fork-settings-why" />
    </Modal>
  );
}
