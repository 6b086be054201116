import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import type { BranchInfo } from '../../electron/engine/trace/trace-store.js';
import { TraceMemo } from '../../electron/services/trace-memo.js';

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
