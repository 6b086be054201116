import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

/** The folders whose every sub-folder the layout must name. */
const COVERED = ['electron/engine', 'electron/services', 'electron/cli', 'renderer/src', 'shared', 'test'];

/** A path in the layout's text: a folder (`docker/`) or a file with a code ending (`ipc.ts`). */
const PATH =
  /(?<![\w.$/-])\.?[A-Za-z0-9_-][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_.-]+)*(?:\/|\.(?:ts|cts|js|py|sh))(?![\w/])/g;

/** The fenced block under `## Project layout`. */
function layoutBlock(readme: string): string[] {
  const at = readme.indexOf('## Project layout');
  expect(at, 'README has a "## Project layout" section').toBeGreaterThanOrEqual(0);
  const open = readme.indexOf('```\n', at) + 4;
  return readme.slice(open, readme.indexOf('```\n', open)).split('\n').filter(Boolean);
}

/**
 * Every path the layout names, resolved: a line's first column is a path from the root;
 * a path after it is from the root when its first segment is a root entry, else from the
 * line's folder (a continuation line, indented, keeps the folder of the line above).
 */
function layoutPaths(lines: readonly string[]): string[] {
  const roots = new Set(readdirSync(PROJECT_ROOT));
  const out: string[] = [];
  let base = '.';
  for (const line of lines) {
    let rest = line;
    if (!/^\s/.test(line)) {
      const first = line.split(/\s+/)[0];
      out.push(first);
      base = first.endsWith('/') ? first : dirname(first);
      rest = line.slice(first.length);
    }
    for (const [token] of rest.matchAll(PATH)) {
      out.push(roots.has(token.split('/')[0]) && token.includes('/') ? token : posix.join(base, token));
    }
  }
  return out;
}

describe("README's project layout matches the tree", () => {
  const paths = layoutPaths(layoutBlock(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')));

  it('every folder and file it names exists', () => {
    expect(paths.length).toBeGreaterThan(20);
    const missing = paths.filter((p) => !existsSync(join(PROJECT_ROOT, p)));
    expect(missing).toEqual([]);
  });

  it(`names every folder of ${COVERED.join(', ')}`, () => {
    const named = new Set(paths.map((p) => p.replace(/\/$/, '')));
    const unnamed = COVERED.flatMap((dir) =>
      readdirSync(join(PROJECT_ROOT, dir))
        .filter((e) => statSync(join(PROJECT_ROOT, dir, e)).isDirectory())
        .map((e) => `${dir}/${e}`)
        .filter((p) => !named.has(p)),
    );
    expect(unnamed).toEqual([]);
  });

  it('a folder that does not exist would be caught', () => {
    const roots = layoutPaths(['electron/engine/     docker/, nowhere/', 'shared/   contract/']);
    expect(roots).toEqual([
      'electron/engine/',
      'electron/engine/docker/',
      'electron/engine/nowhere/',
      'shared/',
      'shared/contract/',
    ]);
    expect(roots.filter((p) => !existsSync(join(PROJECT_ROOT, p)))).toEqual(['electron/engine/nowhere/']);
  });
});
