import type { Result } from '../../../shared/result';

/** A failed operation's message for a person, or null when it succeeded. */
export function errorText<T>(res: Result<T>): string | null {
  return res.ok ? null : res.error.message;
}

/** The message of anything thrown. */
export function thrownText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
