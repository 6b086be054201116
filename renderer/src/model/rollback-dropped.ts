import type { RollbackDropped } from '../../../shared/contract/models';
import { agreeing, countOf } from '../../../shared/count-of';

/** `step 2`, `steps 1 and 2`, `steps 1, 2 and 4`: the distinct steps of `steps`, in order. */
function stepsWords(steps: readonly number[]): string {
  const at = [...new Set(steps)].sort((a, b) => a - b);
  return at.length === 1 ? `step ${at[0]}` : `steps ${andList(at.map(String))}`;
}

/**
 * What a rollback dropped of a person's, one phrase per kind with its count and steps ("1 message
 * injected after step 2"), or an empty list when it dropped nothing. An injected message and a
 * typed command are recorded at the step they came after; an override at the step whose result it
 * replaced. The notice said "Inject your message again" only for a message after step k itself:
 * not for one after a later step, nor for an override.
 */
export function droppedPhrases(d: RollbackDropped): string[] {
  const out: string[] = [];
  if (d.injected.length)
    out.push(`${countOf(d.injected.length, 'message')} injected after ${stepsWords(d.injected)}`);
  if (d.overridden.length)
    out.push(`${countOf(d.overridden.length, 'overridden result')} of ${stepsWords(d.overridden)}`);
  if (d.typed.length)
    out.push(`${countOf(d.typed.length, 'terminal command')} typed after ${stepsWords(d.typed)}`);
  return out;
}

/** How many things a rollback dropped in all. */
export function droppedCount(d: RollbackDropped): number {
  return d.injected.length + d.overridden.length + d.typed.length;
}

/** `a, b and c`. */
export function andList(items: readonly string[]): string {
  return items.length <= 1
    ? (items[0] ?? '')
    : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The notice's sentence of what a rollback dropped and what to do about it; '' when nothing. */
export function droppedSentence(d: RollbackDropped): string {
  const phrases = droppedPhrases(d);
  if (phrases.length === 0) return '';
  const them = agreeing(droppedCount(d), 'it', 'them');
  return `Dropped: ${phrases.join('; ')}. Redo ${them} if the next step needs ${them}.`;
}
