import { useLayoutEffect, useRef, useState } from 'react';
import type { TaskLimits } from '../../../shared/contract/models';
import { useSlice } from '../stores/use-stores';
import { pathForPeople } from '../../../shared/start-paths';
import { oneLine } from '../../../shared/one-line';
import { countOf } from '../../../shared/count-of';
import { WorldWarnings } from './world-warnings';

/** The limits in one line: `at most 30 steps · episode 600 s · a step 60 s · tools 30 s, execute_shell 60 s · network none`. */
export function limitsText(l: TaskLimits): string {
  const { default: tools, ...perTool } = l.tools_s;
  const toolParts = [
    ...(tools === undefined ? [] : [`${tools} s`]),
    ...Object.entries(perTool).map(([name, s]) => `${name} ${s} s`),
  ];
  return [
    `at most ${l.max_steps} step${l.max_steps === 1 ? '' : 's'}`,
    `episode ${l.episode_s} s`,
    `a step ${l.step_hard_s} s`,
    ...(toolParts.length ? [`tools ${toolParts.join(', ')}`] : []),
    `network ${l.network}`,
  ].join(' · ');
}

/**
 * What the open episode's agent was asked: the task's name, its goal (a Harbor task's
 * instruction.md) and its limits, shown at step 0, where the inspector has no call. The goal
 * is a task file's text, untrusted: React puts it in as text (never HTML, its Markdown
 * unrendered), with its line breaks; a long one folds to a few lines with "more".
 */
export function TaskView() {
  const name = useSlice('stepper', (s) => s.view?.summary.task ?? '');
  // A file's last newline is no line of its own.
  const goal = useSlice('stepper', (s) => (s.view?.goal ?? '').trimEnd());
  const source = useSlice('stepper', (s) => s.view?.task_path ?? null);
  const image = useSlice('stepper', (s) => s.view?.image ?? '');
  const limits = useSlice('stepper', (s) => s.view?.limits ?? null);
  const check = useSlice('stepper', (s) => s.view?.check);
  const warnings = useSlice('stepper', (s) => s.view?.world_warnings);
  const [open, setOpen] = useState(false);
  // Whether the folded goal hides lines (measured: wrapping decides, not the count of newlines).
  const [cut, setCut] = useState(false);
  const goalRef = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = goalRef.current;
    if (!el) return;
    const measure = () => setCut(el.scrollHeight > el.clientHeight + 1);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [goal, open]);
  return (
    <div className="task-view" data-testid="task-view">
      <div className="task-title">
        <span className="muted">task</span> <b data-testid="task-name">{name}</b>
      </div>
      <div
        className="muted mono task-source"
        title={source ? `the task's file, named from its folder (${source})` : undefined}
      >
        <span>{image}</span>
        {/* A long path loses its start, not the folder that names the task. From the task's
          folder: the host's layout above it (/work/…/resources/cases/) showed in every screenshot. */}
        {source ? (
          <span className="task-path" data-testid="task-path">
            <bdi>{pathForPeople(source)}</bdi>
          </span>
        ) : null}
      </div>
      <h4>what the agent was told</h4>
      {/* The box pads, the text inside it folds: padding around a folded text showed a strip of its next line. */}
      <div className="task-goal-box">
        <div
          ref={goalRef}
          className={`task-goal${open ? ' open' : ''}`}
          data-testid="task-goal"
          tabIndex={cut || open ? 0 : undefined}
        >
          {goal || <span className="muted">(no goal recorded)</span>}
        </div>
      </div>
      {cut || open ? (
        <button
          type="button"
          className="task-more"
          data-testid="task-more"
          aria-expanded={open}
          onClick={() => setOpen(!open)}
        >
          {open ? 'less' : 'more'}
        </button>
      ) : null}
      {/* What decides the outcome, beside what the agent was told (a bare folder's Check, typed
        on its card, was said nowhere once the episode started). Absent: a trace older than it. */}
      {check !== undefined ? (
        <p className="task-check" data-testid="task-check">
          <span className="muted">check</span>{' '}
          {check === null ? (
            'none: nothing verifies the work; the agent’s final answer ends the episode'
          ) : (
            <>
              <code>{oneLine(check.command, 200)}</code>
              {check.files.length
                ? `, with ${countOf(check.files.length, 'file')} only it sees in ${check.files_dir} (${oneLine(check.files.join(', '), 120)})`
                : ''}
            </>
          )}
        </p>
      ) : null}
      {limits ? (
        <p className="task-limits" data-testid="task-limits">
          <span className="muted">limits</span> {limitsText(limits)}
        </p>
      ) : null}
      {/* What of the world was left out when it started (the header's world_warnings). */}
      {warnings?.length ? (
        <>
          <h4>left out of its world</h4>
          <WorldWarnings warnings={warnings} testId="task-warnings" />
        </>
      ) : null}
    </div>
  );
}
