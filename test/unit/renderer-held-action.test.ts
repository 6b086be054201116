import { describe, expect, it } from 'vitest';
import type { EpisodeStateInfo, StepDetail } from '../../shared/contract/models';
import type { HeldAction } from '../../shared/held-action';
import { breakpointFromForm } from '../../renderer/src/model/breakpoint-form';
import { heldAnswerText, heldAnswerWords, heldEditWhy } from '../../renderer/src/model/edit-words';
import {
  createStepperStore,
  describeStop,
  rowsWithHeld,
} from '../../renderer/src/stores/stepper/stepper-store';
import { createFakeBackend } from '../support/renderer-fake-client';
import { episodeView, stepDetail, stepRow, traceEvent } from '../support/renderer-fixtures';
import { selectNeverRan } from '../../renderer/src/stores/inspector/inspector-store';
import { stepRowsOf } from '../../shared/contract/step-rows';
import { selectHeldEndsEpisode, whyNoInject } from '../../renderer/src/stores/stepper/why-not-now';
import { injectPlaceholder } from '../../renderer/src/stores/inject/inject-store';

const sync = (flush: () => void) => flush();

const HELD: HeldAction = {
  step: 3,
  stage: 'before_tool',
  why: 'stopped before the tools run',
  request: null,
  message: {
    content: null,
    tool_calls: [
      { id: 'c3', type: 'function', function: { name: 'execute_shell', arguments: '{"command":"ls"}' } },
    ],
  },
  edited: false,
  calls: [{ id: 'c3', name: 'execute_shell', arguments: { command: 'ls' } }],
  final: null,
  parse_error: null,
  replaced: [],
};

function heldState(held: HeldAction | null, over: Partial<EpisodeStateInfo> = {}): EpisodeStateInfo {
  return {
    episode: 'ep1',
    branch: 'b-main',
    state: 'paused',
    step: 2,
    reason: held ? { kind: held.stage, message: `step ${held.step}: ${held.why}`, held } : null,
    stop_points: { before_tool: true, before_answer: false },
    held,
    ...over,
  };
}

