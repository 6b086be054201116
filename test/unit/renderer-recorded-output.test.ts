import { describe, expect, it } from 'vitest';
import { recordedOutput } from '../../renderer/src/model/recorded-output';
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
});
