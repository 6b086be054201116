import { describe, expect, it } from 'vitest';
import { normalizeCall } from '../../shared/qa/normalize-call.js';
import { shellWords } from '../../shared/qa/shell-words.js';

const shell = (command: string) => normalizeCall('execute_shell', { command });

describe('shellWords', () => {
  it('removes quoting that does not change the words', () => {
    expect(shellWords(`echo "a  b"`)).toEqual(['echo', 'a  b']);
    expect(shellWords(`echo 'a  b'`)).toEqual(['echo', 'a  b']);
    expect(shellWords(`echo a\\ \\ b`)).toEqual(['echo', 'a  b']);
    expect(shellWords(`echo "x\\"y" 'it''s'`)).toEqual(['echo', 'x"y', 'its']);
  });
  it('splits control operators and keeps fd redirections apart from arguments', () => {
    expect(shellWords('ls a;ls b|wc -l')).toEqual(['ls', 'a', ';', 'ls', 'b', '|', 'wc', '-l']);
    expect(shellWords('cmd 2>&1')).toEqual(['cmd', '2>&', '1']);
    expect(shellWords('cmd 2 >&1')).toEqual(['cmd', '2', '>&', '1']);
  });
  it('drops comments and returns null for unbalanced quotes', () => {
    expect(shellWords('ls # list')).toEqual(['ls']);
    expect(shellWords('echo "open')).toBeNull();
    expect(shellWords("echo 'open")).toBeNull();
  });
});

describe('normalizeCall', () => {
  it('ignores JSON key order', () => {
    expect(normalizeCall('write_file', { path: 'a', content: 'x' })).toBe(
      normalizeCall('write_file', { content: 'x', path: 'a' }),
    );
  });
  it('ignores runs of whitespace and equivalent quoting', () => {
    expect(shell('echo "a  b"')).toBe(shell("echo 'a  b'"));
    expect(shell('ls   -la    /workspace ')).toBe(shell('ls -la /workspace'));
    expect(shell('cat "x.py"')).toBe(shell('cat x.py'));
  });
  it('never ignores the order of shell words or quoting that changes them', () => {
    expect(shell('ls a b')).not.toBe(shell('ls b a'));
    expect(shell('echo "a b"')).not.toBe(shell('echo a b'));
    expect(shell('echo "a  b"')).not.toBe(shell('echo "a b"'));
  });
  it('tells different tools and values apart', () => {
    expect(normalizeCall('read_file', { path: 'a' })).not.toBe(normalizeCall('list_dir', { path: 'a' }));
    expect(normalizeCall('memory_write', { key: 'k', value: 1 })).not.toBe(
      normalizeCall('memory_write', { key: 'k', value: '1' }),
    );
  });
});
