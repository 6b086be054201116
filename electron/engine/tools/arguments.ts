import { err, ok, type Result } from '../../../shared/result.js';

/**
 * Accepts a call's arguments as an object or as a JSON string (OpenAI sends strings);
 * an empty string or a missing value is `{}`. The error says what was wrong with the text.
 */
export function parseArguments(raw: unknown): Result<Record<string, unknown>, string> {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return ok({});
    try {
      value = JSON.parse(raw);
    } catch (e) {
      return err(
        `arguments are not valid JSON (${(e as Error).message}); send a JSON object such as {"path": "x.py"}`,
      );
    }
  }
  if (value === undefined || value === null) return ok({});
  if (typeof value !== 'object' || Array.isArray(value)) {
    return err(`arguments: expected a JSON object, got ${describeValue(value)}`);
  }
  return ok(value as Record<string, unknown>);
}

/** What a value is, for messages: `a string`, `a number`, `an array`, `null`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** `a string`, `an integer`: a type name with its article. */
export function withArticle(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
