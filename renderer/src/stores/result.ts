import type { Result } from '../../../shared/result';
import { inWindowWords } from './window-words';

/**
 * A failed operation's message for a person, in the window's words (its fields' names where
 * the engine, shared with the CLI, names flags), or null when it succeeded.
 */
export function errorText<T>(res: Result<T>): string | null {
  return res.ok ? null : inWindowWords(res.error.message);
}

/** The message of anything thrown. */
export function thrownText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
