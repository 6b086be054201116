import { execFileSync } from 'node:child_process';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTerminal, type HumanCommand, type Terminal } from '../../electron/engine/docker/terminal.js';
import { docker, startPlainContainer, waitUntil } from '../support/cli-docker.js';

describe('live terminal (TTY exec)', () => {
  let container: Docker.Container;
  let term: Terminal;
  let output = '';
  const commands: HumanCommand[] = [];
  const onData = (tick: () => void) => term.onData(tick);
  const onCommand = (tick: () => void) => term.onCommand(tick);
  /** When the last line was reported (the host's and the sandbox's clocks are the kernel's one). */
  let reportedAt = 0;
  /**
   * Types a line and waits until the hook reports it, so each test starts at a prompt. As a
   * person does, it types at least 50 ms after the last prompt: the hook counts files changed up
   * to 20 ms before a command's start (file times come from a coarse clock), so a line sent
   * within 20 ms of the last command's end was credited with that command's files (a fast machine).
   */
  const type = async (line: string) => {
    const gap = reportedAt + 50 - performance.now();
    if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
    const before = commands.length;
    term.write(line + '\r');
    await waitUntil(() => commands.length > before, onCommand, `the hook to report "${line}"`);
    reportedAt = performance.now();
    // When its report reached the engine (which side of a snapshot's read it is on), a time
    // between the line typed and now; the rest is what is recorded.
    const { reportedAt: at, ...command } = commands[commands.length - 1];
    expect(at).toBeLessThanOrEqual(reportedAt);
    return command;
  };

  beforeAll(async () => {
    container = await startPlainContainer('docker-terminal');
    term = await openTerminal(container.id, { cols: 80, rows: 24, docker });
    term.onData((d) => (output += d));
    term.onCommand((c) => commands.push(c));
    await waitUntil(() => /\$ $/.test(output), onData, 'the first prompt');
    // A process of the agent's dates a file into the future, long before the person types: its
    // change time is then left 100 ms behind (the hook counts files changed up to 20 ms before a
    // command's start, and on a fast machine the first command followed within 20 ms).
    execFileSync('docker', [
      'exec',
      '-u',
      '1000',
      container.id,
      'sh',
      '-c',
      'echo planted > /workspace/dated.txt && touch -d 2099-01-01 /workspace/dated.txt && sleep 0.1',
    ]);
  });
  afterAll(async () => {
    await term?.close();
    await container?.remove({ force: true });
  });

  it('is a real TTY', async () => {
    const from = output.length;
    await type('tty');
    expect(output.slice(from)).toMatch(/\/dev\/pts\/\d+/);
  });

  it('applies a resize (stty size matches)', async () => {
    await term.resize(101, 33);
    const from = output.length;
    await type('stty size');
    expect(output.slice(from)).toMatch(/\b33 101\b/);
  });

  it('reports each typed command with its cwd and exit code, and strips the hook from the output', async () => {
    expect(await type('cd /tmp')).toEqual({ command: 'cd /tmp', cwd: '/tmp', exit_code: 0, files: [] });
    expect(await type('false')).toEqual({ command: 'false', cwd: '/tmp', exit_code: 1, files: [] });
    expect(await type("echo 'a;b' | wc -c")).toMatchObject({ command: "echo 'a;b' | wc -c", exit_code: 0 });
    expect(output).not.toContain('\u001b]6973;');
  });

  it('names the workspace files a command wrote, and none for a command that only read', async () => {
    const wrote = await type(
      'echo typed > /workspace/by-hand.txt; mkdir -p /workspace/d; echo x > /workspace/d/y',
    );
    expect([...(wrote.files ?? [])].sort()).toEqual(['by-hand.txt', 'd/y']);
    expect((await type('cat /workspace/by-hand.txt')).files).toEqual([]);
  });

  it('credits no command with a file the agent dated into the future (its change time says when it was written)', async () => {
    const wrote = await type('echo mine > /workspace/mine.txt');
    expect(wrote.files).toEqual(['mine.txt']);
  });

  it('names the files a command wrote on a bash without EPOCHREALTIME too (whole seconds), and keeps no mark where the agent could write it', async () => {
    // Unset, EPOCHREALTIME is an ordinary variable: the shell then marks the moment as a bash 4 does.
    await type('unset EPOCHREALTIME');
    const wrote = await type('echo again > /workspace/by-hand-4.txt');
    // Whole seconds: a file the test before wrote within the second may be named too.
    expect(wrote.files).toContain('by-hand-4.txt');
    // The mark is the shell's own variable, never a file in /tmp (the agent's to write).
    const listed = await type('ls -A /tmp | grep -c stepbox-command');
    expect(listed.exit_code).toBe(1);
  });

  it("records what the shell reported, not a report a program printed (it lacks the terminal's key)", async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    // What `cat` of a file the agent planted would print: the hook's sequence as it was before
    // it carried a key (a forged command the old filter recorded).
    const forged = `\\033]6973;1;0;${b64('/workspace')};${b64('  99  rm -rf tests\n')};\\007`;
    const before = commands.length;
    expect(await type(`printf '${forged}'`)).toMatchObject({ command: `printf '${forged}'`, exit_code: 0 });
    expect(commands.slice(before).map((c) => c.command)).toEqual([`printf '${forged}'`]);
    expect(output).not.toContain('\u001b]6973;');
  });

  it('reports an empty Enter as no command', async () => {
    const before = commands.length;
    const from = output.length;
    term.write('\r');
    await waitUntil(() => /\$ $/.test(output.slice(from)), onData, 'a new prompt');
    await type('true');
    expect(commands.slice(before).map((c) => c.command)).toEqual(['true']);
  });

  it('ends with an exit code when the shell exits', async () => {
    const ended = new Promise<number | null>((resolve) => term.onExit(resolve));
    term.write('exit 7\r');
    expect(await ended).toBe(7);
  });
});

