import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openEpisodeStore, type DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import type { BranchInfo } from '../../electron/engine/trace/trace-store.js';
import { TraceMemo } from '../../electron/services/trace-memo.js';
import { writeSampleEpisode } from '../support/traces.js';

// A closing branch's trace moves from .jsonl to .jsonl.gz: a read that chose the plain path
// just before the move must look again, not fail the window's reload of the ended episode.
describe('TraceMemo while a trace moves as its branch closes', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('asks for the path again once when the file it chose is gone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stepbox-memo-'));
    dirs.push(dir);
    const gz = join(dir, 'trace.jsonl.gz');
    writeFileSync(gz, 'closed');
    const paths = [join(dir, 'trace.jsonl'), gz];
    let reads = 0;
    const store = {
      // The first answer is the plain file, already moved; the second the .gz.
      currentTracePath: () => paths[Math.min(reads++, 1)]!,
    } as unknown as DiskEpisodeStore;
    const memo = new TraceMemo(store);
    const version = memo.version({ branch: 'b-1' } as BranchInfo);
    expect(version.startsWith(`${gz}:6:`)).toBe(true);
    expect(reads).toBe(2);
  });
});

// Right after a window opened a long trace, its library listings (and the open itself) asked for
// the branch's QA flags at once: each ran every rule over the 10,000 steps, five at a time.
describe('TraceMemo flags asked for again while they are computed', () => {
  it('one computation per branch and version, however many ask meanwhile; a new version computes again', async () => {
    const memo = new TraceMemo({} as DiskEpisodeStore);
    const info = { branch: 'b-1' } as BranchInfo;
    const at = { path: '/t', size: 1, mtime: 1, ctime: 1, ino: 1, settled: false };
    let computed = 0;
    const waiting: (() => void)[] = [];
    const finish = () => waiting.splice(0).forEach((r) => r());
    const compute = async () => {
      computed++;
      await new Promise<void>((r) => waiting.push(r));
      return [{ rule: 'loop', step: 2, severity: 'warn', message: 'x' }] as never;
    };
    const asks = [
      memo.flagsOf(info, at, compute),
      memo.flagsOf(info, at, compute),
      memo.flagsOf(info, at, compute),
    ];
    finish();
    const answers = await Promise.all(asks);
    expect(computed).toBe(1);
    expect(answers.map((a) => a.length)).toEqual([1, 1, 1]);
    // Each gets its own copy (a caller may change its list).
    expect(answers[0]).not.toBe(answers[1]);
    // Settled since: another version, computed again.
    const settled = memo.flagsOf(info, { ...at, settled: true }, compute);
    finish();
    await settled;
    expect(computed).toBe(2);
  });
});

// A trace opened right after it was written (an episode just ended) was read and checked under
// its unsettled version, then all again two seconds later: the same bytes now stand.
describe('TraceMemo across a trace settling', () => {
  const homes: string[] = [];
  afterEach(() => {
    vi.useRealTimers();
    for (const d of homes.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('keeps the trace read and the flags computed before it settled, while its bytes are the same', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-memo-settle-'));
    homes.push(home);
    const store = openEpisodeStore(home, { skipMarkInterrupted: true, onBranchClosed: () => undefined });
    const ep = await writeSampleEpisode(store, { steps: 2 });
    let reads = 0;
    const counting = Object.create(store) as DiskEpisodeStore;
    counting.readTrace = (info) => {
      reads++;
      return store.readTrace(info);
    };
    const memo = new TraceMemo(counting);
    const info = store.resolve(ep.branch);
    let computed = 0;
    const compute = async () => {
      computed++;
      return [];
    };
    const first = memo.read(info);
    const before = memo.version(info);
    await memo.flagsOf(info, memo.versionOfTrace(info, first), compute);
    expect([reads, computed]).toEqual([1, 1]);

    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    expect(memo.read(info)).toBe(first);
    expect(memo.version(info)).toBe(before);
    await memo.flagsOf(info, memo.versionOfTrace(info, first), compute);
    expect([reads, computed]).toEqual([1, 1]);
  });
});
