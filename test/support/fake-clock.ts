import type { Clock } from '../../electron/services/clock.js';

/** A clock tests move by hand: `advance(ms)` runs the timers that fall due, in time order. */
export class FakeClock implements Clock {
  private t: number;
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 1;

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    const id = this.nextId++;
    this.timers.push({ at: this.t + ms, fn, id });
    return () => {
      this.timers = this.timers.filter((x) => x.id !== id);
    };
  }

  /** Timers waiting. */
  pending(): number {
    return this.timers.length;
  }

  /** Moves time on by `ms`, running each timer due on the way (and letting its promises settle). */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = due.at;
      due.fn();
      await settle();
    }
    this.t = end;
    await settle();
  }
}

/** Lets pending promise callbacks (and those they queue) run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
}
