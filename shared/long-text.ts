import { agreeing } from './count-of.js';

/** `9,934,490 characters`: a count a person reads at a glance (a cut text's are in millions). */
export function charactersText(n: number): string {
  return `${n.toLocaleString('en-US')} ${agreeing(n, 'character')}`;
}

/**
 * How much of one recorded text a view carries: its head and its tail (a failing run's
 * error is at the end), the rest left out. A tool's output is recorded whole (replay
 * compares it), and an agent inside the sandbox can write 10 MB of it: put whole on the
 * window's page it froze the window for seconds.
 */
export const LONG_TEXT_HEAD = 48 * 1024;
/** The characters kept from the end of a cut text. */
export const LONG_TEXT_TAIL = 16 * 1024;

/** One text a view cut: where it was, how long it is, how much of it is left out. */
export interface TextCut {
  /** Where the text is in the value, as keys joined by dots (`calls.0.result.stdout`). */
  readonly path: string;
  /** Its whole length in characters. */
  readonly length: number;
  /** The characters left out between the head and the tail. */
  readonly omitted: number;
}

/** The line put where a cut text's middle was: says how much is missing, in place. */
export function cutMark(omitted: number): string {
  return `\n… ${charactersText(omitted)} left out here (too long to show whole) …\n`;
}

/** `text` within the bound: whole when it fits, else its head, the cut mark and its tail. */
export function cutLongText(text: string): { readonly text: string; readonly omitted: number } {
  if (text.length <= LONG_TEXT_HEAD + LONG_TEXT_TAIL) return { text, omitted: 0 };
  const omitted = text.length - LONG_TEXT_HEAD - LONG_TEXT_TAIL;
  return {
    text: text.slice(0, LONG_TEXT_HEAD) + cutMark(omitted) + text.slice(text.length - LONG_TEXT_TAIL),
    omitted,
  };
}

/**
 * `value` with every string over the bound cut ({@link cutLongText}), and the list of what
 * was cut; the same object back (and no cuts) when nothing is that long. For a JSON-like value
 * (a step's detail): the window is sent this, never the recorded megabytes.
 */
export function cutLongTexts<T>(value: T): { readonly value: T; readonly cuts: TextCut[] } {
  const cuts: TextCut[] = [];
  const walk = (v: unknown, path: string): unknown => {
    if (typeof v === 'string') {
      const cut = cutLongText(v);
      if (cut.omitted > 0) cuts.push({ path, length: v.length, omitted: cut.omitted });
      return cut.text;
    }
    if (Array.isArray(v)) {
      let out: unknown[] | null = null;
      v.forEach((x, i) => {
        const y = walk(x, path ? `${path}.${i}` : String(i));
        if (y !== x) (out ??= v.slice())[i] = y;
      });
      return out ?? v;
    }
    if (v !== null && typeof v === 'object') {
      let out: Record<string, unknown> | null = null;
      for (const [k, x] of Object.entries(v)) {
        const y = walk(x, path ? `${path}.${k}` : k);
        if (y !== x) (out ??= { ...(v as Record<string, unknown>) })[k] = y;
      }
      return out ?? v;
    }
    return v;
  };
  return { value: walk(value, '') as T, cuts };
}
