import { safeStorage } from '../model/safe-storage';

/** The sizes a person gave the window's panes (px), remembered across sessions. */
export interface PaneSizes {
  /** Width of the left column (library, walkthrough, breakpoints). */
  readonly left: number;
  /** Width of the right column (inspector, inject, sandbox). */
  readonly right: number;
  /** Height of the centre's lower part (replay controls and terminal). */
  readonly bottom: number;
  /** Height of the right column's lower part (inject and sandbox). */
  readonly rightBottom: number;
  /** Height of the walkthrough drawer in the left column. */
  readonly walkthrough: number;
}

/** Defaults for a 1600×1000 window; {@link fitPanes} scales them to the one in use. */
export const DEFAULT_PANES: PaneSizes = {
  left: 290,
  right: 460,
  bottom: 330,
  rightBottom: 330,
  walkthrough: 380,
};

const KEY = 'stepbox.panes.v1';
/** What the timeline (centre) and each column keep at least, so no pane can be dragged out of sight. */
export const MIN = { left: 200, right: 300, centre: 420, top: 300, bottom: 140, walkthrough: 120 } as const;
const BAR = 32;
/** A window body shorter than this (1024×700's is 663) is short: its lower centre pane's default grows. */
const SHORT_BODY = 700;
/** Replay's four rows (~150 px) and a terminal of 180 px under its header. */
const SHORT_BOTTOM = 360;
/** Inject's decision form whole under a manual agent's guidance, beside the Sandbox's five lines. */
const SHORT_RIGHT_BOTTOM = 350;
const SPLIT = 5;

/** Reads the remembered sizes; anything missing or not a number falls back to the default. */
export function loadPanes(storage: Pick<Storage, 'getItem'> | null = safeStorage()): PaneSizes {
  try {
    const raw = storage?.getItem(KEY);
    const saved = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    const pick = (k: keyof PaneSizes): number =>
      typeof saved[k] === 'number' && Number.isFinite(saved[k]) ? saved[k] : DEFAULT_PANES[k];
    return {
      left: pick('left'),
      right: pick('right'),
      bottom: pick('bottom'),
      rightBottom: pick('rightBottom'),
      walkthrough: pick('walkthrough'),
    };
  } catch {
    // A corrupt entry (edited by hand, another version) is not worth an error: start from the defaults.
    return DEFAULT_PANES;
  }
}

/** Remembers the sizes (best effort: a full or disabled storage only loses the layout). */
export function savePanes(sizes: PaneSizes, storage: Pick<Storage, 'setItem'> | null = safeStorage()): void {
  try {
    storage?.setItem(KEY, JSON.stringify(sizes));
  } catch {
    // Quota or privacy mode: the layout is simply not remembered.
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}

/**
 * The sizes to draw in a `width`×`height` window: each within its limits, and the side
 * columns shrunk together (keeping their ratio) until the centre keeps {@link MIN}.centre,
 * so the timeline is never squeezed out at 1024×700 nor lost in a sea of panes at 4K.
 */
export function fitPanes(sizes: PaneSizes, width: number, height: number): PaneSizes {
  let left = clamp(sizes.left, MIN.left, width * 0.4);
  let right = clamp(sizes.right, MIN.right, width * 0.5);
  const room = width - 2 * SPLIT - MIN.centre;
  if (left + right > room) {
    const over = left + right - room;
    const share = left / (left + right);
    left = Math.max(MIN.left, left - over * share);
    right = Math.max(MIN.right, right - over * (1 - share));
  }
  const body = height - BAR - SPLIT;
  const short = body < SHORT_BODY;
  // A lower pane: at most 42% of the height (55% in a short window), and in a short window its
  // default is `shortSize` up to what leaves MIN.top above it; a size the person dragged to is kept.
  const lower = (key: 'bottom' | 'rightBottom', shortSize: number): number =>
    Math.round(
      clamp(
        sizes[key] === DEFAULT_PANES[key] && short ? Math.min(body - MIN.top, shortSize) : sizes[key],
        MIN.bottom,
        Math.max(MIN.bottom, Math.min(body - MIN.top, body * (short ? 0.55 : 0.42))),
      ),
    );
  return {
    left: Math.round(left),
    right: Math.round(right),
    // The lower panes take at most 42% of the height: the timeline and the inspector are what one
    // reads. In a short window the centre's default is what the timeline leaves over MIN.top, up to
    // SHORT_BOTTOM: Replay's four rows and a terminal of 180 px (42% left the terminal ~100 px at
    // 1024×700: issue 33, item 11).
    bottom: lower('bottom', SHORT_BOTTOM),
    // The right column's lower part alike: in a short window Inject and the Sandbox's lines under
    // it take SHORT_RIGHT_BOTTOM (42% left ~280: the Sandbox's last rows under the window's edge,
    // and Inject's decision form scrolled past its guidance); the inspector keeps MIN.top.
    rightBottom: lower('rightBottom', SHORT_RIGHT_BOTTOM),
    // The walkthrough drawer too (at most 42% of the column): the library above it (Running,
    // the episodes, the other cases) keeps more than half, ~410 px at 1280×800. In a short window
    // at most 60%: the drawer's own rows (its title, versions, runs) take ~200 px at 1024×700, and
    // 42% left the walkthrough's text two lines; the library keeps ~250 px above it.
    walkthrough: Math.round(
      clamp(
        sizes.walkthrough,
        MIN.walkthrough,
        Math.max(MIN.walkthrough, Math.min(body - 160, body * (short ? 0.6 : 0.42))),
      ),
    ),
  };
}
