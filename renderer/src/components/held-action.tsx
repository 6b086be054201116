import { memo, useEffect, useRef, useState } from 'react';
import { whyNot } from './why-not';
import { WhySlot } from './why-lines';
import { revealWhole } from '../layout/reveal-whole';
import type { HeldAction } from '../../../shared/held-action';
import { heldAnswerText, heldAnswerWords, heldEditWhy } from '../model/edit-words';
import type { ToolCall } from '../../../shared/trace-events';
import { useSlice, useStores } from '../stores/use-stores';

/** The editor's own message line (its syntax or refusal, which the slot does not repeat) and its WhySlot. */
const HELD_EDITOR_WHY = 'held-editor-message held-editor-why';

/** What the person is changing: a call's arguments, a call's result, or the whole answer. */
type Editing =
  | { readonly kind: 'arguments'; readonly call: ToolCall }
  | { readonly kind: 'result'; readonly call: ToolCall }
  | { readonly kind: 'answer' };

function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/** The draft an editor opens with. */
function draftOf(editing: Editing, held: HeldAction): string {
  if (editing.kind === 'arguments') return pretty(editing.call.arguments);
  if (editing.kind === 'answer') {
    // Arguments as objects: easier to edit than JSON inside a string.
    const m = held.message;
    return pretty({
      content: m.content,
      ...(m.tool_calls
        ? {
            tool_calls: m.tool_calls.map((c) => {
              let args: unknown = c.function.arguments;
              try {
                args = typeof args === 'string' ? JSON.parse(args) : args;
              } catch {
                // Arguments that are not JSON stay as the model wrote them.
              }
              return { ...c, function: { ...c.function, arguments: args } };
            }),
          }
        : {}),
    });
  }
  const given = held.replaced.find((r) => r.call_id === editing.call.id);
  return given ? (given.result.stdout ?? pretty(given.result)) : '';
}

/** True when `text` is JSON; else what is wrong with it, in a short line. */
function jsonProblem(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (e) {
    return `not valid JSON yet: ${e instanceof Error ? e.message : String(e)}`;
  }
}

/**
 * The step the stepper is paused inside: what the agent decided, shown before it takes
 * effect, with what a person can do about it — run it, edit a call's arguments, give a
 * call's result instead of running it, or (before the answer reaches the agent) edit the
 * answer. Refusals (a bad argument for the tool) show beside the editor.
 */
