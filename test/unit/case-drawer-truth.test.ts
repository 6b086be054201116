import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { caseNames, loadCase } from '../../electron/engine/cases/case-library.js';
import { MarkdownLite } from '../../renderer/src/components/markdown-lite';
import {
  caseRunOutcome,
  selectCaseShown,
  walkthroughText,
  type CaseRun,
} from '../../renderer/src/stores/episodes/episodes-store';
import { INSPECTOR_TABS } from '../../renderer/src/stores/inspector/inspector-store';
import type { StepperState } from '../../renderer/src/stores/stepper/stepper-store';
import { REPLAY_ACTIONS } from '../../renderer/src/stores/stepper/why-not-now';
import { branchSummary, stepRow } from '../support/renderer-fixtures';

/** Issue 19 walk: the case drawer and the case texts say what the window shows and offers. */
describe('the case drawer says what is on screen', () => {
  const runs: CaseRun[] = [
    { variant: 'broken', branch: 'b-broken', summary: null },
    { variant: 'fixed', branch: 'b-fixed', summary: null },
  ];
  const of = (branch: string, episode: string, task = 'network-assumed') =>
    branchSummary({ branch, episode, task });

  it('names the run the stepper shows, not the last started', () => {
    // The fixed version was started last, then the person clicked the broken run: broken is on screen.
    expect(selectCaseShown(runs, 'b-broken', [of('b-broken', 'ep-b')])).toEqual({
      kind: 'run',
      variant: 'broken',
    });
    expect(selectCaseShown(runs, 'b-fixed', [of('b-fixed', 'ep-f')])).toEqual({
      kind: 'run',
      variant: 'fixed',
    });
    // A candidate or fork of the broken run is the broken run's, not another episode.
    expect(
      selectCaseShown(runs, 'b-cand', [
        of('b-broken', 'ep-b'),
        { ...of('b-cand', 'ep-b'), parent_branch: 'b-broken' },
      ]),
    ).toEqual({ kind: 'branch', variant: 'broken' });
    // hello-python on screen: the drawer says so instead of claiming a state of the case.
    expect(selectCaseShown(runs, 'b-hello', [of('b-hello', 'ep-h', 'hello-python')])).toEqual({
      kind: 'other',
      task: 'hello-python',
    });
    // The stepper still loading a fork of the fixed run (no branches yet): the library knows it.
    const fork = { ...of('b-fork', 'ep-f'), parent_branch: 'b-fixed' };
    const library = [
      { episode: 'ep-f', task: 'network-assumed', created: 1, branches: [of('b-fixed', 'ep-f'), fork] },
    ];
    expect(selectCaseShown(runs, 'b-fork', [], library)).toEqual({ kind: 'branch', variant: 'fixed' });
    expect(selectCaseShown(runs, null, [])).toEqual({ kind: 'none' });
  });

  it('a run held before step 1 or open at its setup is started, never "ready, not started"', () => {
    const live = branchSummary({ steps: 0, live: true });
    // The way on is its hint (the line's hover): with it, the text took both of the run line's
    // lines at 1280×800.
    expect(caseRunOutcome(live, { running: false, paused: true, held: 1 })).toEqual({
      text: 'paused before step 1 runs',
      flags: null,
      hint: 'press ▶ Run it to go on',
    });
    // Open and waiting at its setup: the bar says "paused at step 0", and so does the case.
    expect(caseRunOutcome(live, { running: false, paused: true, held: null })).toEqual({
      text: 'paused at step 0',
      flags: null,
      hint: 'press ▶ Run it to go on',
    });
    // Not the open run: nothing on screen says otherwise.
    expect(caseRunOutcome(live, { running: false, paused: false, held: null }).text).toBe(
      'ready, not started: press ▶ Run it',
    );
    expect(caseRunOutcome(live, { running: true, paused: false, held: null }).text).toBe('running…');
    const ended = branchSummary({
      steps: 3,
      live: false,
      status: 'failed',
      end_reason: 'final_answer',
      flags: 2,
    });
    expect(caseRunOutcome(ended, { running: false, paused: false, held: null })).toEqual({
      text: 'failed — the agent gave its final answer',
      flags: 2,
    });
  });

  it('an open run the bar says ended reads ended while the library still lists it live ("live, at step 3" beside "succeeded")', () => {
    const lagging = branchSummary({ steps: 3, live: true, status: null });
    const end = { status: 'succeeded', end_reason: 'final_answer' };
    expect(caseRunOutcome(lagging, { running: false, paused: false, held: null, ended: end })).toEqual({
      text: 'succeeded — the agent gave its final answer',
      flags: null,
    });
    // Once the library has its end, its summary (with its QA flags) says it.
    const listed = branchSummary({
      steps: 4,
      live: false,
      status: 'succeeded',
      end_reason: 'final_answer',
      flags: 0,
    });
    expect(caseRunOutcome(listed, { running: false, paused: false, held: null, ended: end }).flags).toBe(0);
  });
});

