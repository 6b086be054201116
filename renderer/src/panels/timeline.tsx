import { ruleLabel, ruleTitle, ruleWord } from '../../../shared/qa/rule-label';
import {
  memo,
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type CSSProperties,
  type KeyboardEvent,
} from 'react';
import { SAVE_CASE_WHY_ID, TeachingButtons } from '../components/teaching-buttons';
import { WhySlot } from '../components/why-lines';
import { flushSync } from 'react-dom';
import type { BranchSummary, StepRow } from '../../../shared/contract/models';
import type { HeldStage } from '../../../shared/held-action';
import { Panel, PanelState } from '../components/panel';
import { RewardChart } from '../components/reward-chart';
import { marksShown, markWords, ROW_MARKS, shortMark, type RowMarkKey } from '../model/row-marks';
import { Welcome } from '../components/welcome';
import { BranchTree } from '../components/branch-tree';
import { selectEpisodeBranches } from '../stores/episodes/episodes-store';
import { FlagList, TimelineTools } from '../components/timeline-tools';
import { filterRows, indexOfStep, isFilterEmpty, NO_FILTER, type RowFilter } from '../model/row-filter';
import { fillSlots, scrollTopFor, type ScrollView } from '../model/row-scroll';
import { useFixedRows } from '../hooks/use-fixed-rows';
import { useSlice, useStores } from '../stores/use-stores';
import {
  hasStepBreakpoint,
  rowsWithHeld,
  selectDecisionCount,
  selectUnfinishedCount,
  selectFirstStep,
  selectVerifierReward,
  selectViewedStep,
  type VerifierReward,
} from '../stores/stepper/stepper-store';
import { stepsText } from '../../../shared/format-outcome';
import { forkMarkText } from '../model/fork-mark';
import { formatDuration, NOT_RUN, NOT_TIMED } from '../../../shared/format-duration';
import { errorMarkText } from '../../../shared/end-words';
import { countOf } from '../../../shared/count-of';

const ROW_HEIGHT = 22;
/** Whole rows the list keeps in view before the QA flag list above it unfolds by itself. */
const ROWS_KEPT = 6;

const STATUS_LABEL: Record<StepRow['status'], string> = {
  ok: 'ok',
  nonzero_exit: 'exit≠0',
  tool_error: 'error',
  parse_error: 'parse',
  final: 'final',
  pending: 'running',
  setup: 'setup',
};

/** Why a row names a tool that never ran. */
const NEVER_RAN =
  'the agent decided this call; the step was held before it ran and the episode ended: the tool never ran';

/** What the status column says of a row, and its tooltip: a held step waits for the person. */
function statusOf(
  row: StepRow,
  closed: boolean,
  held: HeldStage | null,
): { readonly word: string; readonly title?: string; readonly tone?: string } {
  if (closed && !row.snapshot && row.step > 0)
    return row.not_run
      ? { word: 'never ran', title: NEVER_RAN }
      : { word: 'incomplete', title: 'the step did not finish: it has no snapshot' };
  if (held === 'before_tool')
    return {
      word: 'waiting',
      title: 'held before its tools run: run it, edit it or give its result (inspector)',
    };
  if (held === 'before_answer')
    return {
      word: 'waiting',
      title: 'held before the agent gets the answer: edit it or let it go (inspector)',
    };
  // The agent saw a fallback (its call was killed at the timeout): "ok" would be untrue.
  if (row.real && !row.overridden) {
    const timeout = /\berror timeout\b/.test(row.real);
    return {
      word: timeout ? 'timeout' : 'fallback',
      title: `${timeout ? 'killed at its timeout; ' : ''}the agent was shown a fallback — ${row.real}`,
      tone: 'fallback',
    };
  }
  // A call of a tool the task does not offer was refused: said so, not "parse" (the agent's
  // answer parsed; its tool is what is wrong, which the row's flag names). "unknown tool" does
  // not fit the column whole (see FITS); the tooltip and the inspector say it with the parser's words.
  if (row.status === 'parse_error' && row.not_offered?.length)
    return {
      word: 'refused',
      title: `unknown tool: ${row.not_offered.join(', ')} is not a tool this task offers, so the call was refused and nothing ran (the inspector has the parser's words)`,
    };
  // The code itself, as the inspector says it ("exit 1"); a row from an older server has none.
  if (row.status === 'nonzero_exit' && row.exit_code !== undefined) return { word: `exit ${row.exit_code}` };
  return { word: STATUS_LABEL[row.status] };
}

const NO_FORKS: readonly BranchSummary[] = [];

/** True when the row's calls came back (its status is theirs): a duration missing then is not known, not absent. */
function ranTools(row: StepRow): boolean {
  return row.status === 'ok' || row.status === 'nonzero_exit' || row.status === 'tool_error';
}

/** How many marks a row carries besides its QA flags: INJ, HUM, edits, rollbacks, forks, … */
function markCount(row: StepRow, forks: readonly BranchSummary[]): number {
  const marks = [
    row.injected,
    row.human,
    row.overridden,
    row.edited,
    row.rollbacks,
    row.rolled_back_to !== undefined && row.rolled_back_to !== null,
    row.drift,
    row.real,
    row.error,
  ];
  return marks.filter(Boolean).length + forks.length;
}

