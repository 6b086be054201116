import type { FileChange } from '../../../shared/contract/models';
import { diffSides, folderChangeText } from '../../../shared/text-lines';

/**
 * How the inspector's Files tab shows one changed file: a diff only when there is text on
 * both sides. A file new at the step (or empty before it) is shown whole, every line added;
 * one removed (or emptied) whole, every line removed — a diff against nothing would draw the
 * empty side's blank line as a deleted line.
 */
export type FileView =
  | { readonly kind: 'binary'; readonly caption: string }
  | { readonly kind: 'empty'; readonly caption: string }
  | {
      readonly kind: 'whole';
      readonly side: 'added' | 'removed';
      readonly text: string;
      readonly caption: string;
    }
  | { readonly kind: 'diff'; readonly before: string; readonly after: string };

/** Lines of a text as a person counts them (a trailing newline ends the last line). */
function lineCount(text: string): number {
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

function lines(text: string): string {
  const n = lineCount(text);
  return `${n} ${n === 1 ? 'line' : 'lines'}`;
}

/** What the Files tab shows for `file`, changed by step `step`. */
export function fileViewOf(file: FileChange, step: number): FileView {
  const at = step === 0 ? 'at setup (step 0)' : `at step ${step}`;
  // A folder has no text: "was removed; it was empty" said of one read as an empty file.
  if (file.folder) return { kind: 'empty', caption: folderChangeText(file.path, file.change, at) };
  if (file.binary) return { kind: 'binary', caption: `${file.path} is binary.` };
  const before = file.change === 'added' ? '' : (file.before ?? '');
  const after = file.change === 'deleted' ? '' : (file.after ?? '');
  // Shown without the final newline both sides end with: no empty last line drawn after the
  // text (counted and judged empty from the file as it is).
  const [shownBefore, shownAfter] = diffSides(before, after) as [string, string];
  if (before === '' && after === '')
    return {
      kind: 'empty',
      caption:
        file.change === 'added'
          ? `${file.path} is new ${at}, and empty.`
          : `${file.path} ${file.change === 'deleted' ? 'was removed' : 'changed'} ${at}; it was empty.`,
    };
  if (before === '')
    return {
      kind: 'whole',
      side: 'added',
      text: shownAfter,
      caption:
        file.change === 'added'
          ? `new ${at} — ${lines(after)}, all added`
          : `was empty before ${at.replace(/^at /, '')} — ${lines(after)} added`,
    };
  if (after === '')
    return {
      kind: 'whole',
      side: 'removed',
      text: shownBefore,
      caption:
        file.change === 'deleted'
          ? `removed ${at} — its ${lines(before)} before`
          : `emptied ${at} — its ${lines(before)} before`,
    };
  return { kind: 'diff', before: shownBefore, after: shownAfter };
}
