import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProblemAt } from '../support/cli.js';

// CLI tests run dist/: a build older than the source would test yesterday's code and pass.
describe('CLI tests refuse a stale build', () => {
  const roots: string[] = [];
  afterEach(() => roots.splice(0).forEach((r) => rmSync(r, { recursive: true, force: true })));

  /** A checkout whose sources are at `sourceTime` and whose build info is at `builtTime` (seconds). */
  function checkout(sourceTime: number, builtTime: number): string {
    const root = mkdtempSync(join(tmpdir(), 'stepbox-stale-'));
    roots.push(root);
    const write = (path: string, at: number) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), at, at);
    };
    write('dist/electron/cli-main.js', builtTime);
    for (const p of ['shared', 'engine', 'electron']) write(`dist/.tsbuild/${p}.tsbuildinfo`, builtTime);
    write('shared/a.ts', 1000);
    write('electron/cli.ts', 1000);
    write('electron/engine/deep/b.ts', sourceTime);
    return root;
  }

  it('accepts a build newer than every source', () => {
    expect(buildProblemAt(checkout(1000, 2000))).toBeNull();
  });

  it('names the source that is newer than its project build, and the fix', () => {
    expect(buildProblemAt(checkout(3000, 2000))).toBe(
      'the CLI in dist/ is older than electron/engine/deep/b.ts: run `npx tsc -b` (npm test builds first)',
    );
  });

  it('says when there is no build at all', () => {
    const root = checkout(1000, 2000);
    rmSync(join(root, 'dist'), { recursive: true });
    expect(buildProblemAt(root)).toMatch(/not built: run `npx tsc -b`/);
  });
});
