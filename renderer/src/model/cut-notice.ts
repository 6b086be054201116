import type { StepDetail } from '../../../shared/contract/models';
import { charactersText, LONG_TEXT_HEAD, LONG_TEXT_TAIL } from '../../../shared/long-text';
import { formatBytes } from '../../../shared/format-bytes';

/** The inspector's words for one cut text: where it is and how much of it is shown. */
export interface CutLine {
  readonly what: string;
  readonly text: string;
  /** The characters of it left out. */
  readonly omitted: number;
}

/** A cut text's place in people's words (`execute_shell's stdout`), or null for a copy of one named. */
function placeOf(detail: StepDetail, path: string): string | null {
  const parts = path.split('.');
  if (parts[0] === 'calls') {
    const name = detail.calls[Number(parts[1])]?.call.name ?? 'a call';
    const field = parts[parts.length - 1];
    const real = parts.includes('real') ? ' (what really ran)' : parts.includes('shown') ? ' (shown)' : '';
    return parts.includes('arguments') ? `${name}'s argument ${field}` : `${name}'s ${field}${real}`;
  }
  if (parts[0] === 'model_output') return 'the model’s raw output';
  if (parts[0] === 'model_request') return 'a message of the model request';
  if (parts[0] === 'final') return 'the final answer';
  // The step's events repeat its call and result: named once, by the call.
  if (parts[0] === 'events') return null;
  return path;
}

/**
 * What the inspector says above a step's tabs when the server sent long texts as their head
 * and tail (shared/long-text.ts), and how to get them whole; null when nothing was cut.
 */
export function cutNotice(
  detail: StepDetail,
  branch: string,
): { readonly summary: string; readonly lines: readonly CutLine[]; readonly command: string } | null {
  const cut = detail.cut ?? [];
  if (cut.length === 0) return null;
  const seen = new Set<string>();
  const lines: CutLine[] = [];
  for (const c of cut) {
    const what = placeOf(detail, c.path);
    if (what === null || seen.has(what)) continue;
    seen.add(what);
    lines.push({
      what,
      omitted: c.omitted,
      text: `is ${charactersText(c.length)} (about ${formatBytes(c.length)}): shown are its first ${LONG_TEXT_HEAD.toLocaleString('en-US')} and last ${charactersText(LONG_TEXT_TAIL)}; the ${charactersText(c.omitted)} between them are left out.`,
    });
  }
  // Only the events held a long text (an event the inspector shows in no tab): still said.
  if (lines.length === 0)
    lines.push({
      what: 'a recorded event',
      omitted: cut[0].omitted,
      text: `is cut: ${charactersText(cut[0].omitted)} left out.`,
    });
  const left = lines.reduce((n, l) => n + l.omitted, 0);
  const first = lines[0];
  const summary =
    lines.length === 1
      ? `Too long to show whole: ${first.what}, ${charactersText(left)} left out. How to see it whole…`
      : `Too long to show whole: ${lines.length} texts, ${charactersText(left)} left out. How to see them whole…`;
  return { summary, lines, command: `npx stepbox show ${branch} --json` };
}