describe('the case walkthroughs render and name what the window offers', () => {
  const readmes = caseNames().map((name) => [name, walkthroughText(loadCase(name).readme)] as const);

  it('emphasis renders as emphasis, a star beside a space stays a star, code keeps its stars', () => {
    const html = renderToStaticMarkup(
      createElement(MarkdownLite, { text: 'the *same* sandbox; a * b; `test_*.py` and `*_test.py`' }),
    );
    expect(html).toContain(
      'the <em>same</em> sandbox; a * b; <code>test_*.py</code> and <code>*_test.py</code>',
    );
    for (const [name, text] of readmes) {
      const shown = renderToStaticMarkup(createElement(MarkdownLite, { text })).replace(
        /<code>[^]*?<\/code>/g,
        '',
      );
      // No literal mark left: `*word*`, `**word**` or a stray backtick outside code.
      expect({ name, marks: shown.match(/\*\S[^*<]*\*|`/g) ?? [] }).toEqual({ name, marks: [] });
    }
  });

  it('every "Inspector → X tab" is a tab the inspector has, by the name it shows', () => {
    const tabs = new Set(INSPECTOR_TABS.map(([, name]) => name));
    for (const [name, text] of readmes)
      for (const m of text.matchAll(/Inspector → ([^*\n]+?) tab/g))
        expect({ name, tab: m[1], known: tabs.has(m[1]) }).toEqual({ name, tab: m[1], known: true });
  });

  it('every Replay action a walkthrough names in bold exists and acts on the ended case run it shows', () => {
    // What the window shows beside the walkthrough once the run ended: a recorded branch, a
    // completed step selected (every step of a case run has its snapshot).
    const ended = (selectedStep: number) =>
      ({
        branch: 'b-case',
        live: false,
        seenLive: true,
        state: 'ended',
        rows: [0, 1, 2, 3].map((k) => stepRow(k, { snapshot: true })),
        rowsBefore: 0,
        selectedStep,
        held: null,
        view: null,
      }) as unknown as StepperState;
    const actions = Object.values(REPLAY_ACTIONS);
    let named = 0;
    for (const [name, text] of readmes)
      for (const m of text.matchAll(/\*\*([^*]+)\*\*/g)) {
        const bold = m[1].replace(/\s+/g, ' ');
        // A bold "… here" or "… at step K" is a Replay button by its wording: it must be one,
        // by its label at that step (the step the walkthrough selects).
        const at = / at step (\d+)$/.exec(bold);
        if (!/ here$/i.test(bold) && !at) continue;
        named += 1;
        const step = at ? Number(at[1]) : 1;
        const action = actions.find((a) => a.label(step) === bold);
        expect({ name, bold, exists: action !== undefined }).toEqual({ name, bold, exists: true });
        expect({ name, bold, whyNot: action?.whyNot(ended(step)) }).toEqual({ name, bold, whyNot: null });
      }
    // The destructive case names its way back: the check above read something.
    expect(named).toBeGreaterThan(0);
  });
});