/**
 * True when a row carries more than one mark: its marks then take the room a flag's row gives
 * them (the arguments give way, whole in their tooltip), so "INJ HUM" is not cut to "INJ H…"
 * in a 1024-wide window.
 */
function severalMarks(row: StepRow, forks: readonly BranchSummary[]): boolean {
  return markCount(row, forks) > 1;
}

/**
 * The most characters each short column shows whole (the rows' monospace fonts are at most
 * 0.61em wide: 12px in 64 px of time, 52 px of reward, 96 px of tool at 1024 wide; 11px in
 * 72 px of status). A cell whose text fits is not clipped: a clipping cell is a clip of its
 * own for the browser, and its contents a paint chunk of their own, and ~150 of them on a
 * screenful made the frame of a slider move a third slower (paint and layerize, issue 33.9).
 * A longer text clips with its ellipsis, as every cell did.
 */
const FITS = { tool: 13, status: 10, dur: 8, rew: 7, rewVerifier: 11 } as const;

/** A reward with its sign, as the verifier's part is added to a step's: `+1.00`, `-0.50`. */
function signed(x: number): string {
  return `${x < 0 ? '-' : '+'}${Math.abs(x).toFixed(2)}`;
}

/** The last row's reward cell, said whole: the step's own reward and the verifier's, named. */
function verifierRewardTitle(step: string, v: VerifierReward): string {
  return `${step ? `step reward ${step} + ` : ''}the verifier's final reward ${v.reward.toFixed(2)} (${v.verdict})`;
}

/** The gravest severity among a row's flags (the colour of its flag count). */
function worstSeverity(flags: StepRow['flags']): StepRow['flags'][number]['severity'] {
  return (
    flags.find((f) => f.severity === 'error')?.severity ??
    flags.find((f) => f.severity === 'warning')?.severity ??
    flags[0].severity
  );
}

/** `' clip'` when `text` may be wider than its column (see FITS). */
function clipOver(text: string, chars: number): string {
  return text.length > chars ? ' clip' : '';
}

/** Rows drawn at most beyond a window's own to fill the slots it leaves empty (see fillSlots). */
const SLOTS_FILLED = 3;

