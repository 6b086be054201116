import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TraceEventOf } from '../../shared/trace-events.js';
import type { Task } from '../../shared/task.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { restoreSandbox } from '../../electron/engine/harness/restore-sandbox.js';
import { runVerifier } from '../../electron/engine/harness/verifier.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import { FORGE_ATTEMPT, SHELL_ATTACK, TERMINAL_ATTACK } from '../../electron/engine/sandbox/selftest.js';
import { openTerminal, type HumanCommand, type Terminal } from '../../electron/engine/docker/terminal.js';
import { docker as dockerApi, waitUntil } from '../support/cli-docker.js';
import { describeDocker, useTestProvider } from '../support/docker.js';

const execFileAsync = promisify(execFile);

/** The sandbox image with a PATH that lists directories the agent can write first. */
const WRITABLE_PATH_IMAGE = `stepbox-test-writable-path:${process.pid}`;
const WRITABLE_PATH =
  '/home/agent/bin:/workspace/bin:/tmp/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const ALWAYS_FAILS = {
  verifier: { command: "python3 -c 'import sys; sys.exit(1)'", timeout: 30 },
} as unknown as Task;

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' }).trim();
}

/** Runs a command as root in the container, outside the helper (the test's own hand). */
function asRoot(sb: DockerSandbox, script: string): string {
  return docker('exec', '-u', '0:0', '-w', '/', sb.id, '/bin/sh', '-c', script);
}

