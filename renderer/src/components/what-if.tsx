import { useCallback, useEffect, useRef, useState } from 'react';
import { revealWhole } from '../layout/reveal-whole';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { selectBusyWhy, selectUnderWay } from '../stores/replay/replay-store';
import { noCallText, selectNeverRan } from '../stores/inspector/inspector-store';
import { useSlice, useStores } from '../stores/use-stores';
import { formatDuration } from '../../../shared/format-duration';

/** What if…: one tool call with edited arguments, run in a throwaway sandbox restored to before the step. */
export function WhatIf(props: { readonly branch: string; readonly step: number }) {
  const stores = useStores();
  const detail = useSlice('inspector', (s) => s.detail);
  const args = useSlice('replay', (s) => s.whatIfArgs);
  const result = useSlice('replay', (s) => s.whatIfResult);
  const running = useSlice('replay', selectUnderWay);
  const busyWhy = useSlice('replay', selectBusyWhy);
  const call = detail?.step === props.step ? detail.calls[0]?.call : undefined;
  const a = stores.replay.getState();
  // The step paused inside has not run yet: the inspector shows what it is about to do.
  const heldStep = useSlice('stepper', (s) => s.held?.step ?? null);
  // Open or closed stays as the person left it while the viewed step's call loads (a far slider
  // move shows the loading line in its place, and the section drawn again came back closed),
  // and only within this branch: another episode's What-if starts closed.
  const [openIn, setOpenIn] = useState<string | null>(null);
  // The browser says a section opened in a "toggle" event queued after the click: a far move in
  // between (the section taken out for the loading line before that event ran) lost the opening
  // (CI, 043933f2). The section's own state is read as it is taken out.
  const { branch } = props;
  const keepOpenState = useCallback(
    (section: HTMLDetailsElement | null) => {
      if (!section) return;
      return () => {
        const open = section.open;
        setOpenIn((was) => (open ? branch : was === branch ? null : was));
      };
    },
    [branch],
  );
  const resultBox = useRef<HTMLDivElement>(null);
  // An observation that comes in is brought into the pane's view: at 1024×700 it landed under
  // the terminal, and the run looked like it did nothing.
  useEffect(() => {
    if (result && resultBox.current) revealWhole(resultBox.current);
  }, [result]);
  // The arguments start as the selected call's recorded ones: the stores set them with the
  // inspector's detail (app-stores.ts), in the same update as the step change.
  // One line of the closed section's height whatever the step: while the step's detail loads
  // (a slider move) it said "made no tool call" a line 4 px shorter, and the terminal below was
  // resized, and its rows redrawn, twice per move (issue 33.9).
  if (!call)
    return heldStep === props.step ? null : (
      // Kept whole or away at a pane's edge, as the section's summary that takes its place (reveal-whole.ts).
      // Open while the call loads (data-open): the panes keep What if…'s room (styles.css), not
      // resized twice per slider move.
      <div className="muted whatif-none" data-keep-whole data-open={openIn === props.branch ? '' : undefined}>
        {detail?.step === props.step
          ? // A call held as the episode ended was decided, not absent (the inspector shows it).
            selectNeverRan(detail) !== null
            ? `What if…: step ${props.step} never ran; its held call is in the inspector.`
            : noCallText(detail).whatIf
          : `What if…: step ${props.step}'s call is loading…`}
      </div>
    );
  return (
    <details
      className="whatif"
      data-testid="whatif"
      ref={keepOpenState}
      open={openIn === props.branch}
      onToggle={(e) => {
        const section = e.currentTarget;
        setOpenIn(section.open ? props.branch : null);
        // Opened, its field and Run button are brought into the Replay pane's view: at 1024×700
        // they opened below the pane's edge (under the terminal) and opening seemed to do nothing.
        if (section.open) revealWhole(section);
      }}
    >
      <summary>
        What if… ({call.name} at step {props.step})
      </summary>
      <textarea
        data-testid="whatif-args"
        rows={4}
        value={args}
        onChange={(e) => a.setWhatIfArgs(e.target.value)}
      />
      <button
        type="button"
        data-testid="whatif-run"
        {...whyNot(busyWhy, undefined, 'whatif-run-why')}
        onClick={() => void a.whatIf(props.branch, props.step, call.name)}
      >
        {running === 'whatif' ? 'Running in a throwaway sandbox…' : 'Run in a throwaway sandbox'}
      </button>
      <WhySlot id="whatif-run-why" />
      {result ? (
        <div className="whatif-result" data-testid="whatif-result" ref={resultBox}>
          {/* The workspace's tree hash is for a tooltip, not a line a person reads. */}
          <div
            className="muted"
            data-testid="whatif-note"
            title={
              result.tree_hash_after ? `workspace tree hash after: ${result.tree_hash_after}` : undefined
            }
          >
            observation (live sandbox untouched)
          </div>
          <pre className="out" data-testid="whatif-stdout">
            {result.result.stdout ?? ''}
            {result.result.stderr ? `\n${result.result.stderr}` : ''}
            {result.result.error ? `\n[${result.result.error.code}] ${result.result.error.message}` : ''}
          </pre>
          <div className="muted">
            exit {result.result.exit_code ?? '—'} · {formatDuration(result.result.duration_ms)}
          </div>
        </div>
      ) : null}
    </details>
  );
}
