import type { StepDetail } from '../../../shared/contract/models';
import { cutNoticeOf, type CutNotice } from '../../../shared/cut-notice';

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
export function cutNotice(detail: StepDetail, branch: string): CutNotice | null {
  return cutNoticeOf(
    (detail.cut ?? []).map((c) => ({ ...c, what: placeOf(detail, c.path) })),
    branch,
  );
}
