/** Where output goes: xterm's `write(data, callback)`. */
export type WriteFn = (data: string, done: () => void) => void;

/** Batches terminal output and acknowledges what the screen has drawn. */
export interface FlowWriter {
  push(data: string): void;
  /**
   * Text of the window's own (a mark, not the shell's output), drawn in order with the output
   * around it and never acknowledged: the server did not send it.
   */
  note(data: string): void;
  /** Bytes received but not yet drawn. */
  pending(): number;
  dispose(): void;
}

/** Above this many undrawn bytes the writer stops feeding xterm until it catches up. */
export const HIGH_WATERMARK = 256 * 1024;
/** Below this the writer resumes. */
export const LOW_WATERMARK = 32 * 1024;

const encoder = new TextEncoder();

/**
 * Coalesces chunks into one write per frame (Hyper's batching), writes with xterm's
 * callback, and acks each batch's bytes once drawn — the server sends more only
 * against acks, so a flood cannot outrun the screen. Between the watermarks the
 * writer holds output instead of queueing more inside xterm.
 */
export function createFlowWriter(
  write: WriteFn,
  ack: (bytes: number) => void,
  schedule: (run: () => void) => void = (run) => requestAnimationFrame(run),
): FlowWriter {
  let queue: string[] = [];
  let queuedBytes = 0;
  let inFlight = 0;
  let scheduled = false;
  let disposed = false;

  const pump = (): void => {
    scheduled = false;
    if (disposed || queue.length === 0) return;
    if (inFlight > HIGH_WATERMARK) return; // resumed from the write callback
    const data = queue.join('');
    const bytes = queuedBytes;
    queue = [];
    queuedBytes = 0;
    inFlight += bytes;
    write(data, () => {
      inFlight -= bytes;
      ack(bytes);
      if (inFlight < LOW_WATERMARK && queue.length && !scheduled) {
        scheduled = true;
        schedule(pump);
      }
    });
  };

  const enqueue = (data: string, bytes: number): void => {
    if (disposed || data.length === 0) return;
    queue.push(data);
    queuedBytes += bytes;
    if (!scheduled) {
      scheduled = true;
      schedule(pump);
    }
  };
  return {
    push(data) {
      enqueue(data, encoder.encode(data).length);
    },
    note(data) {
      enqueue(data, 0);
    },
    pending: () => queuedBytes + inFlight,
    dispose() {
      disposed = true;
      queue = [];
    },
  };
}
