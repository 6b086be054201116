import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import type { DockerSandboxProvider } from '../../electron/engine/sandbox/docker-provider.js';
import { runVerifier } from '../../electron/engine/harness/verifier.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import type { Task } from '../../shared/task.js';
import { closeTestProvider, describeDocker, testProvider } from '../support/docker.js';

/**
 * Every way a process of the agent's could reach the helper, tried against every process
 * of another user it can see (the helper, init, the main command): write a well-formed
 * forged answer to its fds 0-2, read its memory and environment, ptrace-attach, stop and
 * kill it. Prints what worked (nothing may) and how many such processes it saw.
 */
const ATTACK = `python3 - <<'PY'
import ctypes, json, os, signal, struct
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
forged = []
for i in range(1, 200):
    h = json.dumps({'id': i, 'ok': True, 'exit_code': 0, 'signal': None, 'stdout_len': 6,
                    'stdout_total': 6, 'stderr_total': 0, 'oom': False, 'duration_ms': 1}).encode()
    forged.append(struct.pack('>II', len(h), 6) + h + b'forged')
forged = b''.join(forged)
others, reached = [], []
for name in os.listdir('/proc'):
    if not name.isdigit() or int(name) == me:
        continue
    p = int(name)
    try:
        if os.stat('/proc/%d' % p).st_uid == os.getuid():
            continue
    except OSError:
        continue
    others.append(p)
    for fd in (0, 1, 2):
        try:
            with open('/proc/%d/fd/%d' % (p, fd), 'wb', buffering=0) as f:
                f.write(forged)
            reached.append('write fd %d of %d' % (fd, p))
        except OSError:
            pass
    for what in ('mem', 'environ'):
        try:
            with open('/proc/%d/%s' % (p, what), 'rb') as f:
                f.read(1)
            reached.append('read %s of %d' % (what, p))
        except OSError:
            pass
    if libc.ptrace(16, p, None, None) == 0:  # PTRACE_ATTACH
        reached.append('ptrace %d' % p)
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(p, sig)
            reached.append('signal %d to %d' % (sig, p))
        except OSError:
            pass
print(json.dumps({'others': len(others), 'reached': reached}))
PY
echo real; exit 7`;

describeDocker('sandbox integrity: the agent cannot reach the helper or the verifier', () => {
  let provider: DockerSandboxProvider;
  let sb: DockerSandbox;

  beforeAll(async () => {
    provider = await testProvider();
    sb = await provider.create(defaultSandboxConfig());
  });

  afterAll(async () => {
    expect(await closeTestProvider(provider)).toEqual([]);
  });

  it('runs the helper as another user: no command can write, read, ptrace or signal it', async () => {
    expect(sb.isolated).toBe(true);
    for (let round = 0; round < 3; round++) {
      const r = await sb.exec({ command: ATTACK, timeoutMs: 20_000 });
      // The recorded result is the command's own, not a forged frame.
      expect(r).toMatchObject({ ok: true, exit_code: 7 });
      const [line, tail] = r.stdout!.trim().split('\n');
      const report = JSON.parse(line) as { others: number; reached: string[] };
      expect(report.reached).toEqual([]);
      // init, `sleep infinity` and the helper at least.
      expect(report.others).toBeGreaterThanOrEqual(3);
      expect(tail).toBe('real');
      expect(await sb.exec({ command: 'echo next', timeoutMs: 5_000 })).toMatchObject({
        ok: true,
        exit_code: 0,
        stdout: 'next\n',
      });
    }
  });

  it('gives a command no fd of the helper: stdin is /dev/null, only its own pipes follow', async () => {
    const r = await sb.exec({
      command:
        'python3 -c "import os; print(sorted(int(f) for f in os.listdir(\'/proc/self/fd\')))"; readlink /proc/self/fd/0; id -u; id -G',
      timeoutMs: 5_000,
    });
    const [fds, stdin, uid, groups] = r.stdout!.trim().split('\n');
    // 0-2, the state pipe (3) and listdir's own descriptor.
    expect(JSON.parse(fds)).toHaveLength(5);
    expect(JSON.parse(fds).slice(0, 4)).toEqual([0, 1, 2, 3]);
    expect(stdin).toBe('/dev/null');
    expect(uid).toBe('1000');
    expect(groups).toBe('1000');
  });

  it('keeps the container and the helper through kill -9 -1, kill -STOP -1 and pkill', async () => {
    for (const command of ['kill -9 -1', 'kill -STOP -1', 'pkill -9 -f python3', 'pkill -9 sleep']) {
      await sb.exec({ command, timeoutMs: 5_000 });
      expect(await sb.exec({ command: 'echo alive', timeoutMs: 5_000 })).toMatchObject({
        ok: true,
        stdout: 'alive\n',
      });
    }
  });

  it('never reports an always-failing verifier as passing, whatever the agent left running', async () => {
    // Left behind, out of every call's session: a loop writing "ok" and forged frames to
    // every fd it can open, one killing everything it can, one forking, one waiting to
    // ptrace or signal the verifier's shell.
    const leftovers = [
      `while :; do for f in /proc/[0-9]*/fd/[0-9]*; do printf 'ok\\n{"exit_code":0}' > "$f"; done 2>/dev/null; done`,
      'while :; do kill -9 -1; done',
      'while :; do sleep 0.01 & done',
      'while :; do for p in $(pgrep -f "exit 1"); do kill -STOP $p; done; done',
    ];
    for (const loop of leftovers)
      await sb.exec({
        command: `setsid nohup bash -c '${loop.replace(/'/g, "'\\''")}' >/dev/null 2>&1 &`,
        timeoutMs: 5_000,
      });
    const failing = { verifier: { command: 'echo checking; exit 1', timeout: 20 } } as unknown as Task;
    const first = await runVerifier(failing, sb);
    expect(first).toMatchObject({
      success: false,
      exit_code: 1,
      stdout: 'checking\n',
      ran: { channel: 'exec', uid: 1000 },
    });
    // The killing loop spares only itself, so at least it was still there to be killed.
    expect(first!.ran!.killed).toBeGreaterThanOrEqual(1);
    // The leftovers are gone, so the same verifier is judged the same way again, and a
    // passing one still passes.
    expect(await runVerifier(failing, sb)).toMatchObject({ success: false, exit_code: 1 });
    const passing = { verifier: { command: 'pwd; exit 0', timeout: 20 } } as unknown as Task;
    expect(await runVerifier(passing, sb)).toMatchObject({
      success: true,
      exit_code: 0,
      stdout: '/workspace\n',
    });
  });

  it('times a verifier out and kills what it started, reporting no exit code', async () => {
    const slow = { verifier: { command: 'sleep 60 & sleep 60', timeout: 1 } } as unknown as Task;
    const r = await runVerifier(slow, sb);
    expect(r).toMatchObject({ success: false, exit_code: null });
    expect(r!.stderr).toMatch(/did not finish within 1000 ms/);
    expect(await sb.exec({ command: 'pgrep -u 1000 -c sleep || true', timeoutMs: 5_000 })).toMatchObject({
      stdout: '0\n',
    });
  });
});