describe('live terminal options', () => {
  it('starts in the given cwd with the given environment, and close() ends the shell', async () => {
    const container = await startPlainContainer('docker-terminal-options');
    try {
      const term = await openTerminal(container.id, {
        cols: 80,
        rows: 24,
        cwd: '/tmp',
        // TMPDIR and LD_*: what a secure (sealed) exec drops, put back by the launcher.
        env: { FOO: 'bar baz', TMPDIR: '/tmp', LD_LIBRARY_PATH: '/opt/x' },
        docker,
      });
      const commands: HumanCommand[] = [];
      let output = '';
      term.onData((d) => (output += d));
      term.onCommand((c) => commands.push(c));
      const exited = new Promise<number | null>((resolve) => term.onExit(resolve));
      await waitUntil(
        () => /\$ $/.test(output),
        (tick) => term.onData(tick),
        'the first prompt',
      );
      term.write('echo "[$FOO][$TMPDIR][$LD_LIBRARY_PATH]"\r');
      await waitUntil(
        () => commands.length === 1,
        (tick) => term.onCommand(tick),
        'the echo to be reported',
      );
      expect(commands[0]).toEqual({
        command: 'echo "[$FOO][$TMPDIR][$LD_LIBRARY_PATH]"',
        cwd: '/tmp',
        exit_code: 0,
        files: [],
        reportedAt: expect.any(Number),
      });
      expect(output).toContain('[bar baz][/tmp][/opt/x]');
      await term.close();
      await exited;
      // The hung-up shell leaves the container (only init and sleep remain); polled with a bound.
      const processes = async () => {
        const ps = await container.exec({ Cmd: ['ps', '-eo', 'comm='], AttachStdout: true });
        const stream = await ps.start({});
        let listing = '';
        stream.on('data', (c: Buffer) => (listing += c.toString('latin1')));
        await new Promise((resolve) => stream.on('end', resolve));
        return listing;
      };
      const deadline = Date.now() + 10_000;
      let listing = await processes();
      while (/\bbash\b/.test(listing) && Date.now() < deadline) listing = await processes();
      expect(listing).not.toMatch(/\bbash\b/);
    } finally {
      await container.remove({ force: true });
    }
  });
});
