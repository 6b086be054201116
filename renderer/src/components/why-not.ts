/** The props of a control that may be unable to act: disabled, and why (hover, screen reader, keys). */
export interface WhyNotProps {
  readonly disabled: boolean;
  readonly title?: string;
  readonly 'aria-description'?: string;
  readonly 'data-why'?: string;
}

/**
 * Disables a control when `why` names a reason and says it where a person looks for it: the
 * tooltip, the screen reader's description (`aria-description`) and `data-why` (the action
 * keys quote it). Enabled, the control keeps its own `title`.
 */
export function whyNot(why: string | null | false | undefined, title?: string): WhyNotProps {
  if (!why) return { disabled: false, ...(title ? { title } : {}) };
  return { disabled: true, title: why, 'aria-description': why, 'data-why': why };
}

/** The first reason that holds (null when none does): the order is the order a person fixes them in. */
export function firstWhy(...whys: readonly (string | null | false | undefined)[]): string | null {
  for (const w of whys) if (w) return w;
  return null;
}
