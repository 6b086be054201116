import { describe, expect, it } from 'vitest';
import { OtherWritersWatch } from '../../electron/engine/docker/other-writers.js';
import type { Writers } from '../../electron/engine/sandbox/sandbox.js';
import { otherWritersText } from '../../shared/other-writers-text.js';

/** A probe answering from a list, one answer per question; `exclude` recorded. */
function probe(...answers: (Writers | Error | 'hang')[]) {
  const asked: (number | undefined)[] = [];
  return {
    asked,
    fn: (exclude?: number) => {
      asked.push(exclude);
      const a = answers.shift();
      if (a === undefined) throw new Error('asked more than expected');
      if (a === 'hang') return new Promise<Writers>(() => {});
      return a instanceof Error ? Promise.reject(a) : Promise.resolve(a);
    },
  };
}
const quiet = (changes: number): Writers => ({ changes, running: [], more: 0 });

describe("what else could write while a person's command ran", () => {
  it('names nothing when nothing else was alive and no op ran', async () => {
    const p = probe(quiet(3), quiet(3));
    const w = new OtherWritersWatch(p.fn);
    await w.beforeRun(7);
    expect(await w.atReport(7, false)).toBeUndefined();
    expect(p.asked).toEqual([7, 7]);
  });

  it('names a process alive before the line ran, though gone at its report, and one alive only at the end', async () => {
    const p = probe(
      { changes: 1, running: [[40, 'sh', 1]], more: 0 },
      { changes: 1, running: [[52, 'python3', 1]], more: 2 },
    );
    const w = new OtherWritersWatch(p.fn);
    await w.beforeRun(7);
    expect(await w.atReport(7, false)).toEqual({
      processes: [
        { pid: 40, name: 'sh' },
        { pid: 52, name: 'python3' },
      ],
      more: 2,
      episode: false,
    });
  });

  it("says when the episode changed files meanwhile (the op count moved, a restarted helper's too)", async () => {
    const w = new OtherWritersWatch(probe(quiet(5), quiet(6)).fn);
    await w.beforeRun(7);
    expect(await w.atReport(7, false)).toEqual({ processes: [], more: 0, episode: true });
    const restarted = new OtherWritersWatch(probe(quiet(5), quiet(0)).fn);
    await restarted.beforeRun(7);
    expect((await restarted.atReport(7, false))?.episode).toBe(true);
  });

  it("leaves out the person's own shell and its children, asked about before its first prompt said its pid", async () => {
    // With its prompt's subshells then (and theirs), and the agent's process beside them.
    const w = new OtherWritersWatch(
      probe(
        {
          changes: 0,
          running: [
            [7, 'bash', 0],
            [21, 'bash', 7],
            [22, 'base64', 21],
            [40, 'sh', 1],
          ],
          more: 0,
        },
        quiet(0),
      ).fn,
    );
    await w.beforeRun(undefined);
    expect((await w.atReport(7, false))?.processes).toEqual([{ pid: 40, name: 'sh' }]);
  });

  it('says it could not tell when the sandbox fails or does not answer in time, and the line still runs', async () => {
    const failed = new OtherWritersWatch(probe(new Error('helper gone'), quiet(0)).fn);
    await failed.beforeRun(7);
    expect((await failed.atReport(7, false))?.unknown).toContain('helper gone');
    const slow = new OtherWritersWatch(probe('hang', quiet(0)).fn, 20);
    await slow.beforeRun(7);
    expect((await slow.atReport(7, false))?.unknown).toBe('the sandbox did not answer in 20 ms');
  });

  it('goes on from a report to the next line typed ahead, and starts afresh after a prompt', async () => {
    const w = new OtherWritersWatch(
      probe(quiet(1), { changes: 1, running: [[40, 'sh', 1]], more: 0 }, quiet(1), quiet(1), quiet(1)).fn,
    );
    await w.beforeRun(7);
    // A second line was typed ahead: its window starts where the first one's report was.
    expect((await w.atReport(7, true))?.processes).toEqual([{ pid: 40, name: 'sh' }]);
    expect((await w.atReport(7, false))?.processes).toEqual([{ pid: 40, name: 'sh' }]);
    w.close();
    await w.beforeRun(7);
    expect(await w.atReport(7, false)).toBeUndefined();
  });

  it("shows a process's own name without its control characters", async () => {
    const w = new OtherWritersWatch(
      probe({ changes: 0, running: [[9, 'a\u001b[2Jb\n', 1]], more: 0 }, quiet(0)).fn,
    );
    await w.beforeRun(7);
    expect((await w.atReport(7, false))?.processes).toEqual([{ pid: 9, name: 'a?[2Jb?' }]);
  });

  it('says it in words', () => {
    expect(otherWritersText({ processes: [{ pid: 41, name: 'sh' }], more: 0, episode: false })).toBe(
      "the agent's sh (pid 41) was running too",
    );
    expect(
      otherWritersText({
        processes: [
          { pid: 41, name: 'sh' },
          { pid: 57, name: 'sleep' },
        ],
        more: 1,
        episode: true,
      }),
    ).toBe(
      "the agent's sh (pid 41), sleep (pid 57) and 1 more were running too; the episode's own tool call or restore changed files meanwhile",
    );
    expect(otherWritersText({ processes: [], more: 0, episode: false, unknown: 'helper gone' })).toBe(
      'stepbox could not tell what else ran (helper gone)',
    );
  });
});
