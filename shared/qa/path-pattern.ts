import picomatch from 'picomatch/posix.js';
import { baseName, workspacePath } from './qa-input.js';

/** Compiled globs by pattern: rules run over every path of every step. */
const matchers = new Map<string, (path: string) => boolean>();

/** A glob compiled by picomatch (a maintained matcher: `**` spans zero or more folders, braces, classes, extglobs). */
function globMatcher(glob: string): (path: string) => boolean {
  let m = matchers.get(glob);
  if (!m) {
    m = picomatch(glob, { dot: true });
    matchers.set(glob, m);
  }
  return m;
}

/**
 * True when a workspace path matches a pattern: `dir/` (everything under it), a glob
 * (picomatch syntax: `*`, `**`, `?`, `{a,b}`, `[ab]`; without a slash it matches the
 * base name), or an exact path (or a directory containing the path).
 */
export function matchesPathPattern(path: string, pattern: string, workdir?: string): boolean {
  const p = workspacePath(path, workdir);
  if (pattern.endsWith('/')) {
    const dir = workspacePath(pattern, workdir);
    return p === dir || p.startsWith(`${dir}/`) || p.includes(`/${dir}/`);
  }
  if (picomatch.scan(pattern).isGlob) {
    const glob = workspacePath(pattern, workdir);
    return pattern.includes('/') ? globMatcher(glob)(p) : globMatcher(glob)(baseName(p));
  }
  const exact = workspacePath(pattern, workdir);
  return p === exact || p.startsWith(exact + '/');
}

/** Common test-file patterns, protected by default. */
export const DEFAULT_PROTECTED_PATTERNS: readonly string[] = [
  'test_*.py',
  '*_test.py',
  'conftest.py',
  '*_test.go',
  '*.test.js',
  '*.test.ts',
  '*.spec.js',
  '*.spec.ts',
  'tests/',
  'test/',
  '__tests__/',
];
