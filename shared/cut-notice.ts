import { charactersText, LONG_TEXT_HEAD, LONG_TEXT_TAIL } from './long-text.js';
import { formatBytes } from './format-bytes.js';

/** One cut text in a person's words: where it is and how much of it is shown. */
export interface CutLine {
  readonly what: string;
  readonly text: string;
  /** The characters of it left out. */
  readonly omitted: number;
}

/** What a view says above a step whose long texts it shows cut, and the command that prints them whole. */
export interface CutNotice {
  /** One line: what is cut and how much is left out, ending "How to see it whole…". */
  readonly summary: string;
  readonly lines: readonly CutLine[];
  /** The command that prints every step's texts whole from the trace. */
  readonly command: string;
}

/** What a cut text keeps, in words: `its first 49,152 and last 16,384 characters`. */
export function keptWords(): string {
  return `its first ${LONG_TEXT_HEAD.toLocaleString('en-US')} and last ${charactersText(LONG_TEXT_TAIL)}`;
}

/** A cut text with its place named by the view that shows it; null for a copy of one named. */
export interface NamedCut {
  readonly what: string | null;
  /** Its whole length in characters. */
  readonly length: number;
  readonly omitted: number;
}

/**
 * THE words for a step's cut texts (shared/long-text.ts's head and tail), in the window's inspector
 * and a shared file's alike: each text named once, what was kept of it, and the command printing it
 * whole from the trace (`npx stepbox show BRANCH --json`); null when nothing was cut.
 */
export function cutNoticeOf(cuts: readonly NamedCut[], branch: string): CutNotice | null {
  if (cuts.length === 0) return null;
  const seen = new Set<string>();
  const lines: CutLine[] = [];
  for (const c of cuts) {
    if (c.what === null || seen.has(c.what)) continue;
    seen.add(c.what);
    lines.push({
      what: c.what,
      omitted: c.omitted,
      text: `is ${charactersText(c.length)} (about ${formatBytes(c.length)}): shown are ${keptWords()}; the ${charactersText(c.omitted)} between them are left out.`,
    });
  }
  // Only copies held a long text (an event no tab shows): still said.
  if (lines.length === 0)
    lines.push({
      what: 'a recorded event',
      omitted: cuts[0].omitted,
      text: `is cut: ${charactersText(cuts[0].omitted)} left out.`,
    });
  const left = lines.reduce((n, l) => n + l.omitted, 0);
  const first = lines[0];
  const summary =
    lines.length === 1
      ? `Too long to show whole: ${first.what}, ${charactersText(left)} left out. How to see it whole…`
      : `Too long to show whole: ${lines.length} texts, ${charactersText(left)} left out. How to see them whole…`;
  return { summary, lines, command: `npx stepbox show ${branch} --json` };
}
