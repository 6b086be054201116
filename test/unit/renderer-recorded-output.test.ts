import { describe, expect, it } from 'vitest';
import { recordedOutput, wrapWords } from '../../renderer/src/model/recorded-output';
import { stepDetail } from '../support/renderer-fixtures';

describe('recorded terminal output of a step', () => {
  it('shows each command, its stdout and stderr with CR LF line ends, and a non-zero exit', () => {
    const d = stepDetail(3, 'line one\nline two');
    const r = d.calls[0].result;
    const detail = {
      ...d,
      calls: [{ ...d.calls[0], result: r && { ...r, exit_code: 2, stderr: 'boom\n' } }],
    };
    const text = recordedOutput(detail);
    expect(text).toContain('step 3 (recorded)');
    expect(text).toContain('$ echo 3');
    expect(text).toContain('line one\r\nline two\r\n');
    expect(text).toContain('boom\r\n');
    expect(text).toContain('[exit 2]');
  });

  it('shows the real result of an overridden call, tool errors, and a final answer', () => {
    const d = stepDetail(4);
    const real = {
      ok: false,
      error: { code: 'timeout' as const, message: 'took too long' },
      duration_ms: 9,
      bytes: 0,
    };
    const shown = { ok: true, stdout: 'fake', duration_ms: 0, bytes: 4 };
    const text = recordedOutput({
      ...d,
      calls: [{ ...d.calls[0], override: { real, shown } }],
      final: 'done',
    });
    expect(text).toContain('[timeout] took too long');
    expect(text).not.toContain('fake');
    expect(text).toContain('final answer:');
  });

  it('shows a non-shell call as a person reads it, not its JSON', () => {
    const d = stepDetail(5);
    const call = {
      ...d.calls[0].call,
      name: 'write_file',
      arguments: { path: 'notes.txt', content: 'hello world\n' },
    };
    const text = recordedOutput({ ...d, calls: [{ ...d.calls[0], call }] });
    expect(text).toContain('» write_file notes.txt (12 B)');
    expect(text).not.toContain('{"path"');
  });

  it('wraps a long line at its words for the width of the terminal, never inside a word that fits a line', () => {
    const d = stepDetail(3);
    const final = 'Installed requests into vendor/ and fetched data.json.';
    // "final answer: " takes 14 columns of the first line: 40 wide, "fetched" does not fit after "and".
    const text = recordedOutput({ ...d, calls: [], final }, 40);
    const lines = text
      // eslint-disable-next-line no-control-regex -- the colours dropped to read the words
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\r\n')
      .filter((l) => !l.startsWith('──'));
    expect(lines.slice(0, 2)).toEqual([
      'final answer: Installed requests into',
      'vendor/ and fetched data.json.',
    ]);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(40);
    // Unwrapped without a width (as before), so a caller that knows none gets the text whole.
    expect(recordedOutput({ ...d, calls: [], final })).toContain(final);
  });

  it('wrapWords: a word wider than the line is cut at the edge; a tab counts to its stop; blanks at a break go', () => {
    expect(wrapWords('abc defgh', 5)).toBe('abc\ndefgh');
    expect(wrapWords('a 0123456789ab', 5)).toBe('a\n01234\n56789\nab');
    expect(wrapWords('ab\tcd', 10)).toBe('ab\tcd');
    expect(wrapWords('ab\tcdefg', 10)).toBe('ab\ncdefg');
    expect(wrapWords('one two   ', 7)).toBe('one two');
    expect(wrapWords('xy', 10, 9)).toBe('\nxy');
    expect(wrapWords('anything', 0)).toBe('anything');
  });
});
