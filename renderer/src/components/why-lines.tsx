import { useEffect, useRef, useSyncExternalStore } from 'react';
import { revealWhole } from '../layout/reveal-whole';

// A disabled control's reason, said in a line of its own (WhyLine, WhySlot): never a floating
// bubble over other controls.

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
 * The lines on screen that `el` names in `aria-describedby` other than slots: its form's own error
 * or reason (a WhyLine, Save as case's name line), which say its reason already when word for word.
 */
function ownLines(el: HTMLElement): HTMLElement[] {
  return (el.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => (id ? document.getElementById(id) : null))
    .filter(
      (line): line is HTMLElement =>
        line !== null && !line.hasAttribute('data-why-slot') && line.checkVisibility(),
    );
}

/**
 * Whether a line of the control's own form on screen says its reason already, word for word:
 * then its slot says nothing. Save as case's bad name was said twice, by its line and by a
 * bubble over the inspector's tabs.
 */
export function saidByOwnLine(text: string, lines: readonly Pick<HTMLElement, 'textContent'>[]): boolean {
  return lines.some((line) => (line.textContent ?? '').trim() === text.trim());
}

/**
 * The slot line (WhySlot) saying a reason now, and its words: one at a time, set by WhyListener
 * (module state: the listener and the slots are mounted apart, and what is pointed at is the
 * DOM's, not a store's).
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
 * pointer (issue 33, item 2): tooltips alone said it only to a mouse, after a wait. Every such
 * control names a line of its own in `aria-describedby` (whyNot's `shownIn`): a WhySlot in the flow
 * beside it, where its reason is said now, covering nothing (a floating bubble lay over the
 * timeline's filter, the walkthrough, the panes' headers), or a WhyLine saying it already. Renders
 * nothing: it listens to the window's focus and pointer and says the reason in the slot.
 */
export function WhyListener() {
  useEffect(() => {
    let focused: HTMLElement | null = null;
    // The control the slot speaks for is watched: when its reason changes or it can act again,
    // the slot says the new reason or goes (the window's state moves under the focus).
    let about: HTMLElement | null = null;
    const present = (el: HTMLElement | null): void => {
      const slot = el ? slotOf(el) : null;
      const text = el && slot ? whyOf(el) : null;
      // Its own line says it word for word (Save as case's bad name): said once.
      saySlot(el && slot && text && !saidByOwnLine(text, ownLines(el)) ? { id: slot, text } : null);
    };
    const watch = new MutationObserver(() => present(about));
    const show = (el: HTMLElement | null): void => {
      watch.disconnect();
      about = el;
      if (el)
        watch.observe(el, {
          attributes: true,
          attributeFilter: ['aria-disabled', 'data-why', 'aria-describedby'],
        });
      present(el);
    };
    const onFocus = (e: FocusEvent): void => {
      // Watched even while it can act when the focus is the keyboard's: a focused Step that the
      // episode's end disables (Shift+F5 pressed on it) said nothing until the focus moved and
      // came back. Not a button clicked with the pointer, which keeps the focus: the end of the
      // episode its Continue ran to put "This episode has ended…" over the bar's "succeeded".
      const target = e.target instanceof HTMLElement ? e.target : null;
      focused = controlOf(target) ?? (target?.matches(':focus-visible') ? target : null);
      show(focused);
    };
    // Where the pointer was when it last came over something: the window moving under a still
    // pointer (a slot brought whole scrolls its pane) is not the person pointing elsewhere.
    let at: { readonly x: number; readonly y: number } | null = null;
    const onOver = (e: PointerEvent): void => {
      if (at && at.x === e.clientX && at.y === e.clientY) return;
      at = { x: e.clientX, y: e.clientY };
      // Onto the line saying the reason (it came in the flow under the pointer): it stays, or it
      // went and came back under the pointer.
      if (e.target instanceof Element && e.target.closest('[data-why-slot]:not([hidden])')) return;
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
  return null;
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
  const line = useRef<HTMLParagraphElement>(null);
  // Read whole when it comes: under Run batch, at the library's foot, it came cut by the pane's edge.
  useEffect(() => {
    if (text && line.current) revealWhole(line.current);
  }, [text]);
  return (
    <p
      ref={line}
      id={props.id}
      className="why-line"
      data-why-slot=""
      data-testid="why-slot"
      hidden={text === null}
    >
      {text}
    </p>
  );
}
