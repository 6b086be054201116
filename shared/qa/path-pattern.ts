import { baseName, workspacePath } from './qa-input.js';

function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * True when a workspace path matches a pattern: `dir/` (everything under it), a glob
 * (`*`, `**`, `?`; without a slash it matches the base name), or an exact path (or a
 * directory containing the path).
 */
export function matchesPathPattern(path: string, pattern: string): boolean {
  const p = workspacePath(path);
  if (pattern.endsWith('/')) {
    const dir = workspacePath(pattern);
    return p === dir || p.startsWith(`${dir}/`) || p.includes(`/${dir}/`);
  }
  if (/[*?]/.test(pattern)) {
    const re = globToRegExp(workspacePath(pattern));
    return pattern.includes('/') ? re.test(p) : re.test(baseName(p));
  }
  const exact = workspacePath(pattern);
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
