import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../electron/cli/episode-cli.js';
import { resultLine } from '../../shared/step-summary.js';
import type { TraceEvent } from '../../shared/trace-events.js';

const result = (r: Record<string, unknown>) => ({ duration_ms: 1, bytes: 0, ...r }) as never;

describe('one formatter for the CLI event lines', () => {
  it('words a tool result once: outcome, then the error message or the start of stdout', () => {
    expect(resultLine(result({ ok: true, exit_code: 3, stdout: '  hi\n there \n' }))).toBe(
      'exit 3  hi there',
    );
    expect(resultLine(result({ ok: true, stdout: 'a'.repeat(100) }), 10)).toBe(`ok  ${'a'.repeat(9)}…`);
    expect(resultLine(result({ ok: true, exit_code: 0 }))).toBe('exit 0');
    expect(resultLine(result({ ok: false, error: { code: 'timeout', message: 'too\nslow' } }))).toBe(
      'error timeout: too slow',
    );
  });

  it('the live event lines use it, and the shared argument summary', () => {
    const call = {
      type: 'tool_call',
      step: 2,
      name: 'execute_shell',
      arguments: { command: 'ls\n-la' },
    } as unknown as TraceEvent;
    expect(describeEvent(call)).toBe('step 2  → execute_shell {command: "ls\\n-la"}');
    const res = {
      type: 'tool_result',
      step: 2,
      name: 'execute_shell',
      result: result({ ok: true, exit_code: 1, stdout: 'boom\n', fallback: true }),
    } as unknown as TraceEvent;
    expect(describeEvent(res)).toBe('step 2  ← execute_shell exit 1  boom  [fallback]');
  });
});
