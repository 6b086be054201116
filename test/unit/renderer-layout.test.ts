import { describe, expect, it } from 'vitest';
import { breakpointFromForm } from '../../renderer/src/model/breakpoint-form';
import { DEFAULT_PANES, fitPanes, loadPanes, MIN, savePanes } from '../../renderer/src/layout/pane-sizes';
import { flagRules } from '../../renderer/src/model/flag-rules';
import { filterCountText, filterRows, indexOfStep, NO_FILTER } from '../../renderer/src/model/row-filter';
import { selectDecisionCount, type StepperState } from '../../renderer/src/stores/stepper/stepper-store';
import type { StepRow } from '../../shared/contract/models';

const row = (step: number, over: Partial<StepRow> = {}): StepRow => ({
  step,
  tools: ['execute_shell'],
  summary: `echo ${step}`,
  status: 'ok',
  duration_ms: 1,
  injected: false,
  human: false,
  overridden: false,
  reward: null,
  rewards: {},
  flags: [],
  snapshot: true,
  ...over,
});

describe('pane sizes', () => {
  it('keep the timeline at least its minimum from 1024×700 to 4K, and the side columns within limits', () => {
    for (const [w, h] of [
      [1024, 700],
      [1280, 800],
      [1920, 1080],
      [3840, 2160],
    ]) {
      for (const wanted of [DEFAULT_PANES, { ...DEFAULT_PANES, left: 5000, right: 5000, bottom: 5000 }]) {
        const s = fitPanes(wanted, w, h);
        expect(w - s.left - s.right - 10, `${w}×${h} centre`).toBeGreaterThanOrEqual(MIN.centre - 1);
        expect(s.left).toBeGreaterThanOrEqual(MIN.left);
        expect(s.right).toBeGreaterThanOrEqual(MIN.right);
        expect(h - 37 - s.bottom, `${w}×${h} timeline height`).toBeGreaterThanOrEqual(MIN.top);
      }
    }
    // A big window keeps what was asked for.
    expect(fitPanes(DEFAULT_PANES, 3840, 2160)).toEqual(DEFAULT_PANES);
  });

  it('leave the library more than half the left column when a case walkthrough is open (40% in a short window)', () => {
    for (const [w, h, share] of [
      [1024, 700, 0.6],
      [1280, 800, 0.42],
      [1920, 1080, 0.42],
    ]) {
      const body = h - 37;
      for (const wanted of [DEFAULT_PANES, { ...DEFAULT_PANES, walkthrough: 5000 }]) {
        const s = fitPanes(wanted, w, h);
        expect(s.walkthrough, `${w}×${h} walkthrough`).toBeLessThanOrEqual(Math.round(body * share));
        expect(body - s.walkthrough, `${w}×${h} library`).toBeGreaterThan(body * (1 - share) - 1);
      }
    }
    // At 1280×800 the library had ~330 px beside the walkthrough's 380; now ~410.
    expect(763 - fitPanes(DEFAULT_PANES, 1280, 800).walkthrough).toBeGreaterThanOrEqual(440);
    // At 1024×700 the drawer's own rows (~200 px) and 160 px of its text: 42% (278) left two lines.
    expect(fitPanes(DEFAULT_PANES, 1024, 700).walkthrough).toBeGreaterThanOrEqual(360);
  });

  it('give the terminal its room at 1024×700: the lower centre pane takes what the timeline leaves (issue 33.11)', () => {
    const s = fitPanes(DEFAULT_PANES, 1024, 700);
    // Replay's four rows (~145 px) and a terminal of 180 px under its header.
    expect(s.bottom).toBeGreaterThanOrEqual(145 + 25 + 180);
    expect(700 - 37 - s.bottom).toBeGreaterThanOrEqual(MIN.top);
  });

  it("give Inject and the Sandbox their room at 1024×700: a manual agent's form whole beside the Sandbox's lines", () => {
    const s = fitPanes(DEFAULT_PANES, 1024, 700);
    // Inject's decision form (~215 px under its header) and the Sandbox's five lines (~130 px).
    expect(s.rightBottom).toBeGreaterThanOrEqual(345);
    expect(700 - 37 - s.rightBottom, 'the inspector').toBeGreaterThanOrEqual(MIN.top);
    // A size the person dragged to is kept.
    expect(fitPanes({ ...DEFAULT_PANES, rightBottom: 200 }, 1024, 700).rightBottom).toBe(200);
  });

  it('are remembered, and a corrupt or partial entry falls back to the defaults', () => {
    const store = new Map<string, string>();
    const storage = {
      getItem: (k: string) => store.get(k) ?? null,
      setItem: (k: string, v: string) => void store.set(k, v),
    };
    savePanes({ ...DEFAULT_PANES, left: 333 }, storage);
    expect(loadPanes(storage).left).toBe(333);
    store.set('stepbox.panes.v1', '{not json');
    expect(loadPanes(storage)).toEqual(DEFAULT_PANES);
    store.set('stepbox.panes.v1', JSON.stringify({ left: 'wide', right: 400 }));
    expect(loadPanes(storage)).toEqual({ ...DEFAULT_PANES, right: 400 });
    expect(loadPanes(null)).toEqual(DEFAULT_PANES);
  });
});