/** One timeline row; memoized so moving the selection re-renders two rows, not a screenful. */
const Row = memo(function Row(props: {
  readonly row: StepRow;
  /** The branch is closed (or not live here): a row without a snapshot never completed. */
  readonly closed: boolean;
  readonly selected: boolean;
  /** The step is held at a stop inside it, waiting for the person. */
  readonly held: HeldStage | null;
  readonly breakpoint: boolean;
  readonly forks: readonly BranchSummary[];
  readonly top: number;
  /** Its place in the list, from 1 (the nodes are drawn in the order of their slots). */
  readonly rowIndex: number;
  readonly onSelect: (step: number) => void;
  readonly onBreakpoint: (step: number) => void;
  /** The verifier's reward, on the row of the step it was recorded at (the last); else null. */
  readonly verifier: VerifierReward | null;
}) {
  const { row } = props;
  const status = statusOf(row, props.closed, props.held);
  // A step whose calls came back but were not timed (an agent inside the sandbox ran them) says "—".
  const duration = row.duration_ms === null && !ranTools(row) ? '' : formatDuration(row.duration_ms);
  const reward = row.reward === null ? '' : row.reward.toFixed(2);
  const marked = row.flags.length > 0 || markCount(row, props.forks) > 0;
  return (
    <div
      className={`tl-row status-${row.status}${row.flags.length || row.error || severalMarks(row, props.forks) ? ' marks-first' : ''}${props.selected ? ' selected' : ''}`}
      data-testid="timeline-row"
      data-step={row.step}
      data-status={row.status}
      data-edited={row.edited ? 'true' : undefined}
      aria-selected={props.selected}
      role="row"
      aria-rowindex={props.rowIndex}
      // Roving focus: only the viewed row is a Tab stop; ↑/↓ move it (see the grid's key handler).
      // The stop is set by the list after the focus has moved (Timeline's layout effect), not here.
      tabIndex={-1}
      style={{ top: props.top }}
      onClick={() => props.onSelect(row.step)}
    >
      <button
        type="button"
        className={`tl-bp${props.breakpoint ? ' on' : ''}`}
        tabIndex={-1}
        title={props.breakpoint ? 'Remove breakpoint (F9)' : 'Pause after this step (F9)'}
        aria-label={`pause after step ${row.step}`}
        onClick={(e) => {
          e.stopPropagation();
          props.onBreakpoint(row.step);
        }}
      />
      <span className="tl-step">{row.step}</span>
      <span
        className={`tl-tool${clipOver(row.tools.join(', '), FITS.tool)}${row.not_run && props.closed ? ' tl-tool-unrun' : ''}`}
        data-testid={row.not_run ? 'row-tool-not-run' : undefined}
        title={row.not_run && props.closed ? NEVER_RAN : undefined}
      >
        {/* One tool the task offers (nearly every row): its name alone, no element around it. */}
        {row.tools.length === 1 && !row.not_offered?.includes(row.tools[0])
          ? row.tools[0]
          : row.tools.map((t, i) => (
              <span key={i}>
                {i > 0 ? ', ' : null}
                {row.not_offered?.includes(t) ? (
                  // The tool the agent asked for, which the task does not offer: named, not left blank.
                  <span
                    className="tl-tool-missing"
                    data-testid="row-tool-not-offered"
                    title={`${t}: not a tool this task offers (the agent asked for it; the call was refused)`}
                  >
                    {t}
                  </span>
                ) : (
                  t
                )}
              </span>
            ))}
      </span>
      <span className="tl-args clip" title={row.summary}>
        {row.summary}
      </span>
      {/* No marks, no clip (see FITS); marks may outgrow their 40 %. */}
      <span className={`tl-marks${marked ? ' clip' : ''}`}>
        {/* A QA flag is what a person looks for first: it leads the marks, its name whole (the
            row's grid gives it the room, see .marks-first). More flags than fit a narrow row are
            counted (+N); the flag list above the timeline names them all. A narrow timeline
            shows the rule's one word instead of its name (CSS, no measuring: the row is the
            hot path), so the arguments keep their room. */}
        {row.flags.map((f, i) => (
          <i
            key={i}
            className={`mark mark-flag sev-${f.severity}${i > 0 ? ' mk-long' : ''}`}
            title={ruleTitle(f.rule, f.message)}
            data-flag={f.rule}
          >
            ⚑ <span className="mk-name">{ruleLabel(f.rule)}</span>
            <span className="mk-word">{ruleWord(f.rule)}</span>
          </i>
        ))}
        {row.flags.length > 1 ? (
          // A narrow timeline names the first flag and counts the others ("+1", named in its
          // tooltip and the flag list above): which flag a row carries is what a person looks for
          // first (journey-cases), so it is not folded into a bare count ("⚑ 2") for the
          // arguments' sake; they keep their first 8 characters beside it.
          <i
            className={`mark mark-flag mk-short sev-${worstSeverity(row.flags.slice(1))}`}
            data-testid="row-more-flags"
            role="img"
            aria-label={countOf(row.flags.length - 1, 'more QA flag')}
            title={row.flags
              .slice(1)
              .map((f) => ruleTitle(f.rule, f.message))
              .join('\n')}
          >
            +{row.flags.length - 1}
          </i>
        ) : null}
        {marksShown([row]).map((k) => (
          <RowMarkView key={k} k={k} real={row.real} row={row} />
        ))}
        {row.drift ? (
          <i className="mark mark-flag sev-warning" data-testid="row-drift" title={row.drift}>
            DRIFT
          </i>
        ) : null}
        {row.error ? (
          // Its code in words (`model failed`), the message whole in the tooltip and the inspector:
          // the whole `code: message` was cut mid-word in its box ("script_e…"), the bare code too
          // ("model_er…"). Beside a flag (which names the failure too) it gives way in a narrow timeline.
          <i
            className={`mark mark-flag sev-error${row.flags.length ? ' mk-long' : ''}`}
            data-testid="row-error"
            title={row.error}
          >
            {errorMarkText(row.error.split(':')[0])}
          </i>
        ) : null}
        {props.forks.map((f) => (
          <i key={f.branch} className="mark mark-fork" title={`branch ${f.branch} forks here`}>
            {forkMarkText(f.branch)}
          </i>
        ))}
      </span>
      <span
        className={`tl-status s-${props.held ? 'held' : (status.tone ?? row.status)}${clipOver(status.word, FITS.status)}`}
        data-testid="row-status"
        title={status.title}
      >
        {status.word}
      </span>
      <span
        className={`tl-dur${clipOver(duration, FITS.dur)}`}
        data-testid="timeline-duration"
        // Not timed: a person gave the result (the tool did not run), or the agent ran it itself.
        title={row.duration_ms === null && duration ? (row.overridden ? NOT_RUN : NOT_TIMED) : undefined}
      >
        {duration}
      </span>
      <span
        className={`tl-rew${clipOver(reward, props.verifier ? FITS.rewVerifier : FITS.rew)}`}
        data-testid="row-reward"
        title={props.verifier ? verifierRewardTitle(reward, props.verifier) : undefined}
      >
        {reward}
        {props.verifier && reward ? ' ' : null}
        {props.verifier ? (
          // The verifier's part beside the step's own: the return folds it into this step.
          <b className="tl-rew-verifier" data-testid="row-verifier-reward">
            {signed(props.verifier.reward)}
          </b>
        ) : null}
      </span>
    </div>
  );
});

/** The steps of the open branch, virtualized; the branch tree and reward chart above them. */
/** Test ids of the marks tests find in a row. */
const MARK_TEST_ID: Partial<Record<RowMarkKey, string>> = {
  edited: 'row-edited',
  shownOther: 'row-real',
  fallback: 'row-real',
  rolledBack: 'row-rolled-back',
};

/**
 * One mark of a row (or of the legend, as the rows show it), from the marks' table: its long
 * form, and its short one where a narrow timeline gives it less room; `real` (what the tool
 * really returned) follows the ≠ marks' tooltip.
 */
