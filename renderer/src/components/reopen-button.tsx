import { selectBusyWhy, selectUnderWay } from '../stores/replay/replay-store';
import { selectWayOn } from '../stores/stepper/stepper-store';
import { selectBranchStep, whyNoReopen } from '../stores/stepper/why-not-now';
import { useSlice, useStores } from '../stores/use-stores';
import { firstWhy, whyNot } from './why-not';

/**
 * Reopen for a branch that is not live, at the step and in the words the way on names
 * (way-on.ts): the Replay panel's and the Sandbox panel's are this one button. `whyIn`: the
 * WhySlot of its row, where its reason is said while it cannot act.
 */
export function ReopenButton(props: {
  readonly branch: string;
  readonly testId: string;
  readonly whyIn: string;
}) {
  const stores = useStores();
  const label = useSlice('stepper', (s) => selectWayOn(s).reopen);
  const at = useSlice('stepper', selectBranchStep);
  const noReopen = useSlice('stepper', whyNoReopen);
  const busyWhy = useSlice('replay', selectBusyWhy);
  const reopening = useSlice('replay', (s) => selectUnderWay(s) === 'reopen');
  if (at === null) return null;
  return (
    <button
      type="button"
      data-testid={props.testId}
      {...whyNot(
        firstWhy(noReopen, busyWhy),
        'restore this step in a fresh sandbox and continue live from it',
        props.whyIn,
      )}
      onClick={() => void stores.replay.getState().reopen(props.branch, at)}
    >
      {reopening ? 'Reopening…' : label}
    </button>
  );
}
