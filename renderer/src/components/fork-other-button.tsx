import { selectWayOn } from '../stores/stepper/stepper-store';
import { FORK_OTHER, wayOnButtons } from '../stores/stepper/way-on';
import { useSlice, useStores } from '../stores/use-stores';

/**
 * True when the open branch's recorded agent cannot go on (its model endpoint never answered)
 * and the fork settings name no other: a pane then offers {@link ForkOtherButton} in place of
 * its Fork or Reopen (way-on.ts `wayOnButtons`: one rule for Replay, Inject and Sandbox).
 */
export function useNeedsOtherAgent(): boolean {
  const again = useSlice('stepper', (s) => selectWayOn(s).againFails !== null);
  const named = useSlice('replay', (s) => s.agent.trim() !== '');
  return wayOnButtons({ againFails: again ? '' : null }, named) === 'other-agent';
}

/** Opens the fork settings (in the Replay pane) to fork with another agent or endpoint. */
export function ForkOtherButton(props: { readonly testId: string }) {
  const stores = useStores();
  return (
    <button
      type="button"
      data-testid={props.testId}
      title="name another agent or endpoint, then fork from this step"
      onClick={() => stores.replay.getState().showSettings(true)}
    >
      {FORK_OTHER}
    </button>
  );
}
