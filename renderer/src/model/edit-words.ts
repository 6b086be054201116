import type { HeldAction } from '../../../shared/held-action';
import { callText } from '../../../shared/step-summary';

/** A call's arguments as an object: a model's answer carries them as a JSON string or an object. */
function readArgs(args: unknown): Record<string, unknown> | null {
  let v = args;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      // Not JSON: the caller shows the text as the model wrote it.
      return null;
    }
  }
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

/** What an edited answer said before the edit: the call's arguments, or the text and calls, on one line. */
export function decidedText(original: unknown, callId: string | null): string {
  const m = (original && typeof original === 'object' ? original : {}) as {
    content?: unknown;
    tool_calls?: { id?: string; function?: { name?: string; arguments?: unknown } }[];
  };
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  const shown = callId ? calls.filter((c) => c.id === callId) : calls;
  const parts = shown.map((c) => {
    const args = readArgs(c.function?.arguments);
    const name = c.function?.name ?? '?';
    // As the timeline and terminal say a call (`Bash ls -la`), not `Bash {"command":…}`.
    return args ? callText(name, args) : `${name} ${String(c.function?.arguments)}`;
  });
  if (!callId && typeof m.content === 'string' && m.content !== '') parts.unshift(`“${m.content}”`);
  return parts.join(' · ') || '(nothing)';
}

/**
 * Whose words the held answer's text is, and what the model had said once a person edited it.
 * The card read "The model says" over a person's edit, the model's own words nowhere on it.
 */
export function heldAnswerWords(held: Pick<HeldAction, 'message' | 'original'>): {
  readonly label: string;
  /** The model's answer before the edit, on one line; null when nothing was edited. */
  readonly original: string | null;
} {
  const original = held.original ?? null;
  // Only the arguments edited: the text is still the model's own.
  const rewritten = original !== null && original.content !== held.message.content;
  return {
    label: rewritten ? "Your edit of the model's answer" : 'The model says',
    original: original ? decidedText(original, null) : null,
  };
}

/**
 * The held answer's text as its card shows it under {@link heldAnswerWords}' label, or null when
 * the card says it otherwise: before a tool runs (the call is shown), or when the answer is the
 * final one and its "wants to finish with" line quotes the same text (the card said it twice).
 */
export function heldAnswerText(held: Pick<HeldAction, 'message' | 'final' | 'stage'>): string | null {
  const content = typeof held.message.content === 'string' ? held.message.content : '';
  if (held.stage === 'before_tool' || content === '') return null;
  return held.final !== null && held.final.trim() === content.trim() ? null : content;
}

/**
 * Why the held-step editor's Save and Save and run cannot act (null when they can): a request in
 * flight, text that is not JSON yet, or the last try's refusal still beside the unchanged draft
 * (it would be refused again; a change to the draft clears it). The buttons looked enabled beside
 * a red refusal.
 */
export function heldEditWhy(s: {
  readonly busy: boolean;
  readonly syntax: string | null;
  readonly refused: string | null;
}): string | null {
  if (s.busy) return 'Waiting for the last request to finish.';
  if (s.syntax !== null) return `Fix the text first: ${s.syntax}`;
  if (s.refused !== null) return `Change the text first: ${s.refused}`;
  return null;
}
