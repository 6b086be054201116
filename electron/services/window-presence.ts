import type { Clock } from './clock.js';

/**
 * Which windows (WebSocket clients, Electron windows) are open, and what to do when the last one
 * goes: after `graceMs` with none back (a reload reconnects well within it), `onLastClosed`
 * runs once. Never before a first window: a server driven only through `/api` keeps its episodes.
 */
export class WindowPresence {
  private readonly open = new Set<string>();
  private cancel: (() => void) | null = null;

  constructor(
    private readonly graceMs: number | null,
    private readonly clock: Clock,
    private readonly onLastClosed: () => void,
  ) {}

  /** A window connected (a reload's new connection cancels the pending release). */
  opened(client: string): void {
    this.open.add(client);
    this.cancel?.();
    this.cancel = null;
  }

  /** A window went; the last one starts the grace. */
  closed(client: string): void {
    if (!this.open.delete(client) || this.open.size > 0 || this.graceMs === null) return;
    this.cancel?.();
    this.cancel = this.clock.after(this.graceMs, () => {
      this.cancel = null;
      if (this.open.size === 0) this.onLastClosed();
    });
  }

  /** How many windows are open. */
  count(): number {
    return this.open.size;
  }

  /** Drops a pending release (the services are closing anyway). */
  dispose(): void {
    this.cancel?.();
    this.cancel = null;
  }
}