describe('the held step in the window', () => {
  it('the timeline shows the calls a held step waits to run; a recorded row is left alone', () => {
    const pending = { ...stepRow(3), tools: [], summary: '', status: 'pending' as const };
    const rows = rowsWithHeld([stepRow(1), stepRow(2), pending], HELD);
    expect(rows[2]).toMatchObject({ step: 3, tools: ['execute_shell'], status: 'pending' });
    expect(rows[2].summary).toMatch(/^waiting to run: ls/);
    const done = [stepRow(1), stepRow(2), stepRow(3)];
    expect(rowsWithHeld(done, HELD)).toBe(done);
    expect(rowsWithHeld(done, null)).toBe(done);
  });

  it('says in words where it paused', () => {
    expect(describeStop(heldState(HELD))).toBe("paused before step 3's tools run");
    expect(
      describeStop(
        heldState(
          { ...HELD, stage: 'before_answer' },
          {
            reason: {
              kind: 'before_answer',
              breakpoint: { kind: 'request_tool', name: 'lookup' },
              held: { ...HELD, stage: 'before_answer' },
            },
          },
        ),
      ),
    ).toBe(
      "paused at a breakpoint (before the answer, when the model is offered lookup) before the agent gets step 3's answer",
    );
  });

  it('a held final answer ends the episode: Inject says no step after it reads a message, and cannot send', async () => {
    const final: HeldAction = {
      ...HELD,
      stage: 'before_answer',
      message: { content: 'Done.' },
      calls: [],
      final: 'Done.',
    };
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(2, { state: heldState(final) }));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-main');
    expect(selectHeldEndsEpisode(store.getState())).toBe(3);
    // Not "What the agent reads at step 4": there is no step 4.
    const row = { step: 3, tools: [], summary: '', status: 'pending' as const };
    expect(injectPlaceholder(row, 'text', false, false, 3)).toBe(
      "Nothing injected here is read: step 3's final answer ends the episode, so there is no step 4.",
    );
    expect(whyNoInject(store.getState())).toBe(
      "Step 3 is the agent's final answer: it ends the episode, so no step after it reads a message. To go on, edit the answer in the paused-step card.",
    );
    // A held tool call goes on after it runs: the message is read at the next step.
    const calls = createStepperStore(fake.client, { schedule: sync });
    fake.on('episode.open', () => episodeView(2, { state: heldState(HELD) }));
    await calls.getState().open('b-main');
    expect(selectHeldEndsEpisode(calls.getState())).toBeNull();
    expect(whyNoInject(calls.getState())).toMatch(
      /^Step 3 is paused inside: a message goes in between steps/,
    );
  });

  it('edits arguments through the contract; a refusal stays beside the editor until the draft changes', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(2, { state: heldState(HELD) }));
    let refuse = true;
    fake.on('episode.editArguments', (r) =>
      refuse
        ? {
            code: 'invalid_input',
            message: 'execute_shell cannot take these arguments: "command" is missing: give it a string',
          }
        : heldState({ ...HELD, edited: true, calls: [{ ...HELD.calls[0], arguments: r.arguments }] }),
    );
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-main');
    expect(store.getState().held?.step).toBe(3);
    expect(store.getState().stopPoints.before_tool).toBe(true);

    expect(await store.getState().editArguments('c3', '{"cmd": 1')).toBe(false);
    expect(store.getState().heldError).toMatch(/not valid JSON/);
    expect(fake.callsOf('episode.editArguments')).toHaveLength(0);

    expect(await store.getState().editArguments('c3', '{"cmd": "x"}')).toBe(false);
    const refused = 'execute_shell cannot take these arguments: "command" is missing: give it a string';
    expect(store.getState().heldError).toBe(refused);
    // Save and Save and run are greyed while the refusal stands beside the unchanged draft.
    expect(heldEditWhy({ busy: false, syntax: null, refused })).toBe(`Change the text first: ${refused}`);
    expect(heldEditWhy({ busy: false, syntax: 'not valid JSON yet: x', refused: null })).toBe(
      'Fix the text first: not valid JSON yet: x',
    );
    expect(heldEditWhy({ busy: false, syntax: null, refused: null })).toBeNull();
    store.getState().clearHeldError();
    expect(store.getState().heldError).toBeNull();

    refuse = false;
    expect(await store.getState().editArguments('c3', '{"command": "echo hi"}')).toBe(true);
    expect(fake.callsOf('episode.editArguments').at(-1)).toEqual({
      id: 'b-main',
      call_id: 'c3',
      arguments: { command: 'echo hi' },
    });
    expect(store.getState().held?.calls[0].arguments).toEqual({ command: 'echo hi' });
  });

  it('a replaced result: plain text becomes the output the agent sees', async () => {
    const fake = createFakeBackend();
    fake.on('episode.open', () => episodeView(2, { state: heldState(HELD) }));
    fake.on('episode.replaceResult', () => heldState(HELD));
    const store = createStepperStore(fake.client, { schedule: sync });
    await store.getState().open('b-main');
    expect(await store.getState().replaceResult('c3', 'pretend')).toBe(true);
    expect(fake.callsOf('episode.replaceResult')).toEqual([
      {
        id: 'b-main',
        call_id: 'c3',
        // A given result has no duration and no exit code: the tool does not run for it ("0.0 ms"
        // and "exit 0" read as a command that ran).
        result: { ok: true, stdout: 'pretend', duration_ms: null, bytes: 7 },
      },
    ]);
  });

  it('the breakpoint form builds request breakpoints and refuses a bad pattern in words', () => {
    expect(breakpointFromForm('request_match', 'rm -rf')).toEqual({
      ok: true,
      breakpoint: { kind: 'request_match', pattern: 'rm -rf' },
    });
    const bad = breakpointFromForm('request_match', '(unclosed');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(
      /That pattern will not do: "\(unclosed" is not a regular expression/,
    );
    expect(breakpointFromForm('request_no_tool', 'lookup', ['execute_shell'])).toEqual({
      ok: true,
      breakpoint: { kind: 'request_no_tool', name: 'lookup' },
    });
    expect(breakpointFromForm('request_tool', 'lookup', ['execute_shell']).ok).toBe(false);
  });
});

describe("the held answer's words: whose they are", () => {
  const MODEL = { content: 'I will list the files.', tool_calls: HELD.message.tool_calls };

  it('the model\'s own answer reads "The model says", with no original beside it', () => {
    expect(heldAnswerWords({ message: MODEL })).toEqual({ label: 'The model says', original: null });
  });

  it('an answer a person rewrote is labelled as their edit, and what the model had said is kept', () => {
    const words = heldAnswerWords({ message: { content: 'A person answered instead.' }, original: MODEL });
    expect(words.label).toBe("Your edit of the model's answer");
    expect(words.original).toBe('“I will list the files.” · execute_shell ls');
  });

  it("only the arguments edited: the text is still the model's, the original answer still in reach", () => {
    const edited = {
      ...MODEL,
      tool_calls: [{ id: 'c3', function: { name: 'execute_shell', arguments: '{"command":"pwd"}' } }],
    };
    const words = heldAnswerWords({ message: edited, original: MODEL });
    expect(words.label).toBe('The model says');
    expect(words.original).toContain('execute_shell ls');
  });
});

