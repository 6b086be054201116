import type { z } from 'zod';
import { didYouMean } from '../../../shared/did-you-mean.js';
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

/** Formats zod issues on a tool's arguments as `field: expected ...` lines. */
export function describeArgumentIssues(
  issues: readonly z.core.$ZodIssue[],
  args: Record<string, unknown>,
  allowed: readonly string[],
): string {
  return issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.join('.') : 'arguments';
      if (issue.code === 'unrecognized_keys') {
        return issue.keys
          .map((k) => {
            const guess = didYouMean(k, allowed);
            return `${k}: unknown argument${guess ? ` — did you mean "${guess}"?` : ''} (allowed: ${allowed.join(', ')})`;
          })
          .join('; ');
      }
      if (issue.code === 'invalid_type') {
        const given = issue.path.length === 1 ? args[String(issue.path[0])] : undefined;
        const missing = issue.path.length === 1 && !(String(issue.path[0]) in args);
        if (issue.expected === 'nonoptional') return `${field}: required (any JSON value)`;
        return missing
          ? `${field}: required, expected ${withArticle(issue.expected)}`
          : `${field}: expected ${withArticle(issue.expected)}, got ${describeValue(given)}`;
      }
      if (issue.code === 'invalid_value') {
        return `${field}: expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
      }
      if (issue.code === 'too_small' && issue.origin === 'string') return `${field}: must not be empty`;
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}
