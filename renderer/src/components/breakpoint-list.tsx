import { useEffect, useMemo, useRef, useState } from 'react';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import {
  BREAKPOINT_KINDS,
  breakpointGroup,
  describeBreakpoint,
  sameBreakpoint,
} from '../../../shared/breakpoint-kinds';
import type { Breakpoint } from '../../../shared/breakpoints';
import { useSlice, useStores } from '../stores/use-stores';
import { revealWhole } from '../layout/reveal-whole';

/**
 * The breakpoints of the open branch, each removable, and a form for every condition the
 * engine can pause on (after a step, a tool, a failure, a timeout, a null value, …).
 * They act while the episode runs with Continue (F5); F9 toggles one on the viewed step.
 */
export function BreakpointList() {
  const stores = useStores();
  const breakpoints = useSlice('stepper', (s) => s.breakpoints);
  const rows = useSlice('stepper', (s) => s.rows);
  const taskTools = useSlice('stepper', (s) => s.view?.tools);
  const branch = useSlice('stepper', (s) => s.branch);
  const live = useSlice('stepper', (s) => s.live);
  // Folded while empty (small windows need the room); it opens when a breakpoint is added, by F9 too.
  const [open, setOpen] = useState(breakpoints.length > 0);
  const count = useRef(breakpoints.length);
  useEffect(() => {
    if (breakpoints.length > count.current) setOpen(true);
    count.current = breakpoints.length;
  }, [breakpoints.length]);
  const [kind, setKind] = useState<Breakpoint['kind']>('step');
  const [value, setValue] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const info = BREAKPOINT_KINDS.find((k) => k.kind === kind);
  // The task's tools as suggestions (or, for an older view without them, those used so far).
  // Only without the task's list: each page of earlier rows arriving would otherwise walk them all.
  const used = useMemo(
    () => (taskTools ? [] : [...new Set(rows.flatMap((r) => r.tools))].sort()),
    [rows, taskTools],
  );
  const tools = taskTools ?? used;
  const stepper = stores.stepper.getState();

  const add = async () => {
    // The form's check reads the breakpoint schema: loaded when a person adds one, not before
    // the window's first render (issue 19.10).
    const { breakpointFromForm } = await import('../model/breakpoint-form');
    const built = breakpointFromForm(kind, value, taskTools);
    if (!built.ok) {
      setMessage(built.message);
      return;
    }
    setMessage(null);
    setValue('');
    // The list as it is now (the form's check was awaited).
    const current = stores.stepper.getState().breakpoints;
    if (current.some((b) => sameBreakpoint(b, built.breakpoint))) {
      setMessage(`Already set: pause ${describeBreakpoint(built.breakpoint)}.`);
      return;
    }
    void stepper.setBreakpoints([...current, built.breakpoint]);
  };

  return (
    <section className="breakpoints" data-testid="breakpoints" aria-label="Breakpoints">
      <header className="panel-head">
        <h2>
          <button
            type="button"
            className="disclosure"
            aria-expanded={open}
            onClick={() => setOpen(!open)}
            data-testid="breakpoints-toggle"
          >
            {open ? '▾' : '▸'} Breakpoints ({breakpoints.length})
          </button>
        </h2>
      </header>
      {open ? (
        <div className="panel-body">
          {breakpoints.length === 0 ? (
            <div className="muted">None. Add one below, or press F9 on a timeline row.</div>
          ) : (
            <ul className="bp-list">
              {breakpoints.map((bp) => {
                const text = describeBreakpoint(bp);
                return (
                  <li
                    key={text}
                    data-testid="breakpoint-item"
                    data-kind={bp.kind}
                    // Its ✕ tabbed to, the whole row comes into view: focus scrolled only the
                    // button in, and the last row (three lines, the QA one) stayed cut at the
                    // window's bottom edge at 1024×700, its ✕ whole beside it.
                    onFocus={(e) => revealWhole(e.currentTarget)}
                  >
                    <span className="bp-dot" aria-hidden="true" />
                    <span>Pause {text}</span>
                    <button
                      type="button"
                      aria-label={`remove breakpoint: ${text}`}
                      onClick={() => void stepper.setBreakpoints(breakpoints.filter((b) => b !== bp))}
                    >
                      ✕
                    </button>
                  </li>
                );
              })}
            </ul>
          )}
          <form
            className="bp-form"
            onSubmit={(e) => {
              e.preventDefault();
              void add();
            }}
          >
            <label>
              Pause{' '}
              <select
                value={kind}
                data-testid="breakpoint-kind"
                onChange={(e) => {
                  setKind(e.target.value as Breakpoint['kind']);
                  setMessage(null);
                }}
              >
                {BREAKPOINT_KINDS.filter((k) => breakpointGroup(k.kind) === null).map((k) => (
                  <option key={k.kind} value={k.kind}>
                    {k.label}
                  </option>
                ))}
                <optgroup label={breakpointGroup('request_match') ?? ''}>
                  {BREAKPOINT_KINDS.filter((k) => breakpointGroup(k.kind) !== null).map((k) => (
                    <option key={k.kind} value={k.kind}>
                      {k.label}
                    </option>
                  ))}
                </optgroup>
              </select>
            </label>
            {info?.value ? (
              <input
                type={info.value.numeric ? 'number' : 'text'}
                aria-label={info.value.label}
                placeholder={info.value.label}
                list={info.value.field === 'name' ? 'bp-tools' : undefined}
                value={value}
                data-testid="breakpoint-value"
                onChange={(e) => {
                  setValue(e.target.value);
                  setMessage(null);
                }}
              />
            ) : null}
            <datalist id="bp-tools">
              {tools.map((t) => (
                <option key={t} value={t} />
              ))}
            </datalist>
            <button
              type="submit"
              data-testid="breakpoint-add"
              {...whyNot(
                !branch && 'Open an episode first: a breakpoint belongs to the episode it pauses.',
                undefined,
                'breakpoint-add-why',
              )}
            >
              Add
            </button>
          </form>
          <WhySlot id="breakpoint-add-why" />
          {message ? (
            <div className="state state-error" role="alert" data-testid="breakpoint-message">
              {message}
            </div>
          ) : null}
          {branch && !live ? (
            <div className="muted">This branch is recorded: breakpoints pause a live episode only.</div>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
