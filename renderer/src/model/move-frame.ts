/**
 * Runs `run` at the start of the frame after the next one: the next frame is painted by then,
 * and what a person did right after it (a click) came first. Not when the window is idle: a
 * window still busy (rows arriving, a loaded machine) had none for up to the idle timeout, and
 * the detail waited that long. At once where there are no frames (tests).
 */
export function afterThisPaint(run: () => void): void {
  if (typeof requestAnimationFrame !== 'function') return run();
  requestAnimationFrame(() => void requestAnimationFrame(() => run()));
}

/** The longest a detail waits for its move's frame: a hidden window paints none. */
const HOLD_MAX_MS = 250;

/** The frame of the latest step change: whether it is painted yet, and a wait for it. */
export interface MoveFrame {
  /**
   * A step change was committed: its frame is to be painted. `hold` false: nothing waits for
   * that frame (what the change asked for shows as soon as it comes).
   */
  moved(hold: boolean): void;
  /** Resolves once the frame of the latest step change is painted (at once when it is). */
  painted(): Promise<void>;
}

/**
 * Keeps work that can wait out of a step change's frame. A far slider move asks the server for
 * the step's detail; its answer landed before the move's frame (the inspector's new detail then
 * laid out and painted in it, beside the rows) or between its paint and the next task, about one
 * move in three (traces, issue 33.9). Held until that frame is painted, the detail follows a frame
 * later, and when another click or move comes first it is not drawn at all.
 */
export function createMoveFrame(afterPaint: (run: () => void) => void = afterThisPaint): MoveFrame {
  let moves = 0;
  let paintedMoves = 0;
  let waiting: (() => void)[] = [];
  let holding = false;
  return {
    moved(hold) {
      const mine = ++moves;
      holding = hold;
      afterPaint(() => {
        // An earlier move's frame painted: the latest one's may still be to come.
        if (mine !== moves) return;
        paintedMoves = mine;
        const run = waiting;
        waiting = [];
        for (const resolve of run) resolve();
      });
    },
    painted() {
      if (!holding || paintedMoves === moves) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        // A window that paints no frame (hidden, minimized) still shows the detail.
        setTimeout(resolve, HOLD_MAX_MS);
      });
    },
  };
}
