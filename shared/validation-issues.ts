// The one wording of a validation error: every zod failure the engine, the services and the
// CLI report reads `field.path: what is wrong; other.field: …`.
import type { z } from 'zod';
import { agreeing } from './count-of.js';

/** One zod issue in words: `path.to.field: message` (each key as {@link shownKey} shows it), or `top: message` for the whole value. */
export function issueLine(issue: z.core.$ZodIssue, top = '(top level)'): string {
  return `${issue.path.length ? issue.path.map((k) => shownKey(String(k))).join('.') : top}: ${issue.message}`;
}

/**
 * Zod issues in words, joined by `; ` (the first `most` of them when given). `top` names the
 * whole value when an issue is about it rather than a field: `(request)`, `(event)`, ….
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  top = '(top level)',
  most = Infinity,
): string {
  return issues
    .slice(0, most)
    .map((i) => issueLine(i, top))
    .join('; ');
}

/**
 * The most lines one file's notes or errors give one kind of thing (its unknown keys, its
 * problems): a task.toml with 50,000 unknown keys printed 50,000 notes. The rest are counted.
 */
export const MOST_LINES = 20;

/** The most characters of a key a line shows: a key of a file is the file's author's to make any length. */
export const KEY_SHOWN_CHARS = 60;

/** Control characters (C0, DEL, C1) and the bidi controls that reorder what is read. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const KEY_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * A key of an untrusted file (a task.toml, a devcontainer.json, a task.json) as a line names
 * it: each control character as a `\uXXXX` escape (an ESC or a newline in a key would move
 * the terminal's cursor or forge a line of its own), cut to {@link KEY_SHOWN_CHARS} with `…`.
 */
export function shownKey(key: string): string {
  const safe = key.replace(KEY_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return safe.length > KEY_SHOWN_CHARS ? `${safe.slice(0, KEY_SHOWN_CHARS)}…` : safe;
}

/**
 * One line per item, for the first {@link MOST_LINES} items, then `LEAD and N more NOUNs` for
 * the rest (`noun` singular: "unknown key" → "and 49980 more unknown keys"; `lead` the lines'
 * own, such as `warning: FILE: `). Lines are made only for the items shown.
 */
export function cappedLines<T>(
  items: readonly T[],
  line: (item: T) => string,
  noun: string,
  lead = '',
): string[] {
  const rest = items.length - MOST_LINES;
  return [
    ...items.slice(0, MOST_LINES).map(line),
    ...(rest > 0 ? [`${lead}and ${rest} more ${agreeing(rest, noun)}`] : []),
  ];
}