function RowMarkView(props: {
  readonly k: RowMarkKey;
  readonly real?: string | null;
  /** The row it marks: a mark with words of its own row says them (the step rolled back to). */
  readonly row?: StepRow;
  readonly inLegend?: boolean;
}) {
  const m = ROW_MARKS[props.k];
  const short = shortMark(props.k);
  return (
    <i
      className={`mark ${m.className}`}
      data-testid={props.inLegend ? undefined : MARK_TEST_ID[props.k]}
      // What a screen reader says for it, in words: a narrow row shows only its glyph (↺, ≠),
      // hidden from it, and a title is not a name. In the legend the words follow the mark.
      role="img"
      aria-label={props.inLegend ? m.mark : `${m.mark}: ${markWords(props.k, props.row ?? {})}`}
      title={
        props.k === 'shownOther' || props.k === 'fallback'
          ? `${m.title}\n${props.real ?? ''}`
          : props.row && props.k === 'rolledBack'
            ? `${m.title}\n${markWords(props.k, props.row)}`
            : m.title
      }
    >
      {short ? (
        <>
          <span className="mk-long">{m.mark}</span>
          <span className="mk-short" aria-hidden="true">
            {short}
          </span>
        </>
      ) : (
        m.mark
      )}
    </i>
  );
}

/**
 * What the marks in the rows mean (INJ, HUM, OVR, EDIT, ROLLBACK/↺, ≠), one line above the
 * rows: only those some row carries, so a trace nobody stepped into shows none.
 */
const MarkLegend = memo(function MarkLegend(props: { readonly rows: readonly StepRow[] }) {
  const shown = useMemo(() => marksShown(props.rows), [props.rows]);
  if (shown.length === 0) return null;
  return (
    <div className="tl-mark-legend muted" data-testid="mark-legend">
      {shown.map((k) => (
        <span key={k} title={ROW_MARKS[k].title}>
          <RowMarkView k={k} inLegend /> {ROW_MARKS[k].words}
        </span>
      ))}
    </div>
  );
});