describeDocker('sandbox trust: nothing the agent writes reaches root or the verdict', () => {
  const provider = useTestProvider();

  const sh = async (sb: DockerSandbox, command: string) => {
    const r = await sb.exec({ command, timeoutMs: 30_000 });
    expect(r.error).toBeUndefined();
    return r;
  };

  beforeAll(async () => {
    const base = docker('create', SANDBOX_IMAGE);
    try {
      docker('commit', '--change', `ENV PATH=${WRITABLE_PATH}`, base, WRITABLE_PATH_IMAGE);
    } finally {
      docker('rm', '-f', base);
    }
  });

  afterAll(async () => {
    docker('rmi', '-f', WRITABLE_PATH_IMAGE);
  });

  it('an always-failing verifier fails, and no planted file runs, in the verifier or a restarted helper (the class)', async () => {
    // An image whose PATH lists agent-writable directories first: the fake python3 and bash
    // planted there must be found by nothing started as root, nor by the verifier.
    const sb = (await provider().create({
      ...defaultSandboxConfig(),
      image: WRITABLE_PATH_IMAGE,
    })) as DockerSandbox;
    try {
      const planted = await sh(sb, FORGE_ATTEMPT);
      expect(planted.stdout!).toContain('planted');
      expect(planted.stdout!).not.toContain('wrote-ld.so.preload');
      // The agent's own python3 is now the fake: the plant works as the agent would see it.
      expect((await sh(sb, 'command -v python3')).stdout!.trim()).toBe('/home/agent/bin/python3');

      const verdict = await runVerifier(ALWAYS_FAILS, sb);
      expect(verdict).toMatchObject({ success: false, exit_code: 1 });
      expect(verdict!.stderr).not.toMatch(/ld\.so/);

      // The helper started again while every planted file is there (its exec died: here,
      // killed by hand) must be the isolated root helper, and run nothing of the agent's.
      asRoot(
        sb,
        'for p in /proc/[0-9]*; do if tr "\\0" " " < $p/cmdline | grep -q "^/opt/stepbox/runtime/lib/ld.so .*/python3 -I -S -c import os, sys"; then kill -9 ${p#/proc/}; fi; done',
      );
      const after = await sb.exec({ command: 'echo after', timeoutMs: 30_000 });
      if (after.error) expect(after.error.code).toBe('session_restarted');
      expect((await sh(sb, 'echo again')).stdout).toBe('again\n');
      expect(sb.isolated).toBe(true);
      const again = await runVerifier(ALWAYS_FAILS, sb);
      expect(again).toMatchObject({ success: false, exit_code: 1 });

      expect(asRoot(sb, 'ls -A /tmp | grep pwned || true')).toBe('');
    } finally {
      await sb.destroy();
    }
  });

  it("the window's terminal starts the system bash, not one the agent put on PATH", async () => {
    const sb = (await provider().create({
      ...defaultSandboxConfig(),
      image: WRITABLE_PATH_IMAGE,
    })) as DockerSandbox;
    let term: Terminal | undefined;
    try {
      await sh(sb, FORGE_ATTEMPT);
      term = await openTerminal(sb.id, { cols: 80, rows: 24, docker: dockerApi });
      let output = '';
      let commands = 0;
      term.onData((d) => (output += d));
      term.onCommand(() => commands++);
      await waitUntil(
        () => /\$ $/.test(output),
        (t) => term!.onData(t),
        'the first prompt',
        30_000,
      );
      term.write('echo "shell=$BASH"\r');
      await waitUntil(
        () => commands > 0,
        (t) => term!.onCommand(t),
        'the command',
        30_000,
      );
      expect(output).toMatch(/shell=\/(usr\/)?bin\/bash/);
      expect(asRoot(sb, 'ls -A /tmp | grep pwned || true')).toBe('');
    } finally {
      await term?.close();
      await sb.destroy();
    }
  });

  it("the window's terminal is out of the agent's reach: no process of its own can read its key, type into it or print into it", async () => {
    const sb = await provider().create(defaultSandboxConfig());
    let term: Terminal | undefined;
    try {
      term = await openTerminal(sb.id, { cols: 80, rows: 24, docker: dockerApi });
      let output = '';
      let commands = 0;
      term.onData((d) => (output += d));
      term.onCommand(() => commands++);
      const type = async (line: string) => {
        const [before, from] = [commands, output.length];
        term!.write(line + '\r');
        // Ticked by both: a command is reported after the chunk that ends with its prompt.
        await waitUntil(
          () => commands > before && /\$ $/.test(output),
          (t) => {
            const offs = [term!.onData(t), term!.onCommand(t)];
            return () => offs.forEach((off) => off());
          },
          `"${line}" to be reported`,
          30_000,
        );
        return output.slice(from);
      };
      await waitUntil(
        () => /\$ $/.test(output),
        (t) => term!.onData(t),
        'the first prompt',
        30_000,
      );
      // The person's shell is the agent's user, HOME and all; a program it starts holds no key.
      const seen = await type('echo "ids=$(id -u)/$(id -g)/$(id -G) home=$HOME keys=$(env | grep -c 6973)"');
      expect(seen).toContain('ids=1000/1000/1000 home=/home/agent keys=0');
      // The agent's own code (a tool call, from outside the terminal's session) attacks the class.
      const r = await sh(sb, TERMINAL_ATTACK);
      const report = JSON.parse(r.stdout!.trim().split('\n').pop()!) as { shells: number; reached: string[] };
      expect(report.shells).toBeGreaterThan(0);
      expect(report.reached).toEqual([]);
      // Nothing reached the terminal: the next line typed is the next command, alone.
      const after = await type('echo still-mine');
      expect(after).toContain('still-mine');
      expect(output).not.toContain('forged');
    } finally {
      await term?.close();
      await sb.destroy();
    }
  });

  it("a person's terminal command is not credited alone with files the agent's processes could have written meanwhile (the class)", async () => {
    const sb = await provider().create(defaultSandboxConfig());
    let term: Terminal | undefined;
    try {
      term = await openTerminal(sb.id, {
        cols: 200,
        rows: 24,
        docker: dockerApi,
        writers: (exclude) => sb.writers!(exclude),
      });
      let output = '';
      const commands: HumanCommand[] = [];
      term.onData((d) => (output += d));
      term.onCommand((c) => commands.push(c));
      const ticks = (t: () => void) => {
        const offs = [term!.onData(t), term!.onCommand(t)];
        return () => offs.forEach((off) => off());
      };
      /** Sends a line; `meanwhile` runs once the shell has it (its echo is back), then its report is awaited. */
      const type = async (line: string, meanwhile?: () => Promise<unknown>) => {
        const [before, from] = [commands.length, output.length];
        term!.write(line + '\r');
        if (meanwhile) {
          await waitUntil(() => output.slice(from).includes(line), ticks, `"${line}" to be echoed`, 30_000);
          await meanwhile();
        }
        await waitUntil(() => commands.length > before, ticks, `"${line}" to be reported`, 30_000);
        return commands[commands.length - 1];
      };
      await waitUntil(
        () => /\$ $/.test(output),
        (t) => term!.onData(t),
        'the first prompt',
        30_000,
      );

      // Alone, and beside a job of the person's own: the files are theirs, nothing else is named.
      const alone = await type('echo mine > mine.txt');
      expect(alone.files).toEqual(['mine.txt']);
      expect(alone.others).toBeUndefined();
      await type('sleep 30 & echo started');
      const ownJob = await type('echo own > own.txt');
      expect(ownJob.files).toEqual(['own.txt']);
      expect(ownJob.others).toBeUndefined();

      // A writer a tool call left running: its file lands in the command's list, and it is named.
      await sh(
        sb,
        "setsid -f sh -c 'while :; do date > bg.txt; sleep 0.05; done' >/dev/null 2>&1; until [ -e bg.txt ]; do sleep 0.01; done",
      );
      const beside = await type('sleep 0.3; echo y > y.txt');
      expect(beside.files).toEqual(expect.arrayContaining(['bg.txt', 'y.txt']));
      expect(beside.others?.processes.map((p) => p.name)).toContain('sh');
      expect(beside.others?.episode).toBe(false);
      await sb.killStrays();

      // One that ends while the command runs: alive when the line was sent, so named.
      // (It writes once the person's command has begun, which waits until it has written.)
      await sh(
        sb,
        // The call returns once the writer is in its own session (`ready`): returned at the fork,
        // a loaded machine let the call's end take the writer before its setsid, and the
        // person's command then waited for late.txt forever (CI, once at load 20).
        "setsid -f sh -c 'touch ready; until [ -e go ]; do sleep 0.01; done; echo late > late.txt' >/dev/null 2>&1; until [ -e ready ]; do sleep 0.01; done",
      );
      const ended = await type('touch go; until [ -e late.txt ]; do sleep 0.01; done; echo z > z.txt');
      expect(ended.files).toEqual(expect.arrayContaining(['late.txt', 'z.txt']));
      expect(ended.others?.processes.length).toBeGreaterThan(0);

      // A tool call of the episode's own while it runs (no process of it left): counted.
      const during = await type('until [ -e during.txt ]; do sleep 0.01; done; echo w > w.txt', () =>
        sb.writeFile('during.txt', new TextEncoder().encode('by a call')),
      );
      expect(during.files).toEqual(expect.arrayContaining(['during.txt', 'w.txt']));
      expect(during.others).toMatchObject({ processes: [], episode: true });

      // Quiet again: the next command is the person's alone. The hook counts files changed up
      // to 20 ms before a command's start (file times come from a coarse clock), and on a fast
      // machine the next line was sent within 20 ms of w.txt being written: the sandbox's clock
      // is let pass the last change by 50 ms first. (Dating the files back no longer hides them:
      // the hook reads their change time, which a touch sets to now.)
      await sh(
        sb,
        "python3 -c \"import os,time\nm=max(os.stat(f).st_ctime for f in ['during.txt','w.txt','z.txt','late.txt'])\nwhile time.time() < m + 0.05: time.sleep(0.005)\"",
      );
      const after = await type('echo again > again.txt');
      expect(after.files).toEqual(['again.txt']);
      expect(after.others).toBeUndefined();
    } finally {
      await term?.close();
      await sb.destroy();
    }
  });

  it("the verifier runs without the agent's HOME, PATH entries or capabilities", async () => {
    const sb = (await provider().create({
      ...defaultSandboxConfig(),
      image: WRITABLE_PATH_IMAGE,
    })) as DockerSandbox;
    try {
      const task = {
        verifier: {
          command: 'echo "$HOME|$PATH|$(id -u)"; grep -E "^Cap(Bnd|Prm|Eff)" /proc/self/status',
          timeout: 30,
        },
      } as unknown as Task;
      const r = await runVerifier(task, sb);
      const [first, ...caps] = (r?.stdout ?? '').trim().split('\n');
      const [home, path, uid] = first!.split('|');
      expect(home).toMatch(/^\/tmp\/\.stepbox-verifier-[0-9a-f]{12}$/);
      expect(path).toBe('/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin');
      expect(uid).toBe('1000');
      expect(caps).toHaveLength(3);
      for (const c of caps) expect(c).toMatch(/:\s+0{16}$/);
    } finally {
      await sb.destroy();
    }
  });

  it("a verifier runner started ahead (a verifier with files: its own exec) is out of the agent's reach: the verdict stands, snapshots stay pruned while it waits", async () => {
    const sb = (await provider().create(defaultSandboxConfig())) as DockerSandbox;
    /** Pids of waiting verifier runners (root execs whose program is the runner); async, so the host's own exec of it can proceed. */
    const runners = async () =>
      (
        await execFileAsync(
          'docker',
          [
            'exec',
            '-u',
            '0:0',
            '-w',
            '/',
            sb.id,
            '/bin/sh',
            '-c',
            'for d in /proc/[0-9]*; do tr "\\0" " " < $d/cmdline 2>/dev/null | grep -q "^/opt/stepbox/runtime/lib/ld.so .*/python3 -I -S -c # stepbox verifier runner" && echo ${d#/proc/}; done; true',
          ],
          { encoding: 'utf8' },
        )
      ).stdout
        .split('\n')
        .filter(Boolean);
    try {
      // Files only the verifier may see take the runner's own exec (a plain verifier, the helper).
      sb.prepareVerifier({ ownDirs: true });
      for (let i = 0; i < 100 && (await runners()).length === 0; i++);
      const [runner] = await runners();
      expect(runner).toBeDefined();
      // The agent goes for it: its stdin (to send a verdict of its own), a signal, every process.
      await sb.exec({
        command: `echo '["true","30000","1024","1000"]' > /proc/${runner}/fd/0; kill -STOP ${runner}; kill -9 ${runner}; kill -9 -1`,
        timeoutMs: 30_000,
      });
      expect(await runners()).toEqual([runner]);
      // Waiting, it is no writer the snapshot must fear: a small change is still found by a
      // pruned scan (and recorded).
      const store = new MemorySnapshotStore();
      await sh(sb, 'echo a > a.txt');
      await sb.snapshot(store);
      await sh(sb, 'echo b > a.txt');
      const snap = await sb.snapshot(store);
      expect(snap.changed).toEqual([{ path: 'a.txt', change: 'modified' }]);
      expect(sb.lastScanWalk).toBe('pruned');
      const verdict = await sb.runVerifier({
        command: ALWAYS_FAILS.verifier!.command,
        timeoutMs: 30_000,
        files: {},
      });
      expect(verdict).toMatchObject({ exitCode: 1, channel: 'exec', uid: 1000 });
      // Used once: gone, and the next verification (a plain one: the helper's) runs as before.
      expect(await runners()).toEqual([]);
      const again = await runVerifier(
        { verifier: { command: 'cat a.txt', timeout: 30 } } as unknown as Task,
        sb,
      );
      expect(again).toMatchObject({ success: true, exit_code: 0, stdout: 'b\n', ran: { channel: 'helper' } });
    } finally {
      await sb.destroy();
    }
  });

  it('agent commands hold no capability, bounding set included', async () => {
    const sb = await provider().create(defaultSandboxConfig());
    try {
      const r = await sh(sb, 'grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):" /proc/self/status');
      const lines = r.stdout!.trim().split('\n');
      expect(lines).toHaveLength(6);
      for (const l of lines.slice(0, 5)) expect(l).toMatch(/:\s+0{16}$/);
      expect(lines[5]).toMatch(/NoNewPrivs:\s+1/);
    } finally {
      await sb.destroy();
    }
  });

  it("a command cannot ptrace, read or write the helper's idle shells; it can still debug its own programs", async () => {
    const sb = await provider().create(defaultSandboxConfig());
    try {
      // Make sure the pool is full (two idle shells) before the attack looks for them.
      await sh(sb, 'true');
      const r = await sh(sb, SHELL_ATTACK);
      const report = JSON.parse(r.stdout!.trim().split('\n').pop()!) as {
        shells: number;
        reached: string[];
        own: boolean;
      };
      expect(report.shells).toBeGreaterThan(0);
      expect(report.reached).toEqual([]);
      expect(report.own).toBe(true);
      // Sealing changes nothing a command sees of its shell: the environment and the
      // variables the C library drops from a secure exec are still there.
      await sh(sb, 'export TMPDIR=/workspace LD_LIBRARY_PATH=/opt/x');
      expect((await sh(sb, 'echo "$TMPDIR $LD_LIBRARY_PATH"; env | grep -c STEPBOX_CALL')).stdout).toBe(
        '/workspace /opt/x\n1\n',
      );
    } finally {
      await sb.destroy();
    }
  });

  it('the idle-shell attack finds a shell when its call took the last ready one and the next is slow to start', async () => {
    const BUSY_CPU0 = 'while :; do :; done & while :; do :; done & echo up; read -r _; kill $(jobs -p)';
    // The selftest's ptrace flake (CI: "no idle shell found to try"): the attack's call takes
    // the last ready shell, and the shells the helper then starts at once have not reached
    // bash when it looks. Made certain here: from the moment the pool holds two started
    // shells, whatever the helper starts runs on CPU 0 only, and only when the busy loops there
    // do not want it (SCHED_IDLE); the ready shells, and the attack in one, run anywhere.
    const sb = await provider().create(defaultSandboxConfig());
    let burner: ChildProcess | undefined;
    let blocker: Promise<unknown> | undefined;
    try {
      await sh(sb, 'true');
      await sb.sessionState();
      const ready = () =>
        asRoot(sb, 'pgrep -u 1000 -f "^/[^ ]*bash -c .*# zygote" || true').split('\n').filter(Boolean);
      for (let i = 0; i < 200 && ready().length < 2; i++);
      const shells = ready();
      expect(shells).toHaveLength(2);
      const helper = asRoot(sb, `cut -d' ' -f4 /proc/${shells[0]}/stat`);
      asRoot(
        sb,
        `python3 -c 'import os; os.sched_setaffinity(${helper}, {0}); os.sched_setscheduler(${helper}, os.SCHED_IDLE, os.sched_param(0))'`,
      );
      // Two busy loops on CPU 0 (root's, so the attack leaves them alone), until the test ends its stdin.
      burner = spawn('docker', [
        'exec',
        '-i',
        '-u',
        '0:0',
        sb.id,
        'taskset',
        '-c',
        '0',
        'sh',
        '-c',
        BUSY_CPU0,
      ]);
      await once(burner.stdout!, 'data');
      // A call that keeps the first ready shell (no longer a shell once it execs sleep; the
      // helper starts none while a call runs and a shell is ready), then the attack in the
      // second: none is ready after it, and those started then wait behind the busy loop.
      blocker = sb.exec({ command: 'exec sleep 60', timeoutMs: 60_000 });
      const r = await sh(sb, SHELL_ATTACK);
      const report = JSON.parse(r.stdout!.trim().split('\n').pop()!) as {
        shells: number;
        reached: string[];
        own: boolean;
      };
      expect(report).toEqual({ shells: expect.any(Number), reached: [], own: true });
      expect(report.shells).toBeGreaterThan(0);
    } finally {
      if (burner) {
        burner.stdin!.end();
        await once(burner, 'exit');
      }
      // The blocker ends as a call stopped by killStrays (a result, not a lost sandbox).
      if (blocker) await sb.killStrays();
      await blocker;
      await sb.destroy();
    }
  });

  it("a command that lowers an idle shell's limits does not cripple the next call", async () => {
    const sb = await provider().create(defaultSandboxConfig());
    try {
      await sh(sb, 'true');
      // prlimit needs only the same uid (no ptrace): every idle shell but this call's own.
      const r = await sh(
        sb,
        // The helper refills its idle shells just after a call: on a loaded machine none but
        // this call's own may be up yet, so wait (bounded) for one to be there to attack.
        'for i in $(seq 200); do pgrep -u 1000 -f "# zygote" | grep -qvx $$ && break; sleep 0.05; done; ' +
          'for p in $(pgrep -u 1000 -f "# zygote"); do [ "$p" != $$ ] && prlimit --pid "$p" --fsize=0:0 --nofile=8:8 && echo limited; done; true',
      );
      expect(r.stdout).toContain('limited');
      const next = await sh(sb, 'echo hi > /workspace/x && cat /workspace/x; ulimit -n; ulimit -f');
      expect(next.exit_code).toBe(0);
      expect(next.stdout!.split('\n')[0]).toBe('hi');
      expect(next.stdout).not.toMatch(/^8$/m);
      expect(next.stdout!.trim().split('\n').pop()).toBe('unlimited');
    } finally {
      await sb.destroy();
    }
  });

  it('a rollback empties every writable place outside /workspace (HOME, /tmp, /dev/shm, queues, IPC)', async () => {
    const sb = await provider().create(defaultSandboxConfig());
    const store = new MemorySnapshotStore();
    try {
      await sh(sb, 'echo kept > /workspace/a.txt');
      const info = await sb.snapshot(store);
      const session = await sb.sessionState();
      await sh(
        sb,
        [
          'echo step2 > /workspace/b.txt; echo step2 > ~/planted; mkdir -p ~/.config/x; echo step2 > ~/.config/x/rc',
          'echo step2 > /tmp/planted; echo step2 > /dev/shm/planted',
          'python3 -c "',
          'import ctypes, os',
          'libc = ctypes.CDLL(None, use_errno=True)',
          'assert libc.mq_open(b\\"/stepbox-planted\\", os.O_CREAT | os.O_RDWR, 0o600, None) >= 0',
          'assert libc.shmget(0, 4096, 0o1000 | 0o600) >= 0',
          'assert libc.semget(0, 1, 0o1000 | 0o600) >= 0',
          'assert libc.msgget(0, 0o1000 | 0o600) >= 0',
          '"',
        ].join('\n'),
      );
      const listing =
        'ls -A ~ /tmp /dev/shm /dev/mqueue | grep -v "^\\.stepbox-helper"; tail -n +2 -q /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg | wc -l; ls /workspace';
      expect((await sh(sb, listing)).stdout).toContain('planted');

      await restoreSandbox(sb, store, {
        manifest: info.manifest,
        session,
      } as unknown as TraceEventOf<'snapshot'>);

      expect((await sh(sb, listing)).stdout).toBe(
        '/dev/mqueue:\n\n/dev/shm:\n\n/home/agent:\n\n/tmp:\n0\na.txt\n',
      );
      // The helper's own directory in /dev/shm survives it: calls still run.
      expect((await sh(sb, 'echo ok')).stdout).toBe('ok\n');
    } finally {
      await sb.destroy();
    }
  });

  it('Python hashes are pinned: printing a set gives the same line in every process', async () => {
    const sb = await provider().create(defaultSandboxConfig());
    try {
      const print = `python3 -c "print(set('stepbox-%d' % i for i in range(20)))"`;
      const a = (await sh(sb, print)).stdout;
      const b = (await sh(sb, `${print}; echo "$PYTHONHASHSEED"`)).stdout;
      expect(b).toBe(`${a}0\n`);
    } finally {
      await sb.destroy();
    }
  });
});