describe('timeline filter', () => {
  const rows = [
    row(1),
    row(2, { status: 'nonzero_exit', summary: 'python3 app.py' }),
    row(3, {
      tools: ['read_file'],
      summary: 'config.ini',
      flags: [{ rule: 'loop', step: 3, message: 'same call', severity: 'warning' }],
    }),
    row(4, { status: 'tool_error' }),
    row(5, { status: 'parse_error', tools: [] }),
  ];
  it('keeps errors, flagged steps, one tool, or text in tools, arguments and flags', () => {
    expect(filterRows(rows, NO_FILTER)).toBe(rows);
    expect(filterRows(rows, { kind: 'error', text: '' }).map((r) => r.step)).toEqual([2, 4, 5]);
    expect(filterRows(rows, { kind: 'flag', text: '' }).map((r) => r.step)).toEqual([3]);
    expect(filterRows(rows, { kind: 'tool:read_file', text: '' }).map((r) => r.step)).toEqual([3]);
    expect(filterRows(rows, { kind: 'all', text: 'APP.PY' }).map((r) => r.step)).toEqual([2]);
    expect(filterRows(rows, { kind: 'all', text: 'loop' }).map((r) => r.step)).toEqual([3]);
    expect(filterRows(rows, { kind: 'all', text: '4' }).map((r) => r.step)).toEqual([4]);
    expect(filterRows(rows, { kind: 'error', text: 'python' }).map((r) => r.step)).toEqual([2]);
  });
  it('counts matches in steps as the header counts steps (the setup, step 0, is not one), and says while only the loaded ones were searched', () => {
    const steps = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => row(from + i));
    const header = (rowsBefore: number, loaded: readonly StepRow[]) =>
      selectDecisionCount({ rowsBefore, rows: loaded } as unknown as StepperState);
    // All in: steps 1–300 after the setup; 23 of them match.
    const all = [row(0, { tools: [], summary: 'setup · 1 file' }), ...steps(1, 300)];
    expect(header(0, all)).toBe(300);
    expect(filterCountText(all.slice(1, 24), all, 0)).toBe('23 matches in 300 steps');
    expect(filterCountText(all.slice(1, 2), all, 0)).toBe('1 match in 300 steps');
    // The setup row matched too: said apart, not counted as a step.
    expect(filterCountText(all.slice(0, 3), all, 0)).toBe('2 matches in 300 steps, and the setup');
    // The last 200 steps are in, the setup and steps 1–9800 still arriving (10,000-step trace:
    // "199 shown · 200 of 10001 loaded…" beside a header of "10000 steps").
    const tail = steps(9801, 10000);
    expect(header(9801, tail)).toBe(10000);
    const loading = filterCountText(tail.slice(1), tail, 9801);
    expect(loading).toBe('199 matches in the 200 steps loaded so far · 9800 still loading');
    const [, loaded, still] = /in the (\d+) steps .* (\d+) still loading$/.exec(loading) ?? [];
    expect(Number(loaded) + Number(still)).toBe(header(9801, tail));
  });
  it('finds a step among sorted rows', () => {
    expect(indexOfStep(rows, 4)).toBe(3);
    expect(indexOfStep(rows, 9)).toBe(-1);
    expect(indexOfStep([], 1)).toBe(-1);
  });
});

describe('breakpoint form', () => {
  it('builds every kind the engine has, and says in words what is missing or wrong', () => {
    expect(breakpointFromForm('step', '4')).toEqual({ ok: true, breakpoint: { kind: 'step', step: 4 } });
    expect(breakpointFromForm('tool', ' lookup ')).toEqual({
      ok: true,
      breakpoint: { kind: 'tool', name: 'lookup' },
    });
    expect(breakpointFromForm('null_value', '')).toEqual({ ok: true, breakpoint: { kind: 'null_value' } });
    expect(breakpointFromForm('slow_step', '250')).toEqual({
      ok: true,
      breakpoint: { kind: 'slow_step', ms: 250 },
    });
    expect(breakpointFromForm('step', '')).toEqual({ ok: false, message: 'Enter the step first.' });
    expect(breakpointFromForm('step', '0')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/step number from 1/),
    });
    expect(breakpointFromForm('repeat', '1')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/2 or more/),
    });
    expect(breakpointFromForm('step', 'three')).toMatchObject({
      ok: false,
      message: 'The step must be a number.',
    });
    expect(breakpointFromForm('tool', 'lookup', ['execute_shell', 'read_file'])).toEqual({
      ok: false,
      message: 'This task has no tool “lookup”. Its tools: execute_shell, read_file.',
    });
    expect(breakpointFromForm('tool', 'rm -rf /')).toMatchObject({
      ok: false,
      message: expect.stringMatching(/not a tool name/),
    });
  });
});

describe('QA flag summary', () => {
  it('names each rule once, counted when it flags more than one step, in the order of the flags', () => {
    const flag = (rule: string, step: number) => ({ rule, step, message: 'm', severity: 'warning' as const });
    expect(flagRules([flag('unknown_tool', 1), flag('unverified_success', 3), flag('unknown_tool', 2)])).toBe(
      'Unknown tool ×2 · Unverified success',
    );
    expect(flagRules([flag('loop', 3)])).toBe('Loop');
    expect(flagRules([])).toBe('');
  });
});
