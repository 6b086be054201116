import type { MouseEvent } from 'react';

/** The props of a control that may be unable to act: disabled, and why (in its line, to a screen reader, to keys). */
export interface WhyNotProps {
  readonly disabled?: boolean;
  /** Only while it can act: disabled, its reason is said in its line alone. */
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
 * from the Tab order and so from anyone on a keyboard); a screen reader hears it as the
 * description; `data-why` is what the action keys quote. Enabled, the control keeps its own
 * `title`; disabled, it has none (the line is the one place its words are said). On screen, the reason is said in the line `shownIn` names, in the flow beside the
 * control (why-lines.tsx): a WhySlot, which says it while the control is focused or pointed at,
 * or a WhyLine, which says it without (where the person has filled in what the control sends: a
 * form typed in and a button that does nothing read as broken). Required: a floating bubble lay
 * over other controls, and every control says its reason the one way.
 */
export function whyNot(
  why: string | null | false | undefined,
  title: string | undefined,
  shownIn: string,
): WhyNotProps {
  if (!why) return title ? { title } : {};
  // No `title` while disabled: the line says the reason, and a native tooltip over it said it a
  // second time, late, covering the line (or, kept from the enabled state, said what it would do).
  return {
    'aria-disabled': true,
    'aria-description': why,
    'aria-describedby': shownIn,
    'data-why': why,
    onClickCapture: refuse,
  };
}

/** The first reason that holds (null when none does): the order is the order a person fixes them in. */
export function firstWhy(...whys: readonly (string | null | false | undefined)[]): string | null {
  for (const w of whys) if (w) return w;
  return null;
}
