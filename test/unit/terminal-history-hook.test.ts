import { describe, expect, it } from 'vitest';
import { HistoryHookFilter } from '../../electron/engine/docker/terminal.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const hook = (pid: number, exit: number, cwd: string, history: string) =>
  `\u001b]6973;${pid};${exit};${b64(cwd)};${b64(history)}\u0007`;

describe('HistoryHookFilter', () => {
  it('strips a hook sequence and reports the command, cwd and exit code', () => {
    const f = new HistoryHookFilter();
    const out = f.push(
      `hello\r\n${hook(42, 3, '/workspace', '    7  make test\n')}agent@sandbox:/workspace$ `,
    );
    expect(out.text).toBe('hello\r\nagent@sandbox:/workspace$ ');
    expect(out.commands).toEqual([{ command: 'make test', cwd: '/workspace', exit_code: 3 }]);
    expect(out.pid).toBe(42);
  });

  it('reports the workspace files a command wrote, relative to /workspace', () => {
    const f = new HistoryHookFilter();
    const files = b64('/workspace/a.txt\n/workspace/sub/b.py\n');
    const out = f.push(`\u001b]6973;1;0;${b64('/workspace')};${b64('  3  make\n')};${files}\u0007`);
    expect(out.commands).toEqual([
      { command: 'make', cwd: '/workspace', exit_code: 0, files: ['a.txt', 'sub/b.py'] },
    ]);
  });

  it('reassembles a sequence split across chunks at any byte', () => {
    const whole = `a${hook(9, 0, '/tmp', '  1  ls -la\n')}b`;
    for (let cut = 1; cut < whole.length; cut++) {
      const f = new HistoryHookFilter();
      const first = f.push(whole.slice(0, cut));
      const second = f.push(whole.slice(cut));
      expect(first.text + second.text).toBe('ab');
      expect([...first.commands, ...second.commands]).toEqual([
        { command: 'ls -la', cwd: '/tmp', exit_code: 0 },
      ]);
    }
  });

  it('treats the same history number again as an empty Enter, and an empty history as none', () => {
    const f = new HistoryHookFilter();
    expect(f.push(hook(1, 0, '/w', '')).commands).toEqual([]);
    expect(f.push(hook(1, 0, '/w', '  5  echo hi\n')).commands).toHaveLength(1);
    expect(f.push(hook(1, 0, '/w', '  5  echo hi\n')).commands).toEqual([]);
    expect(f.push(hook(1, 0, '/w', '  6  echo hi\n')).commands).toEqual([
      { command: 'echo hi', cwd: '/w', exit_code: 0 },
    ]);
  });

  it('keeps multi-line commands whole and leaves other escape sequences alone', () => {
    const f = new HistoryHookFilter();
    const out = f.push(`\u001b]0;title\u0007${hook(1, 0, '/w', '  2  for i in 1 2; do\n echo $i\ndone\n')}`);
    expect(out.text).toBe('\u001b]0;title\u0007');
    expect(out.commands[0].command).toBe('for i in 1 2; do\n echo $i\ndone');
  });
});
