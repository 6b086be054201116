import type { MouseEvent } from 'react';

/** The id of the line that shows the reason of the disabled control focused or pointed at (why-bubble.tsx). */
export const WHY_BUBBLE_ID = 'why-bubble';

/** The props of a control that may be unable to act: disabled, and why (on focus and hover, screen reader, keys). */
export interface WhyNotProps {
  readonly disabled?: boolean;
  readonly title?: string;
  readonly 'aria-disabled'?: true;
  readonly 'aria-description'?: string;
  readonly 'aria-describedby'?: string;
  readonly 'data-why'?: string;
  readonly onClickCapture?: (e: MouseEvent) => void;
}

/** Swallows a click (or Enter/Space) on a control that cannot act: it stays focusable so it can say why. */
function refuse(e: MouseEvent): void {
  e.preventDefault();
  e.stopPropagation();
}

/**
 * Disables a control when `why` names a reason and says it where a person looks for it (issue
 * 33, item 2): the control stays focusable (`aria-disabled`, not `disabled`, which would drop it
 * from the Tab order and so from anyone on a keyboard), and focusing or pointing at it shows the
 * reason in visible text beside it (the why bubble, linked by `aria-describedby`); a screen reader
 * hears it as the description; `data-why` is what the action keys quote. Enabled, the control
 * keeps its own `title`. Where the person has already filled in what the control sends, the
 * reason is also said in a line beside it (WhyLine, its id in `shownIn`): a form typed in and a
 * button that does nothing, its reason behind a hover, read as broken.
 */
export function whyNot(
  why: string | null | false | undefined,
  title?: string,
  shownIn?: string | null,
): WhyNotProps {
  if (!why) return title ? { title } : {};
  return {
    title: why,
    'aria-disabled': true,
    'aria-description': why,
    // `shownIn`: a line beside the control says the reason without focus (WhyLine), read first.
    'aria-describedby': shownIn ? `${shownIn} ${WHY_BUBBLE_ID}` : WHY_BUBBLE_ID,
    'data-why': why,
    onClickCapture: refuse,
  };
}

/** The first reason that holds (null when none does): the order is the order a person fixes them in. */
export function firstWhy(...whys: readonly (string | null | false | undefined)[]): string | null {
  for (const w of whys) if (w) return w;
  return null;
}