describe('a held step the episode ended before it ran', () => {
  const toolCalls = (args: string) => [
    { id: 'call_2', type: 'function' as const, function: { name: 'write_file', arguments: args } },
  ];
  const held = (events: Record<string, unknown>[]): StepDetail => ({
    ...stepDetail(2),
    calls: [],
    model_output: { raw: '', usage: null },
    events: events.map((e) =>
      traceEvent({ step: 2, ...e } as Record<string, unknown> & { type: string; step: number }),
    ),
  });

  it('shows the held call (a person’s edit of it, if any) and that it never ran; not for a step that ran', () => {
    const output = {
      type: 'model_output',
      raw: '',
      message: { content: null, tool_calls: toolCalls('{"path": "greet.py", "content": "x"}') },
    };
    const never = selectNeverRan(held([{ type: 'model_request', request: {} }, output]));
    expect(never?.text).toBe(
      'Step 2 never ran: the agent decided this call, and the episode ended while the step was paused before it ran, so no tool ran and the sandbox did not change.',
    );
    expect(never?.calls).toEqual([{ name: 'write_file', arguments: { path: 'greet.py', content: 'x' } }]);
    // Edited while held: what would have run is the edit.
    const edited = selectNeverRan(
      held([
        output,
        {
          type: 'edit',
          stage: 'before_tool',
          call_id: 'call_2',
          original: output.message,
          edited: { content: null, tool_calls: toolCalls('{"path": "other.py"}') },
        },
      ]),
    );
    expect(edited?.calls).toEqual([{ name: 'write_file', arguments: { path: 'other.py' } }]);
    // A step that ran (its action recorded), step 0 and a step with a call are not "never ran".
    expect(selectNeverRan(held([output, { type: 'action', calls: [], final: 'done' }]))).toBeNull();
    expect(selectNeverRan(stepDetail(2))).toBeNull();
    expect(selectNeverRan({ ...held([output]), step: 0 })).toBeNull();
    // No decision recorded at all: nothing to show.
    expect(selectNeverRan(held([{ type: 'model_request', request: {} }]))).toBeNull();
  });

  it('its timeline row names the decided call (a person’s edit of it), marked as not run', () => {
    const output = {
      type: 'model_output',
      raw: '',
      message: { content: null, tool_calls: toolCalls('{"path": "greet.py", "content": "x"}') },
    };
    const ev = (e: Record<string, unknown>) =>
      traceEvent({ step: 2, ...e } as Record<string, unknown> & { type: string; step: number });
    // The row of a step released while held had an empty tool cell beside the inspector's call.
    const [row] = stepRowsOf([ev({ type: 'model_request', request: {} }), ev(output)]);
    expect(row).toMatchObject({ step: 2, tools: ['write_file'], summary: 'greet.py', not_run: true });
    const [edited] = stepRowsOf([
      ev(output),
      ev({
        type: 'edit',
        stage: 'before_tool',
        call_id: 'call_2',
        original: output.message,
        edited: { content: null, tool_calls: toolCalls('{"path": "other.py"}') },
      }),
    ]);
    expect(edited).toMatchObject({ tools: ['write_file'], summary: 'other.py', not_run: true });
    // Once it runs, the row is the action's, with no mark.
    const [ran] = stepRowsOf([
      ev(output),
      ev({
        type: 'action',
        calls: [{ id: 'call_2', name: 'write_file', arguments: { path: 'greet.py' } }],
        final: null,
      }),
    ]);
    expect(ran.tools).toEqual(['write_file']);
    expect(ran.not_run).toBeUndefined();
    // Held live, the held call's words lead (the card's latest edit), as before.
    expect(rowsWithHeld([row], { ...HELD, step: 2 })[0].summary).toMatch(/^waiting to run: ls/);
  });
});

describe("the held answer's text: said once", () => {
  it('a final answer held before it reaches the agent is quoted by its "finish with" line alone', () => {
    const final = {
      content: 'The file says hello.',
      final: 'The file says hello.',
      stage: 'before_answer' as const,
    };
    expect(heldAnswerText({ ...final, message: { content: final.content } })).toBeNull();
    // An answer with calls, or a final line that differs, keeps its text under its label.
    expect(
      heldAnswerText({ message: { content: 'I will list.' }, final: null, stage: 'before_answer' }),
    ).toBe('I will list.');
    expect(
      heldAnswerText({ message: { content: 'I will list.' }, final: null, stage: 'before_tool' }),
    ).toBeNull();
  });
});
