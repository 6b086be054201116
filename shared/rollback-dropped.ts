import type { RollbackDropped } from './contract/models.js';
import { countOf } from './count-of.js';

/** `step 2`, `steps 1, 2, 4`: the distinct steps of `steps`, in order (short: the window's notice has few lines at 1024×700). */
function stepsWords(steps: readonly number[]): string {
  const at = [...new Set(steps)].sort((a, b) => a - b);
  return at.length === 1 ? `step ${at[0]}` : `steps ${at.join(', ')}`;
}

/**
 * What a rollback dropped of a person's, one phrase per kind with its count and steps ("1 message
 * injected after step 2"), or an empty list when it dropped nothing. An injected message and a
 * typed command are recorded at the step they came after; an override at the step whose result it
 * replaced. The notice said "Inject your message again" only for a message after step k itself:
 * not for one after a later step, nor for an override. The window's notice and the CLI's `r K`
 * say these same words.
 */
export function droppedPhrases(d: RollbackDropped): string[] {
  const out: string[] = [];
  if (d.injected.length)
    out.push(`${countOf(d.injected.length, 'message')} injected after ${stepsWords(d.injected)}`);
  if (d.overridden.length)
    out.push(`${countOf(d.overridden.length, 'overridden result')} of ${stepsWords(d.overridden)}`);
  if (d.typed.length) out.push(`${countOf(d.typed.length, 'command')} typed after ${stepsWords(d.typed)}`);
  return out;
}

/** The sentence of what a rollback dropped and what to do about it (the window's notice, `r K`); '' when nothing. */
export function droppedSentence(d: RollbackDropped): string {
  const phrases = droppedPhrases(d);
  if (phrases.length === 0) return '';
  return `Dropped: ${phrases.join('; ')}. Redo what the next step needs.`;
}
