import { describe, expect, it } from 'vitest';
import { HistoryHookFilter } from '../../electron/engine/docker/terminal.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const KEY = 'c0ffee';
const hook = (pid: number, exit: number, cwd: string, history: string, key = KEY) =>
  `\u001b]6973;${key};${pid};${exit};${b64(cwd)};${b64(history)}\u0007`;
/** A filter of a terminal with key KEY in which the person has run `lines` lines. */
const filter = (lines = 1) => {
  const f = new HistoryHookFilter('/workspace', KEY);
  f.typed('\r'.repeat(lines));
  return f;
};

describe('HistoryHookFilter', () => {
  it('strips a hook sequence and reports the command, cwd and exit code', () => {
    const f = filter();
    const out = f.push(
      `hello\r\n${hook(42, 3, '/workspace', '    7  make test\n')}agent@sandbox:/workspace$ `,
    );
    expect(out.text).toBe('hello\r\nagent@sandbox:/workspace$ ');
    expect(out.commands).toEqual([{ command: 'make test', cwd: '/workspace', exit_code: 3 }]);
    expect(out.pid).toBe(42);
  });

  it('reports the workspace files a command wrote, relative to /workspace', () => {
    const f = filter();
    const files = b64('/workspace/a.txt\n/workspace/sub/b.py\n');
    const out = f.push(`\u001b]6973;${KEY};1;0;${b64('/workspace')};${b64('  3  make\n')};${files}\u0007`);
    expect(out.commands).toEqual([
      { command: 'make', cwd: '/workspace', exit_code: 0, files: ['a.txt', 'sub/b.py'] },
    ]);
  });

  it('reassembles a sequence split across chunks at any byte', () => {
    const whole = `a${hook(9, 0, '/tmp', '  1  ls -la\n')}b`;
    for (let cut = 1; cut < whole.length; cut++) {
      const f = filter();
      const first = f.push(whole.slice(0, cut));
      const second = f.push(whole.slice(cut));
      expect(first.text + second.text).toBe('ab');
      expect([...first.commands, ...second.commands]).toEqual([
        { command: 'ls -la', cwd: '/tmp', exit_code: 0 },
      ]);
    }
  });

  it('treats the same history number again as an empty Enter, and an empty history as none', () => {
    const f = filter(0);
    expect(f.push(hook(1, 0, '/w', '')).commands).toEqual([]);
    f.typed('echo hi\r');
    expect(f.push(hook(1, 0, '/w', '  5  echo hi\n')).commands).toHaveLength(1);
    f.typed('\r');
    expect(f.push(hook(1, 0, '/w', '  5  echo hi\n')).commands).toEqual([]);
    f.typed('\u001b[Aecho hi\r');
    expect(f.push(hook(1, 0, '/w', '  6  echo hi\n')).commands).toEqual([
      { command: 'echo hi', cwd: '/w', exit_code: 0 },
    ]);
  });

  it('reports a line typed before the first prompt (the shell was still starting): that prompt follows no Enter', () => {
    const f = new HistoryHookFilter('/workspace', KEY);
    f.typed('tty\r');
    expect(f.push(hook(1, 0, '/w', '')).commands).toEqual([]);
    expect(f.push(hook(1, 0, '/w', '  1  tty\n')).commands).toEqual([
      { command: 'tty', cwd: '/w', exit_code: 0 },
    ]);
  });

  it('keeps multi-line commands whole and leaves other escape sequences alone', () => {
    const f = filter();
    const out = f.push(`\u001b]0;title\u0007${hook(1, 0, '/w', '  2  for i in 1 2; do\n echo $i\ndone\n')}`);
    expect(out.text).toBe('\u001b]0;title\u0007');
    expect(out.commands[0].command).toBe('for i in 1 2; do\n echo $i\ndone');
  });

  it("refuses a sequence without the terminal's key (a program printed it): no command, no pid, still stripped", () => {
    const f = filter();
    // What `cat` of a file the agent wrote prints, then the shell's own report of the cat.
    const planted = hook(1, 0, '/workspace', '  9  rm -rf tests\n', 'guessed');
    const out = f.push(
      `${planted}agent@sandbox:/workspace$ ${hook(42, 0, '/workspace', '  3  cat notes.txt\n')}`,
    );
    expect(out.text).toBe('agent@sandbox:/workspace$ ');
    expect(out.commands).toEqual([{ command: 'cat notes.txt', cwd: '/workspace', exit_code: 0 }]);
    expect(out.pid).toBe(42);
    expect(out.refused).toBe(1);
    // Without the key its pid is not taken either (closing the terminal hangs up that pid).
    expect(f.push(hook(7, 0, '/w', '', 'guessed')).pid).toBeUndefined();
  });

  it('reports no more commands than the person ran lines, even with the key (a flood from the sandbox)', () => {
    const f = filter(2);
    const flood = Array.from({ length: 1000 }, (_, i) => hook(1, 0, '/w', `  ${i + 10}  forged ${i}\n`)).join(
      '',
    );
    const out = f.push(flood);
    expect(out.commands.map((c) => c.command)).toEqual(['forged 0', 'forged 1']);
    expect(out.refused).toBe(998);
    f.typed('ls\r');
    expect(f.push(hook(1, 0, '/w', '  2000  ls\n')).commands).toEqual([
      { command: 'ls', cwd: '/w', exit_code: 0 },
    ]);
  });
});
