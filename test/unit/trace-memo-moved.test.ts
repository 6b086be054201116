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
