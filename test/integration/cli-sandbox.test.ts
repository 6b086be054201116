import { containerMemoryBytes } from '../../electron/engine/docker/container-spec.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { describe, expect, it } from 'vitest';
import type { ToolResult } from '../../shared/tool-result.js';
import { parseJsonOutput, runCli, startCli } from '../support/cli.js';
import { docker } from '../support/cli-docker.js';

describe('stepbox sandbox exec', () => {
  it('runs as a non-root user and prints the tool result alone with --json', async () => {
    const run = await runCli(['sandbox', 'exec', '--json', '--', 'id', '-u']);
    const result = parseJsonOutput<ToolResult>(run);
    expect(run.code, run.stderr).toBe(0);
    expect(result).toMatchObject({ ok: true, exit_code: 0 });
    expect(Number(result.stdout?.trim())).toBeGreaterThan(0);
    expect(result.duration_ms).toBeGreaterThan(0);
  });

  it('shell-quotes several arguments so each reaches the program unchanged', async () => {
    const run = await runCli(['sandbox', 'exec', '--', 'printf', '%s\\n', 'a b', 'c']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('a b\nc\n');
  });

  it('runs one argument as a shell command line', async () => {
    const run = await runCli(['sandbox', 'exec', '--json', '--', 'cd /tmp && echo "$PWD" | tr a-z A-Z']);
    expect(parseJsonOutput<ToolResult>(run).stdout).toBe('/TMP\n');
  });

  it('reports a timeout as error.code "timeout" and exits 1', async () => {
    const run = await runCli(['sandbox', 'exec', '--json', '--timeout', '1', '--', 'sleep 30; echo never']);
    const result = parseJsonOutput<ToolResult>(run);
    expect(run.code).toBe(1);
    expect(result.ok).toBe(false);
    expect(result.error?.code).toBe('timeout');
    expect(result.stdout ?? '').not.toContain('never');
    expect(run.durationMs).toBeLessThan(20_000);
  });

  it('exits 1 on a non-zero exit code, which is still an ok result', async () => {
    const run = await runCli(['sandbox', 'exec', '--json', '--', 'exit 4']);
    expect(run.code).toBe(1);
    expect(parseJsonOutput<ToolResult>(run)).toMatchObject({ ok: true, exit_code: 4 });
  });

  it('applies --memory and --pids to the sandbox', async () => {
    const run = await runCli([
      'sandbox',
      'exec',
      '--memory',
      '300m',
      '--pids',
      '50',
      '--',
      'cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max; cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // The cgroup gets the memory limit plus the tmpfs sizes (a full /workspace is disk_full).
    const memory = containerMemoryBytes(defaultSandboxConfig({ memory: '300m' }).limits);
    // 300m memory + workspace 1g + tmp 256m + home 512m (the defaults).
    expect(memory).toBe((300 + 1024 + 256 + 512) * 1024 ** 2);
    expect(run.stdout.split('\n').slice(0, 2)).toEqual(['50', String(memory)]);
  });

  it('exits 3 naming the fix when Docker is unreachable', async () => {
    const run = await runCli(['sandbox', 'exec', '--', 'true'], {
      env: { DOCKER_HOST: 'tcp://127.0.0.1:1' },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/Fix: /);
  });

  it('exits 2 without a command', async () => {
    expect((await runCli(['sandbox', 'exec', '--json'])).code).toBe(2);
  });
});

describe('stepbox sandbox shell', () => {
  it('runs piped input in a TTY shell and exits with the shell exit code', async () => {
    const run = await runCli(['sandbox', 'shell'], {
      input: 'tty\nid -u\nexit 3\n',
      env: { STEPBOX_LOG: 'info' },
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toMatch(/\/dev\/pts\/\d+/);
    expect(run.stdout).toMatch(/[^0-9]1000\r?\n/);
    expect(run.stderr).toContain(
      'human_command {"command":"id -u","cwd":"/workspace","exit_code":0,"files":[]}',
    );
  });

  // Piped input without `exit` ends the shell when it ends, as `bash < file` does: with the
  // last command's status, running an unterminated last line, and after a program that read
  // to the end of the input itself.
  it.each([
    ['no exit', 'echo one\nfalse\n', 1, 'one'],
    ['no final newline', 'echo two', 0, 'two'],
    ['a reader of stdin', 'cat\nthree\n', 0, 'three'],
  ])('ends at the end of piped input (%s)', async (_, input, code, printed) => {
    const run = await runCli(['sandbox', 'shell'], { input, timeoutMs: 60_000 });
    expect(run.code, run.stderr).toBe(code);
    expect(run.stdout).toContain(printed);
  });
});

describe('Ctrl+C during sandbox exec', () => {
  it('destroys the sandbox and exits 130', async () => {
    const { child, done } = startCli(['sandbox', 'exec', '--', 'sleep 60']);
    const mine = async () =>
      (await docker.listContainers({ all: true, filters: { label: ['stepbox=1'] } })).filter(
        (c) => (JSON.parse(c.Labels['stepbox.owner'] ?? '{}') as { pid?: number }).pid === child.pid,
      );
    // Wait (bounded) for its sandbox to exist, then interrupt.
    const deadline = Date.now() + 20_000;
    while ((await mine()).length === 0) {
      if (Date.now() > deadline) throw new Error('the sandbox never appeared');
      await new Promise((r) => setImmediate(r));
    }
    child.kill('SIGINT');
    const run = await done;
    expect(run.code).toBe(130);
    expect(run.stderr).toContain('interrupted; destroying the sandbox');
    expect(await mine()).toEqual([]);
  });
});
