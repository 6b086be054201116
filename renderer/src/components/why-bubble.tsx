import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { revealWhole } from '../layout/reveal-whole';
import { WHY_BUBBLE_ID } from './why-not';

/** What the bubble says and where: under (or over) the control it is about. */
interface Shown {
  readonly text: string;
  readonly left: number;
  readonly top: number;
  readonly above: boolean;
}

/** The disabled control an event is about (one that says why), if any. */
function controlOf(target: EventTarget | null): HTMLElement | null {
  return target instanceof Element ? target.closest<HTMLElement>('[aria-disabled="true"][data-why]') : null;
}

/**
 * The reason a control gives now, or null once it can act: read from the control each time,
 * never kept from when it got the focus (a focused Roll back kept saying "The episode is
 * running: pause it first." after the step ended, beside the bar's "paused").
 */
export function whyOf(el: Pick<Element, 'getAttribute'>): string | null {
  return el.getAttribute('aria-disabled') === 'true' ? el.getAttribute('data-why') || null : null;
}

/**
 * The boxes of the lines on screen that `el` names in `aria-describedby` besides the bubble: its
 * form's own error or reason (whyNot's `shownIn`), which the bubble must not cover.
 */
function ownLines(el: HTMLElement): HTMLElement[] {
  return (el.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .filter((id) => id && id !== WHY_BUBBLE_ID)
    .map((id) => document.getElementById(id))
    .filter((line): line is HTMLElement => line !== null && line.checkVisibility());
}

/**
 * Whether a line of the control's own form on screen says its reason already, word for word:
 * then the bubble says nothing. Save as case's bad name was said twice, by its line and by a
 * bubble over the inspector's tabs.
 */
export function saidByOwnLine(text: string, lines: readonly Pick<HTMLElement, 'textContent'>[]): boolean {
  return lines.some((line) => (line.textContent ?? '').trim() === text.trim());
}

/**
 * Where the bubble goes for `el` (null: it can act, or its own line says why already): below it, or above it when the window ends
 * first or a line of its own form lies below it (Save as case's error under its field was
 * covered by the bubble saying the same words).
 */
function placeFor(el: HTMLElement): Shown | null {
  const text = whyOf(el);
  if (text === null) return null;
  const own = ownLines(el);
  if (saidByOwnLine(text, own)) return null;
  const r = el.getBoundingClientRect();
  const lineBelow = own
    .map((line) => line.getBoundingClientRect())
    .some((line) => line.top >= r.top && line.top < r.bottom + 60);
  const above = r.bottom + 60 > innerHeight || (lineBelow && r.top - 60 >= 0);
  return {
    text,
    left: Math.max(4, Math.min(r.left, innerWidth - 324)),
    top: above ? r.top - 4 : r.bottom + 4,
    above,
  };
}

/**
 * The slot line (WhySlot) saying a reason now, and its words: one at a time, set by the bubble's
 * listeners (module state: the bubble and the slots are mounted apart, and what is pointed at is
 * the DOM's, not a store's).
 */
let slotSaid: { readonly id: string; readonly text: string } | null = null;
const slotListeners = new Set<() => void>();

function saySlot(next: { readonly id: string; readonly text: string } | null): void {
  if (slotSaid?.id === next?.id && slotSaid?.text === next?.text) return;
  slotSaid = next;
  for (const l of slotListeners) l();
}

/** The slot line `el` names in `aria-describedby` (whyNot's `shownIn` naming a WhySlot), if any. */
function slotOf(el: HTMLElement): string | null {
  for (const id of (el.getAttribute('aria-describedby') ?? '').split(' '))
    if (id && document.getElementById(id)?.hasAttribute('data-why-slot')) return id;
  return null;
}

/**
 * The reason of a disabled control, in visible text beside it while it has the focus or the
 * pointer (issue 33, item 2): tooltips alone said it only to a mouse, after a wait. One bubble for
 * the window; every such control names it in `aria-describedby`. A control whose bubble would
 * cover what a person needs (Save as case… over the timeline's filter, Compare broken vs fixed
 * over the walkthrough) names a slot line of its own instead (WhySlot): the reason is said there,
 * in the flow, and covers nothing.
 */
export function WhyBubble() {
  const [shown, setShown] = useState<Shown | null>(null);
  useEffect(() => {
    let focused: HTMLElement | null = null;
    // The control the bubble speaks for is watched: when its reason changes or it can act
    // again, the bubble says the new reason or goes (the window's state moves under the focus).
    let about: HTMLElement | null = null;
    const present = (el: HTMLElement | null): void => {
      const slot = el ? slotOf(el) : null;
      const text = el && slot ? whyOf(el) : null;
      saySlot(slot && text ? { id: slot, text } : null);
      setShown(el && !slot ? placeFor(el) : null);
    };
    const watch = new MutationObserver(() => present(about));
    const show = (el: HTMLElement | null): void => {
      watch.disconnect();
      about = el;
      if (el) watch.observe(el, { attributes: true, attributeFilter: ['aria-disabled', 'data-why'] });
      present(el);
    };
    const onFocus = (e: FocusEvent): void => {
      focused = controlOf(e.target);
      show(focused);
    };
    const onOver = (e: PointerEvent): void => {
      show(controlOf(e.target) ?? focused);
    };
    const onBlur = (): void => {
      focused = null;
      show(null);
    };
    document.addEventListener('focusin', onFocus);
    document.addEventListener('focusout', onBlur);
    document.addEventListener('pointerover', onOver);
    return () => {
      document.removeEventListener('focusin', onFocus);
      document.removeEventListener('focusout', onBlur);
      document.removeEventListener('pointerover', onOver);
      watch.disconnect();
      saySlot(null);
    };
  }, []);
  return (
    <div
      id={WHY_BUBBLE_ID}
      className={`why-bubble${shown?.above ? ' above' : ''}`}
      data-testid="why-bubble"
      role="tooltip"
      hidden={!shown}
      style={shown ? { left: shown.left, top: shown.top } : undefined}
    >
      {shown?.text}
    </div>
  );
}

/**
 * A disabled control's reason said in a line beside it, without focus or pointer: for a control
 * whose form the person has filled in (they mean to press it). The control names `id` in
 * `aria-describedby` (whyNot's `shownIn`); nothing is rendered while there is no reason.
 */
export function WhyLine(props: { readonly id: string; readonly why: string | null }) {
  const line = useRef<HTMLParagraphElement>(null);
  // Read whole when it comes: under Inject at 1024×700 it sat cut under the Sandbox header.
  useEffect(() => {
    if (props.why && line.current) revealWhole(line.current);
  }, [props.why]);
  if (!props.why) return null;
  return (
    <p ref={line} id={props.id} className="why-line" data-testid="why-line">
      {props.why}
    </p>
  );
}

function subscribeSlot(listener: () => void): () => void {
  slotListeners.add(listener);
  return () => slotListeners.delete(listener);
}

/**
 * A line in the flow beside a disabled control where its reason is said while the control has
 * the focus or the pointer (the control names `id` in whyNot's `shownIn`): for a control where a
 * floating bubble would cover a control or text a person needs. Empty and hidden otherwise.
 */
export function WhySlot(props: { readonly id: string }) {
  const said = useSyncExternalStore(
    subscribeSlot,
    () => slotSaid,
    () => null,
  );
  const text = said?.id === props.id ? said.text : null;
  return (
    <p id={props.id} className="why-line" data-why-slot="" data-testid="why-slot" hidden={text === null}>
      {text}
    </p>
  );
}
