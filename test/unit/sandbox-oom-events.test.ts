import { describe, expect, it } from 'vitest';
import { OomEvents } from '../../electron/engine/docker/oom.js';

describe('OomEvents tally', () => {
  it('counts events per container and forgets a removed one', () => {
    const e = new OomEvents();
    e.record('a');
    e.record('a');
    e.record('b');
    expect([e.count('a'), e.count('b'), e.count('c')]).toEqual([2, 1, 0]);
    e.forget('a');
    expect(e.count('a')).toBe(0);
  });

  it('waitAbove resolves true at once for an event already counted', async () => {
    const e = new OomEvents();
    e.record('a');
    await expect(e.waitAbove('a', 0, 10_000)).resolves.toBe(true);
  });

  it('waitAbove resolves true when a late event for its container arrives, not for another', async () => {
    const e = new OomEvents();
    const waiting = e.waitAbove('a', 0, 10_000);
    e.record('b');
    e.record('a');
    await expect(waiting).resolves.toBe(true);
  });

  it('waitAbove resolves false when no event arrives in time', async () => {
    const e = new OomEvents();
    e.record('b');
    await expect(e.waitAbove('a', 0, 20)).resolves.toBe(false);
  });
});