export function Timeline() {
  const stores = useStores();
  const recorded = useSlice('stepper', (s) => s.rows);
  const held = useSlice('stepper', (s) => s.held);
  const rows = useMemo(() => rowsWithHeld(recorded, held), [recorded, held]);
  // The held step's row says it waits while the card shows it (not while it runs on).
  const heldStage = useSlice('stepper', (s) =>
    s.held && s.state !== 'running' && s.state !== 'ended' ? s.held.stage : null,
  );
  // The header says the open step's state as its row does: running while the episode runs.
  const running = useSlice('stepper', (s) => s.state === 'running');
  const load = useSlice('stepper', (s) => s.load);
  const error = useSlice('stepper', (s) => s.error);
  const branch = useSlice('stepper', (s) => s.branch);
  // The library's summaries, as its own tree shows them (the view's copy is read at the open only).
  const viewBranches = useSlice('stepper', (s) => s.branches);
  const library = useSlice('episodes', (s) => s.allEpisodes);
  const branches = useMemo(() => selectEpisodeBranches(viewBranches, library), [viewBranches, library]);
  const breakpoints = useSlice('stepper', (s) => s.breakpoints);
  const live = useSlice('stepper', (s) => s.live);
  // Step 0 is the setup row, not a step the agent took; rows still arriving count too.
  const decisions = useSlice('stepper', selectDecisionCount);
  const unfinished = useSlice('stepper', selectUnfinishedCount);
  const viewed = useSlice('stepper', selectViewedStep);
  const following = useSlice('stepper', (s) => s.selectedStep === null);
  const flags = useSlice('stepper', (s) => s.flags);
  // The verifier's reward (the branch summary's, selected as values: the selector makes an object).
  const verifierStep = useSlice('stepper', (s) => selectVerifierReward(s)?.step ?? null);
  const verifierValue = useSlice('stepper', (s) => selectVerifierReward(s)?.reward ?? null);
  const verdict = useSlice('stepper', (s) => selectVerifierReward(s)?.verdict ?? null);
  const verifierReward = useMemo<VerifierReward | null>(
    () =>
      verifierStep === null || verifierValue === null || verdict === null
        ? null
        : { step: verifierStep, reward: verifierValue, verdict },
    [verifierStep, verifierValue, verdict],
  );
  const scrollRef = useRef<HTMLDivElement>(null);
  const [filter, setFilter] = useState<RowFilter>(NO_FILTER);
  const shown = useMemo(() => filterRows(rows, filter), [rows, filter]);
  // The # column fits the widest step number of the branch (10000 was cut to "100…" in a
  // 1280-wide window), and no wider: a short episode's tools and arguments keep the room.
  const last = rows.length ? rows[rows.length - 1].step : 0;
  // The reward column widens for the verifier's part beside the last step's (`0.10 +1.00`).
  const stepColumn = {
    '--tl-step-digits': String(Math.max(last, decisions)).length,
    ...(verifierReward ? { '--tl-rew': '11ch' } : {}),
  } as CSSProperties;
  // Rows still arriving (the open brought the last screenful) hold their places above the
  // loaded ones, so the list has its full length and nothing moves as they come. A filter
  // looks at the loaded rows only.
  const before = useSlice('stepper', (s) => s.rowsBefore);
  const firstStep = useSlice('stepper', selectFirstStep);
  const lead = isFilterEmpty(filter) ? before : 0;
  // Set when the keyboard moved the selection: focus follows it once the row is drawn.
  const focusFollows = useRef(false);
  // The most rows drawn at once so far (see the rows' keys below).
  const slots = useRef(1);
  // The list has been measured (its first render draws the rows of an estimated, larger window).
  const measured = useRef(false);

  const hasList = shown.length > 0;
  /** The list index of the viewed step (-1 when it is not shown) and the scrollTop that brings it into `view`. */
  // The viewed step's place among the rows shown (-1: not shown), found once per render.
  const viewedFound = viewed === null ? -1 : indexOfStep(shown, viewed);
  const placement = (view: ScrollView): { index: number; top: number | null } => {
    const index = viewedFound < 0 ? -1 : lead + viewedFound;
    const align = following ? 'end' : 'auto';
    return {
      index,
      top: index < 0 ? null : scrollTopFor(index, lead + shown.length, ROW_HEIGHT, view, align),
    };
  };

  const list = useFixedRows({
    // Off while no list is drawn: its offset is then forgotten, and the next list drawn (another
    // branch, a filter cleared) starts where its viewed step is (`initialOffset`).
    enabled: hasList,
    count: lead + shown.length,
    rowHeight: ROW_HEIGHT,
    scrollRef,
    // The first render draws no row: the window has no height until it is laid out. The layout
    // effect below then measures it (the window's first layout, forced once) and places the
    // viewed step, and the rows there are drawn before the first paint. Opened at offset 0 it
    // drew a window of "loading…" placeholders at the top first, then the rows at the end, all
    // of them new nodes laid out a second time; estimated from the window's height, it drew
    // half again as many real rows as fit, whose first layout cost more than both (traces,
    // issue 33.9).
    initialOffset: () => placement({ offset: 0, height: 0 }).top ?? 0,
    // A far slider move replaces every drawn row, and each costs its render, layout and paint
    // in the move's frame (≈0.7 ms of CPU per row on a loaded 2-core machine, traces of issue
    // 33.9): two beyond each edge, enough for ↑/↓ and a wheel tick to find the next row drawn
    // (five each side were a third of the rows a move drew in a 500 px timeline).
    overscan: 2,
  });

  const { view, tell } = list;

  // The viewed step and its list index the list was last brought to.
  const placed = useRef<{ step: number; index: number } | null>(null);
  // The scrollTop a move asked for, written once the rows it draws are committed (see below).
  const scrollTo = useRef<number | null>(null);
  // The step whose row takes the focus once it is drawn (see the effect below).
  const focusTo = useRef<number | null>(null);
  /** Focuses the row of `focusTo` if it is drawn. */
  const focusRow = useCallback(() => {
    const step = focusTo.current;
    const row =
      step === null
        ? null
        : scrollRef.current?.querySelector<HTMLElement>(`[data-testid="timeline-row"][data-step="${step}"]`);
    if (!row) return;
    focusTo.current = null;
    // The list placed the row itself: a focus that scrolled it again fired a scroll event into
    // the next move.
    row.focus({ preventScroll: true });
  }, []);
  useLayoutEffect(() => {
    const top = scrollTo.current;
    const el = scrollRef.current;
    if (top !== null && el) {
      scrollTo.current = null;
      el.scrollTop = top;
    }
    // In the commit that drew the row, after the write's layout: the focus then finds the
    // layout clean, and its ring is painted in the move's own frame (see the effect below).
    focusRow();
    // Then the roving Tab stop: the viewed row's, and the focused row's until the focus leaves
    // it (onBlur below). Set here, after the focus moved, not rendered: a tabindex written on
    // the row that has the focus makes the browser check at once that it may keep it, a style
    // and layout of the list forced in the middle of the move's commit (a pass of its own; the
    // move's time was the same without it, its work done in the pass left, issue 33.9).
    const inner = el?.firstElementChild;
    if (!inner) return;
    const stop = viewed === null ? null : String(viewed);
    const active = document.activeElement;
    for (let i = 0; i < inner.children.length; i++) {
      const row = inner.children[i];
      if (!(row instanceof HTMLElement) || row.dataset.testid !== 'timeline-row') continue;
      const want = row.dataset.step === stop || row === active ? 0 : -1;
      if (row.tabIndex !== want) row.tabIndex = want;
    }
  });

  // A list just drawn is placed before its first paint, in the commit that drew it: the list
  // has measured its window (the window's first layout, forced once, in useFixedRows' layout
  // effect, which runs before this one), so the offset told here makes its next render (before
  // the paint, too) draw the rows there, and the element's scroll moves nothing laid out. Placed by the effect below, a frame
  // of rows at the wrong offset was laid out, then the right ones a second time (issue 33.9).
  useLayoutEffect(() => {
    const el = scrollRef.current;
    measured.current = hasList && !!el;
    if (!hasList || !el || viewed === null) return;
    const { index, top } = placement(list.view());
    placed.current = index >= 0 ? { step: viewed, index } : null;
    if (top === null) return;
    list.tell(top);
    el.scrollTop = top;
    // Only when a list is drawn: later moves are the effect's below.
  }, [hasList]);

  // Keep the viewed step on screen: while following a live run, and while scrubbing.
  useEffect(() => {
    if (viewed === null || shown.length === 0) return;
    const found = indexOfStep(shown, viewed);
    const index = found < 0 ? -1 : lead + found;
    const el = scrollRef.current;
    // Only when the viewed step or its place in the list changed. A page of earlier rows
    // landing gives new rows but moves nothing (they fill placeholders): bringing the step
    // back into view then yanked a person who had scrolled away right after the open back to
    // the end, once per page, under their pointer (issue 19.10).
    const moved = placed.current?.step !== viewed || placed.current.index !== index;
    // A step the filter hid is brought back into view when it shows again.
    placed.current = index >= 0 ? { step: viewed, index } : null;
    if (moved && index >= 0 && el) {
      // Rows have one fixed height: the offset is arithmetic, from where the list is (our last
      // write until its scroll event arrives, then the element's) and the window's height as
      // the list measured it. Reading the element instead forced a layout per move.
      const top = scrollTopFor(index, lead + shown.length, ROW_HEIGHT, view(), following ? 'end' : 'auto');
      if (top !== null) {
        // The list learns of a scroll from its event, which the browser fires at the next
        // frame: the rows of a far step would be drawn a frame late. Told the offset (not sent
        // a scroll event, which made it read scrollTop back, a forced layout of the window on
        // every slider move), it draws them in this task (issue 19.10).
        // The element scrolled in the same task, so the list drawn and the list scrolled never
        // disagree. Written a frame later (to save a layout), a scroll event of an earlier move
        // or of the focus that followed it, landing in between, cancelled the write: the
        // list then drew the rows where the element still was, the viewed row's
        // neighbours were missing for good ("row 5950 is not drawn", issue 33.9).
        // Written once the rows for `top` are committed (the layout effect below): flushSync
        // inside this effect only queues their render behind the effects, and written here the
        // write laid out the rows being replaced, then the frame laid out the new ones again
        // (a second layout of every row, ~5 ms of a move, issue 33.9). The write's layout is
        // then the move's one layout: the frame after it paints.
        scrollTo.current = top;
        flushSync(() => tell(top));
        // No render came of it (the rows drawn already cover `top`): written at the end of the task.
        queueMicrotask(() => {
          if (scrollTo.current !== top) return;
          scrollTo.current = null;
          el.scrollTop = top;
          focusRow();
        });
      }
    }
    // The focus follows the viewed step after the list's own keys, and also while it is on a
    // row of the list when the step changes otherwise (←/→, the slider): a focus ring left on
    // the row clicked, beside the selected one, misread which step is viewed.
    const focusInList = !!el && el !== document.activeElement && el.contains(document.activeElement);
    if (!focusFollows.current && !(moved && focusInList)) return;
    focusFollows.current = false;
    // Focused once its row is drawn: by the render this move asked for (the layout effect
    // above focuses it in that commit), or already (now). Two frames later, as it was while
    // the virtualizer drew rows a frame late, the focus forced a style and layout of its own
    // and its ring was painted in a frame of its own, inside the next click or move (issue 34).
    focusTo.current = viewed;
    focusRow();
    // Its row is drawn in this task or not at all (a placeholder, a step filtered out): a row
    // drawn later (a person scrolling there) does not take the focus.
    queueMicrotask(() => {
      focusRow();
      focusTo.current = null;
    });
  }, [viewed, shown, lead, following, view, tell, focusRow]);

  // While following, a list at its end stays there when its height changes: the reward chart,
  // drawn above it once every row has arrived, pushed the last rows (the viewed one among
  // them) below the fold of a 1024×700 window.
  // Any list whose viewed row was whole on screen keeps it whole when the window changes: a
  // window made larger gave the Replay pane and the terminal more room than the timeline, whose
  // viewed last row went below its fold (ui-layout, at 1920×1080 after 1024×700).
  const followingNow = useRef(following);
  followingNow.current = following;
  const viewedAt = useRef({ index: -1, count: 0 });
  viewedAt.current = { index: viewedFound < 0 ? -1 : lead + viewedFound, count: lead + shown.length };
  useEffect(() => {
    const el = scrollRef.current;
    if (!hasList || !el || typeof ResizeObserver === 'undefined') return;
    let height = el.clientHeight;
    let offset = el.scrollTop;
    // A scroll the resize itself made (the browser clamping scrollTop to a height the list had
    // between two layouts of one frame, before the observer is told) is not where the person
    // was: in CI the list at its end was clamped 43 px short of the end that way.
    // A clamp puts the list at the end of some height it had, and no list is taller than the
    // window: a scroll that leaves it farther from its end than that is the person's, kept even
    // in a frame whose layout changed its height (the rows and the reward chart landing as a
    // person scrolled to the top: ignored, the list snapped back to its end; CI, ui-long-trace).
    const onScroll = () => {
      const fromEnd = el.scrollHeight - el.clientHeight - el.scrollTop;
      if (el.clientHeight === height || fromEnd > window.innerHeight) offset = el.scrollTop;
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    const observer = new ResizeObserver(() => {
      const was = { offset, height };
      height = el.clientHeight;
      // Only a list that was at its end: a person who scrolled away keeps their place.
      if (followingNow.current && was.offset + was.height >= el.scrollHeight - 1) {
        el.scrollTop = el.scrollHeight;
      } else {
        const { index, count } = viewedAt.current;
        const top = index * ROW_HEIGHT;
        const wasWhole = index >= 0 && top >= was.offset && top + ROW_HEIGHT <= was.offset + was.height;
        const to = wasWhole
          ? scrollTopFor(index, count, ROW_HEIGHT, { offset: el.scrollTop, height }, 'auto')
          : null;
        if (to !== null) el.scrollTop = to;
      }
      offset = el.scrollTop;
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      el.removeEventListener('scroll', onScroll);
    };
  }, [hasList]);

  // The UI benchmark's split of the first render: rows committed to the DOM (before their paint).
  const drawn = shown.length > 0;
  useEffect(() => {
    if (drawn) performance.mark('stepbox:rows-drawn');
  }, [drawn]);

  const forksAt = useMemo(() => {
    const at = new Map<number, BranchSummary[]>();
    for (const b of branches)
      if (b.parent_branch === branch && b.fork_step !== null)
        at.set(b.fork_step, [...(at.get(b.fork_step) ?? []), b]);
    return at;
  }, [branches, branch]);
  const onBreakpoint = useCallback(
    (s: number) => void stores.stepper.getState().toggleBreakpoint(s),
    [stores],
  );

  const stepper = stores.stepper.getState();
  const goTo = useCallback(
    (step: number) => {
      // A step the filter hides is shown by clearing the filter: the person asked for that step.
      if (indexOfStep(filterRows(stores.stepper.getState().rows, filter), step) < 0) setFilter(NO_FILTER);
      focusFollows.current = true;
      // The step already viewed, scrolled away from (a QA flag clicked for it after the list
      // was scrolled): nothing changes in the store, so the row is brought back into view here.
      const el = scrollRef.current;
      const found = indexOfStep(shown, step);
      if (selectViewedStep(stores.stepper.getState()) === step && el && found >= 0) {
        const top = scrollTopFor(lead + found, lead + shown.length, ROW_HEIGHT, view(), 'auto');
        if (top !== null) {
          flushSync(() => tell(top));
          el.scrollTop = top;
        }
      }
      stores.stepper.getState().select(step);
    },
    [stores, filter, shown, lead, view, tell],
  );
  const onGridKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (shown.length === 0) return;
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 220) / ROW_HEIGHT) - 1);
    const at = viewed === null ? -1 : indexOfStep(shown, viewed);
    let next: number;
    switch (e.key) {
      case 'ArrowUp':
        next = at < 0 ? shown.length - 1 : at - 1;
        break;
      case 'ArrowDown':
        next = at < 0 ? 0 : at + 1;
        break;
      case 'PageUp':
        next = at - page;
        break;
      case 'PageDown':
        next = at + page;
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = shown.length - 1;
        break;
      default:
        return;
    }
    e.preventDefault();
    focusFollows.current = true;
    stepper.select(shown[Math.max(0, Math.min(shown.length - 1, next))].step);
  };
  const viewedShown = viewed !== null && indexOfStep(shown, viewed) >= 0;
  const drawnCount = Math.max(0, list.range.last - list.range.first + 1);
  // Rows are keyed by their slot on screen (index modulo the most rows ever drawn at once:
  // unique among the contiguous rows drawn), so a far slider move gives the drawn rows new
  // steps to show, in place, rather than removing every row and creating as many new ones
  // (their nodes, their styles: most of a move's work, issue 19.10). A key never depends on
  // the selection: ↑/↓ must not remove the focused row (the next key press would go nowhere),
  // and a focused row scrolled away stays in the grid (showing another step) so the keys still
  // act on the viewed step, where the focus follows.
  // Counted once the list is measured: rows drawn for a window estimated taller than the list
  // would leave slots that a window's worth of rows never fills, and a far move would then take
  // rows out and put new ones in. (An unmeasured window has no height and draws no row; such
  // rows are keyed by their index modulo their count, and the measured render keeps the nodes
  // of those it keeps, issue 33.9.)
  // (Never counted down: a smaller count gives the rows new keys, and a node, the focused one
  // among them, would show another step under the person's pointer or focus.)
  if (measured.current) slots.current = Math.max(slots.current, drawnCount);
  const slotCount = measured.current ? slots.current : Math.max(1, drawnCount);
  // Rows beyond the window fill the slots it leaves empty (fillSlots), a few at most: a window
  // of whole rows, where a far move puts the list, draws one row fewer than a window between
  // rows, and the window opens ~2 rows taller than it is once the reward chart is drawn above
  // it; each empty slot's row was removed on one move and made again on the next (the focused
  // row among them: its removal dropped the focus to the page until the move focused the viewed
  // row, and forced a style and layout pass of its own, issue 33.9). Not
  // every slot: a window made much smaller would draw the tallest window's rows on every move.
  const { first, last: lastDrawn } = measured.current
    ? fillSlots(list.range, Math.min(slotCount, drawnCount + SLOTS_FILLED), lead + shown.length)
    : list.range;
  // Drawn in the order of their slots, not of their steps: the rows are placed by their
  // `top` (not a transform: a transform each was a paint chunk each, issue 33.9), so the order of the nodes is not what a person sees, and a far move keeps every
  // node where it is. In step order, a far move rotated the keys: React moved most rows
  // (28 of 31 per move), and each node moved was taken out of the layout and put back, its
  // style and layout done anew (issue 19.10). `aria-rowindex` gives assistive technology each
  // row's place in the list.
  const slotOf = (index: number) => index % slotCount;
  // The drawn rows are contiguous and at most `slotCount`: their slots wrap to 0 at most once,
  // at `wrap`, so slot order is from `wrap` to the last, then from the first to `wrap`.
  const wrap = first + ((slotCount - slotOf(first)) % slotCount);
  const inSlotOrder: number[] = [];
  for (let i = wrap; i <= lastDrawn; i++) inSlotOrder.push(i);
  for (let i = first; i < Math.min(wrap, lastDrawn + 1); i++) inSlotOrder.push(i);
  let body;
  if (load === 'empty') body = <Welcome />;
  else if (load === 'loading') body = <PanelState kind="loading">Loading the trace…</PanelState>;
  else if (load === 'error') body = <PanelState kind="error">Could not open the branch: {error}</PanelState>;
  else if (rows.length === 0)
    body = (
      <PanelState kind="empty">Step 0: the sandbox is set up. Press F10 to take the first step.</PanelState>
    );
  else if (shown.length === 0) body = <PanelState kind="empty">No step matches the filter.</PanelState>;
  else
    body = (
      // The window's height rounded down to whole rows (styles.css .tl-rows).
      <div className="tl-rows">
        <div
          className="tl-scroll"
          ref={scrollRef}
          style={stepColumn}
          data-testid="timeline-scroll"
          // A Tab stop of its own only while the viewed row is filtered out or not drawn.
          tabIndex={viewedShown ? -1 : 0}
          onKeyDown={onGridKey}
          // A row the focus leaves for outside the list gives up the Tab stop it kept while focused
          // (the effect above sets the stops as the focus moves within it).
          onBlur={(e) => {
            if (e.relatedTarget instanceof Node && e.currentTarget.contains(e.relatedTarget)) return;
            const row = e.target;
            if (row.dataset.testid === 'timeline-row' && row.dataset.step !== String(viewed))
              row.tabIndex = -1;
          }}
          // Rows still to arrive above the loaded ones (tests wait for 0).
          data-arriving={before}
          aria-label="steps: ↑/↓ to move, F9 toggles a breakpoint"
        >
          <div
            className="tl-inner"
            style={{ height: list.totalHeight }}
            role="grid"
            aria-rowcount={lead + shown.length}
          >
            {inSlotOrder.map((index) => {
              if (index < lead)
                return (
                  <div
                    key={`arriving-${index}`}
                    className="tl-row tl-arriving"
                    data-testid="timeline-row-arriving"
                    role="row"
                    aria-rowindex={index + 1}
                    style={{ top: index * ROW_HEIGHT }}
                  >
                    <span className="muted">loading…</span>
                  </div>
                );
              const row = shown[index - lead];
              return (
                <Row
                  key={slotOf(index)}
                  rowIndex={index + 1}
                  row={row}
                  closed={!live}
                  top={index * ROW_HEIGHT}
                  selected={row.step === viewed}
                  held={heldStage !== null && row.step === held?.step ? heldStage : null}
                  breakpoint={hasStepBreakpoint(breakpoints, row.step)}
                  forks={forksAt.get(row.step) ?? NO_FORKS}
                  onSelect={stepper.select}
                  onBreakpoint={onBreakpoint}
                  verifier={verifierReward?.step === row.step ? verifierReward : null}
                />
              );
            })}
          </div>
        </div>
      </div>
    );

  return (
    <Panel
      testId="timeline"
      title="Timeline"
      className="timeline"
      actions={
        <>
          <span className="muted" data-testid="timeline-count">
            {rows.length === 0 ? '' : stepsText(decisions - unfinished, unfinished, live, running)}
          </span>
          {/* Here, not in the stepper bar: the bar keeps its room for the branch's id and state. */}
          <TeachingButtons />
        </>
      }
    >
      <WhySlot id={SAVE_CASE_WHY_ID} />
      {rows.length > 0 ? (
        <TimelineTools
          rows={rows}
          filter={filter}
          shown={shown}
          firstStep={firstStep}
          arriving={before}
          onFilter={setFilter}
          onGoTo={goTo}
        />
      ) : null}
      <FlagList
        flags={flags}
        onJump={goTo}
        rows={scrollRef}
        rowsShown={hasList}
        keep={ROWS_KEPT * ROW_HEIGHT}
      />
      {/* Where the branch came from (a fork, a reopen, a rollback): its parent, and it under it. */}
      {branches.length > 1 ? <BranchTree branches={branches} current={branch} /> : null}
      {/* Once every row has arrived: a chart of the loaded screenful would be redrawn with each
          page of earlier rows (ten of them on a 10,000-step trace), behind the first paint. */}
      {rows.length > 0 && before === 0 ? (
        <RewardChart rows={rows} viewed={viewed} onSelect={stepper.select} verifier={verifierReward} />
      ) : null}
      <MarkLegend rows={rows} />
      {/* No columns over the welcome (an empty "# TOOL ARGUMENTS" header sat above it), nor over an open that failed. */}
      <div className="tl-head" role="row" style={stepColumn} hidden={load === 'empty' || load === 'error'}>
        <span className="tl-bp-h" />
        <span className="tl-step">#</span>
        <span className="tl-tool">tool</span>
        <span className="tl-args">arguments</span>
        <span className="tl-marks">marks</span>
        <span className="tl-status">status</span>
        <span className="tl-dur">time</span>
        <span className="tl-rew">reward</span>
      </div>
      {body}
    </Panel>
  );
}
