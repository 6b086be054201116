import { describe, expect, it } from 'vitest';
import { createFlowWriter, HIGH_WATERMARK } from '../../renderer/src/model/flow-writer';

function manualScheduler() {
  const queue: (() => void)[] = [];
  return { schedule: (f: () => void) => queue.push(f), run: () => queue.splice(0).forEach((f) => f()) };
}

/** A flow writer whose writes and acks are recorded, its frames run by hand. */
function recordingWriter() {
  const frames = manualScheduler();
  const writes: { data: string; done: () => void }[] = [];
  const acks: number[] = [];
  const w = createFlowWriter(
    (data, done) => writes.push({ data, done }),
    (b) => acks.push(b),
    frames.schedule,
  );
  return { frames, writes, acks, w };
}

describe('terminal flow writer', () => {
  it('batches chunks into one write per frame and acks bytes once drawn', () => {
    const { frames, writes, acks, w } = recordingWriter();
    w.push('ab');
    w.push('cé');
    expect(writes).toHaveLength(0);
    frames.run();
    expect(writes.map((x) => x.data)).toEqual(['abcé']);
    expect(acks).toEqual([]);
    writes[0].done();
    expect(acks).toEqual([5]); // UTF-8 bytes: é is two
    expect(w.pending()).toBe(0);
  });

  it("draws the window's own marks in order with the output and never acks them", () => {
    const { frames, writes, acks, w } = recordingWriter();
    w.push('ab');
    w.note('--');
    w.push('c');
    frames.run();
    expect(writes.map((x) => x.data)).toEqual(['ab--c']);
    writes[0].done();
    expect(acks).toEqual([3]);
  });

  it('holds output above the high watermark until xterm catches up', () => {
    const frames = manualScheduler();
    const writes: { data: string; done: () => void }[] = [];
    const w = createFlowWriter(
      (data, done) => writes.push({ data, done }),
      () => {},
      frames.schedule,
    );
    w.push('x'.repeat(HIGH_WATERMARK + 1));
    frames.run();
    w.push('next');
    frames.run();
    expect(writes).toHaveLength(1);
    writes[0].done();
    frames.run();
    expect(writes.map((x) => x.data.length)).toEqual([HIGH_WATERMARK + 1, 4]);
  });
});
