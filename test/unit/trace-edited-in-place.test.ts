import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEpisodeStore, type DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { SETTLE_MS } from '../../electron/engine/trace/file-version.js';
import { watchStore, type StoreChange } from '../../electron/engine/trace/store-watch.js';
import { runMain } from '../support/cli.js';
import { writeSampleEpisode } from '../support/traces.js';

// A trace written in place (same path, new content: steps appended by a tool, a rewrite, damage)
// while a window or a shell lists the store: the list follows the file, without a restart.

let home: string;
let store: DiskEpisodeStore;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-in-place-'));
  store = openEpisodeStore(home, { skipMarkInterrupted: true });
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** An open (plain JSONL) trace of `steps` steps, as another process is writing it. */
async function openTrace(steps: number): Promise<{ episode: string; path: string; lines: string[] }> {
  const ep = await writeSampleEpisode(store, { steps, end: null });
  ep.writer.abandon();
  const path = store.resolve(ep.branch).tracePath;
  return { episode: ep.episode, path, lines: readFileSync(path, 'utf8').split('\n').filter(Boolean) };
}

/** The lines of the trace up to step `k`'s snapshot (its complete steps 1..k). */
function upToStep(lines: readonly string[], k: number): string[] {
  const at = lines.findIndex((l) => {
    const e = JSON.parse(l) as { type: string; step: number };
    return e.type === 'snapshot' && e.step === k;
  });
  return lines.slice(0, at + 1);
}

type Listed = { episodes: { id: string; branches: { id: string; steps: number }[] }[] };
type Unreadable = { unreadable: { id: string; branch: string; message: string; file: string }[] };

async function listJson(): Promise<Listed & Unreadable> {
  const r = await runMain(home, ['list', '--json'], { STEPBOX_LOG: 'error' });
  expect(r.code, r.err).toBe(0);
  return JSON.parse(r.out) as Listed & Unreadable;
}

describe('list follows a trace written in place', () => {
  it('steps appended to the file by hand are listed; a rewrite that keeps its size and mtime is not missed', async () => {
    const t = await openTrace(4);
    writeFileSync(t.path, upToStep(t.lines, 2).join('\n') + '\n');
    const stepsOf = (l: Listed) => l.episodes.find((e) => e.id === t.episode)?.branches[0]?.steps;
    expect(stepsOf(await listJson())).toBe(2);

    // A tool appends steps 3 and 4 to the same file.
    appendFileSync(t.path, t.lines.slice(upToStep(t.lines, 2).length).join('\n') + '\n');
    expect(stepsOf(await listJson())).toBe(4);

    // A line damaged in place, of the same length, its mtime put back (an editor, `touch -r`):
    // size and mtime say nothing changed; the ctime and inode do.
    const before = statSync(t.path);
    // touch -r keeps the nanoseconds (utimes from JavaScript numbers loses some).
    const ref = join(home, 'mtime-ref');
    execFileSync('touch', ['-r', t.path, ref]);
    const text = readFileSync(t.path, 'utf8');
    const damaged = text.replace('"type":"tool_result"', '"type":"tool_reslt_"');
    expect(damaged.length).toBe(text.length);
    writeFileSync(t.path, damaged);
    execFileSync('touch', ['-r', ref, t.path]);
    const after = statSync(t.path);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);

    const listed = await listJson();
    expect(stepsOf(listed)).toBeUndefined();
    const u = listed.unreadable.find((x) => x.id === t.episode);
    expect(u?.message).toMatch(/line \d+ has type "tool_reslt_"/);
    expect(u?.file).toBe(t.path);
  });
});

describe('the store watch follows traces written in place', () => {
  let stop: (() => void) | null = null;
  afterEach(() => {
    stop?.();
    stop = null;
  });

  /** Watches the store; `next(pred)` resolves with the first telling (from now) that satisfies it. */
  function watching(options: { debounceMs: number; maxDelayMs?: number }) {
    const told: { at: number; change: StoreChange }[] = [];
    const waiters: { pred: (c: StoreChange) => boolean; resolve: (c: StoreChange) => void }[] = [];
    stop = watchStore(
      home,
      (change) => {
        told.push({ at: Date.now(), change });
        for (const w of [...waiters])
          if (w.pred(change)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(change);
          }
      },
      options,
    );
    const next = (pred: (c: StoreChange) => boolean, what: string, ms = 10_000) =>
      new Promise<StoreChange>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not told within ${ms} ms: ${what}`)), ms);
        waiters.push({
          pred,
          resolve: (c) => {
            clearTimeout(timer);
            resolve(c);
          },
        });
      });
    return { told, next };
  }

  it('tells the episode whose trace was appended to, and once more when its version settled', async () => {
    const t = await openTrace(3);
    const w = watching({ debounceMs: 50 });
    const names = (c: StoreChange) => c.episodes.includes(t.episode);
    const first = w.next(names, 'the append');
    const appended = Date.now();
    appendFileSync(t.path, '{"partial":');
    await first;
    // The settle telling: a write of the same size in the same clock tick cannot hide past it.
    await w.next(names, 'the settle telling', SETTLE_MS + 5_000);
    expect(Date.now() - appended).toBeGreaterThanOrEqual(SETTLE_MS);
  }, 20_000);

  it('a trace rewritten thousands of times a second is told a bounded number of times, coalesced', async () => {
    const t = await openTrace(2);
    const w = watching({ debounceMs: 50, maxDelayMs: 400 });
    const text = readFileSync(t.path);
    let writes = 0;
    const started = Date.now();
    // About 1.5 s of rewrites without pause (the event loop turns between batches, so each
    // event reaches the watch as it would in a window's process).
    while (Date.now() - started < 1_500) {
      for (let i = 0; i < 100; i++) {
        writeFileSync(t.path, text);
        writes += 1;
      }
      await new Promise((r) => setImmediate(r));
    }
    const during = w.told.filter((x) => x.at <= Date.now()).length;
    // Thousands a second unloaded; hundreds on a loaded 2-core machine.
    expect(writes).toBeGreaterThan(300);
    // 50 ms, then waits doubling to 400 ms while the writes go on: a handful of tellings.
    expect(during).toBeGreaterThanOrEqual(1);
    expect(during).toBeLessThanOrEqual(8);
    expect(w.told.every((x) => x.change.episodes.length === 1 && x.change.episodes[0] === t.episode)).toBe(
      true,
    );
  }, 20_000);
});
