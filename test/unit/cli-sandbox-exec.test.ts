import { describe, expect, it } from 'vitest';
import { UsageError } from '../../electron/cli/command.js';
import { commandLine, execTask, parseExecArgs } from '../../electron/cli/sandbox-exec.js';

describe('sandbox exec arguments', () => {
  it('keeps one argument as a command line and quotes several', () => {
    expect(commandLine(['echo $HOME && ls'])).toBe('echo $HOME && ls');
    expect(commandLine(['printf', '%s\\n', 'a b', "it's", '$x'])).toBe(
      `printf '%s\\n' 'a b' 'it'\\''s' '$x'`,
    );
  });

  it('parses flags before -- and everything after it as the command', () => {
    expect(
      parseExecArgs(['--json', '--timeout', '2.5', '--memory', '512m', '--pids', '64', '--', 'ls', '--json']),
    ).toEqual({
      json: true,
      timeoutS: 2.5,
      memory: '512m',
      pids: 64,
      command: 'ls --json',
    });
  });

  it('rejects bad flags and a missing command as usage errors', () => {
    expect(() => parseExecArgs([])).toThrow(UsageError);
    expect(() => parseExecArgs(['--timeout', '0', '--', 'true'])).toThrow(/--timeout/);
    expect(() => parseExecArgs(['--memory', 'lots', '--', 'true'])).toThrow(/--memory/);
    expect(() => parseExecArgs(['--pids', '1.5', '--', 'true'])).toThrow(/--pids/);
    expect(() => parseExecArgs(['--bogus', '--', 'true'])).toThrow(UsageError);
  });

  it('raises the tool and hard step timeouts to a long --timeout so it is the effective one', () => {
    const long = execTask({ json: false, command: 'true', timeoutS: 300 });
    expect(long.timeouts.tools.execute_shell).toBe(300);
    expect(long.timeouts.step_hard).toBe(300);
    const plain = execTask({ json: false, command: 'true', memory: '2g', pids: 10 });
    expect(plain.timeouts.tools.execute_shell).toBe(60);
    expect(plain.sandbox.limits).toMatchObject({ memory: '2g', pids: 10, cpus: 1 });
    expect(plain.tools).toEqual(['execute_shell']);
  });
});
