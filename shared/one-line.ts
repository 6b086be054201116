import { terminalSafe } from './terminal-text.js';

/** The longest one-line summary a row or `stepbox show` prints, in characters. */
export const MAX_SUMMARY = 80;
/** How much of a text {@link oneLine} reads per character it shows (blanks it folds, escapes it drops). */
export const READ_PER_CHARACTER = 64;

/**
 * Shortens text to one line of at most `max` characters, without control sequences: the text is
 * an agent's (its arguments, its answer), and the window's rows and `stepbox show` print this
 * one line — the window drew an escape sequence as boxes and a bidi override reordered the
 * command read, where show's line had neither. Only its head is read: a 10 MB answer is one row.
 */
export function oneLine(text: string, max = MAX_SUMMARY): string {
  const head = text.length > max * READ_PER_CHARACTER ? text.slice(0, max * READ_PER_CHARACTER) : text;
  const flat = terminalSafe(head).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : head !== text ? `${flat}…` : flat;
}