// Memoized (no props): the inspector re-renders at every step a slider move passes.
export const HeldActionCard = memo(function HeldActionCard() {
  const stores = useStores();
  const held = useSlice('stepper', (s) => s.held);
  const state = useSlice('stepper', (s) => s.state);
  const busy = useSlice('stepper', (s) => s.busy);
  const error = useSlice('stepper', (s) => s.heldError);
  const [editing, setEditing] = useState<Editing | null>(null);
  const [draft, setDraft] = useState('');
  const editor = useRef<HTMLTextAreaElement | null>(null);
  const key = held ? `${held.step}/${held.stage}` : '';
  // A new held step (or none) closes the editor: its draft belonged to the other one.
  useEffect(() => setEditing(null), [key]);
  const label = useRef<HTMLLabelElement | null>(null);
  useEffect(() => {
    if (editing) editor.current?.focus({ preventScroll: true });
  }, [editing]);
  // The editor whole above its pinned Save and run, its label above it, when it opens and when a
  // refusal grows the pinned row: focus's own scroll left it under that row, ~1.5 lines of it
  // shown in a 1024×700 window's inspector.
  useEffect(() => {
    if (editing && editor.current) revealWhole(editor.current, label.current);
  }, [editing, error]);
  if (!held || state === 'running' || state === 'ended') return null;
  const a = stores.stepper.getState();
  const open = (e: Editing) => {
    setEditing(e);
    setDraft(draftOf(e, held));
  };
  const submit = async (andRun: boolean) => {
    if (!editing) return;
    const ok =
      editing.kind === 'arguments'
        ? await a.editArguments(editing.call.id, draft)
        : editing.kind === 'answer'
          ? await a.editAnswer(draft)
          : await a.replaceResult(editing.call.id, draft);
    if (!ok) return;
    setEditing(null);
    if (andRun) await a.step();
  };
  const beforeTool = held.stage === 'before_tool';
  const answer = heldAnswerWords(held);
  const shownText = heldAnswerText(held);
  const syntax = editing && editing.kind !== 'result' ? jsonProblem(draft) : null;
  const editWhy = heldEditWhy({ busy, syntax, refused: error });
  const editorLabel =
    editing?.kind === 'arguments'
      ? `New arguments for ${editing.call.name}`
      : editing?.kind === 'result'
        ? `The result ${editing.call.name} returns instead (text becomes its output, or a result object)`
        : 'The answer the agent gets (content and tool calls)';
  return (
    <section className="held" data-testid="held-action" data-stage={held.stage} aria-label="paused step">
      <h3>
        {beforeTool
          ? held.calls.length > 0
            ? `Paused before step ${held.step} runs`
            : `Paused before step ${held.step} ends the episode`
          : `Paused before the agent gets step ${held.step}'s answer`}
        {held.edited ? (
          <span className="badge held-edited" data-testid="held-edited">
            edited by you
          </span>
        ) : null}
      </h3>
      {held.why && !/^stopped before/.test(held.why) ? (
        <p className="muted" data-testid="held-why">
          Your breakpoint fired: {held.why}
        </p>
      ) : null}
      {shownText !== null ? (
        <p className="held-content" data-testid="held-content">
          {answer.label}: <q>{shownText}</q>
        </p>
      ) : null}
      {answer.original !== null ? (
        <p className="muted held-original" data-testid="held-original">
          The model had said: {answer.original}
        </p>
      ) : null}
      {held.calls.map((call) => {
        const given = held.replaced.find((r) => r.call_id === call.id);
        return (
          <div className="held-call" key={call.id} data-testid="held-call">
            <div>
              {beforeTool ? 'The agent wants to run:' : 'The answer asks to run:'}{' '}
              <b className="mono">{call.name}</b>
            </div>
            <pre className="mono held-args" data-testid="held-args">
              {pretty(call.arguments)}
            </pre>
            {given ? (
              <div className="notice" data-testid="held-replaced">
                It will not run; the agent gets this result instead:{' '}
                <span className="mono">{given.result.stdout ?? JSON.stringify(given.result)}</span>
              </div>
            ) : null}
            {/* Before the answer too: an agent that runs its own tools (sandbox:, codex) is
                only ever held there, and a call's arguments are the thing a person changes. */}
            <div className="row">
              <button
                type="button"
                data-testid="held-edit-arguments"
                aria-keyshortcuts={beforeTool ? 'E' : undefined}
                {...whyNot(
                  busy && 'Waiting for the last request to finish.',
                  undefined,
                  `held-call-why-${call.id}`,
                )}
                onClick={() => open({ kind: 'arguments', call })}
              >
                Edit arguments
                {beforeTool ? (
                  <>
                    {' '}
                    <kbd>E</kbd>
                  </>
                ) : null}
              </button>
              {beforeTool ? (
                <button
                  type="button"
                  data-testid="held-replace-result"
                  {...whyNot(
                    busy && 'Waiting for the last request to finish.',
                    undefined,
                    `held-call-why-${call.id}`,
                  )}
                  onClick={() => open({ kind: 'result', call })}
                >
                  Replace result
                </button>
              ) : null}
            </div>
            <WhySlot id={`held-call-why-${call.id}`} />
          </div>
        );
      })}
      {held.final !== null ? (
        <p data-testid="held-final">
          The agent wants to finish with: <q>{held.final}</q>
        </p>
      ) : null}
      {held.parse_error !== null ? (
        <p className="bad" data-testid="held-parse-error">
          This answer cannot be used as it is: {held.parse_error}
        </p>
      ) : null}
      {editing ? (
        <div className="held-editor">
          <label htmlFor="held-editor-text" ref={label}>
            {editorLabel}
          </label>
          <textarea
            id="held-editor-text"
            ref={editor}
            data-testid="held-editor"
            className="mono"
            rows={Math.min(12, Math.max(4, draft.split('\n').length + 1))}
            value={draft}
            spellCheck={false}
            aria-invalid={syntax !== null || error !== null}
            aria-describedby="held-editor-message"
            onChange={(e) => {
              setDraft(e.target.value);
              a.clearHeldError();
            }}
            onKeyDown={(e) => {
              if (e.key === 'Escape') setEditing(null);
              else if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && editWhy === null) void submit(true);
            }}
          />
          {/* Pinned at the inspector's bottom edge with the refusal above them: a refusal of three
              lines under the editor pushed Save and run out of view at 1024×700 (the editor
              scrolls under them). */}
          <div className="pinned-actions" data-testid="held-actions" data-pinned>
            <div id="held-editor-message" aria-live="polite">
              {error ? (
                <div className="bad" role="alert" data-testid="held-error">
                  {error}
                </div>
              ) : syntax ? (
                <div className="muted" data-testid="held-syntax">
                  {syntax}
                </div>
              ) : null}
            </div>
            <div className="row">
              <button
                type="button"
                className="primary"
                data-testid="held-save-run"
                {...whyNot(editWhy, 'Ctrl+Enter', HELD_EDITOR_WHY)}
                onClick={() => void submit(true)}
              >
                {editing.kind === 'result' ? 'Use this result and go on' : 'Save and run'}
              </button>
              <button
                type="button"
                data-testid="held-save"
                {...whyNot(editWhy, undefined, HELD_EDITOR_WHY)}
                onClick={() => void submit(false)}
              >
                Save
              </button>
              <button type="button" onClick={() => setEditing(null)} title="Escape">
                Cancel
              </button>
            </div>
            <WhySlot id="held-editor-why" />
          </div>
        </div>
      ) : (
        // Pinned, with a refusal above them: "Give it to the agent" sat cut in half at the
        // inspector's edge (1024×700).
        <div className="pinned-actions" data-testid="held-actions" data-pinned>
          {error ? (
            <div className="bad" role="alert" data-testid="held-error">
              {error}
            </div>
          ) : null}
          <div className="row">
            <button
              type="button"
              className="primary"
              data-testid="held-run"
              {...whyNot(busy && 'Waiting for the last request to finish.', 'F10', 'held-run-why')}
              onClick={() => void a.step()}
            >
              {!beforeTool ? 'Give it to the agent' : held.calls.length > 0 ? 'Run it' : 'Let it finish'}{' '}
              <kbd>F10</kbd>
            </button>
            {!beforeTool || held.calls.length === 0 ? (
              <button
                type="button"
                data-testid="held-edit-answer"
                aria-keyshortcuts="E"
                {...whyNot(busy && 'Waiting for the last request to finish.', undefined, 'held-run-why')}
                onClick={() => open({ kind: 'answer' })}
              >
                Edit the answer
              </button>
            ) : null}
          </div>
          <WhySlot id="held-run-why" />
        </div>
      )}
    </section>
  );
});
