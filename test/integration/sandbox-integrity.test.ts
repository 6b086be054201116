import { beforeAll, expect, it } from 'vitest';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { runVerifier } from '../../electron/engine/harness/verifier.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { HELPER_ATTACK } from '../../electron/engine/sandbox/selftest.js';
import type { Task } from '../../shared/task.js';
import { describeDocker, useTestProvider } from '../support/docker.js';

describeDocker('sandbox integrity: the agent cannot reach the helper or the verifier', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;

  beforeAll(async () => {
    sb = await provider().create(defaultSandboxConfig());
  });

  it('runs the helper as another user: no command can write, read, ptrace or signal it', async () => {
    expect(sb.isolated).toBe(true);
    for (let round = 0; round < 3; round++) {
      const r = await sb.exec({ command: HELPER_ATTACK, timeoutMs: 20_000 });
      // The recorded result is the command's own, not a forged frame.
      expect(r).toMatchObject({ ok: true, exit_code: 7 });
      const report = JSON.parse(r.stdout!.trim()) as {
        others: number;
        reached: string[];
        environ: unknown[];
      };
      expect(report.reached).toEqual([]);
      // On runc no other user's environment is readable (gVisor's differ: see selftest.ts).
      expect(report.environ).toEqual([]);
      // init, `sleep infinity` and the helper at least.
      expect(report.others).toBeGreaterThanOrEqual(3);
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

  it('keeps the session as it was when a command cuts its state dump short, wherever the cut falls', async () => {
    // A shell killed in its exit trap (by a `kill -9 -1` loop the command left running, say)
    // wrote a cut dump; taken as the session's environment, an empty one unset PATH and every
    // later command was "not found" (exit 127; the selftest's pid_limit..timeout all failed).
    // Each command here replaces the trap with one that dies part-way, at each place a cut can fall.
    await sb.exec({ command: 'export KEEP=kept; cd /tmp', timeoutMs: 5_000 });
    const session = await sb.sessionState();
    const cuts = [
      ':',
      'builtin printf "%s\\0" "$PWD"',
      'builtin printf "%s\\0" "$PWD"; builtin export -p | head -c 200',
      'builtin printf "%s\\0" "$PWD"; builtin export -p',
      'builtin printf "%s\\0" "$PWD"; builtin export -p; builtin printf "\\0declare -x PATH=\\"/nowhere\\"\\n"',
    ];
    for (const cut of cuts) {
      const r = await sb.exec({
        command: `export CHANGED=yes; cd /; trap '{ ${cut}; } >&3 2>/dev/null; kill -9 $$' EXIT`,
        timeoutMs: 5_000,
      });
      expect(r, cut).toMatchObject({ ok: true, exit_code: 137 });
      const after = await sb.exec({ command: 'echo "$KEEP ${CHANGED-unset} $PWD"; id -u', timeoutMs: 5_000 });
      expect({ cut, out: after.stdout, err: after.stderr }).toEqual({
        cut,
        out: 'kept unset /tmp\n1000\n',
        err: '',
      });
    }
    // A dump is the command's to write, whole or not: none may hang or stop the helper (a
    // `declare -` with no space once looped it forever); what it names is the session's.
    const garbled = [
      'x\ndeclare -',
      'declare -x',
      "declare -x A=$'\\",
      "declare -x A=$'\\c",
      'declare -x A=$\'\\U7fffffff\'\ndeclare -x B="b"\n',
    ];
    for (const dump of garbled) {
      const bytes = Buffer.from(`/tmp\0${dump}\0`).toString('base64');
      const r = await sb.exec({
        command: `echo ${bytes} | base64 -d > /tmp/dump; trap 'cat /tmp/dump >&3; kill -9 $$' EXIT`,
        timeoutMs: 5_000,
      });
      expect(r, dump).toMatchObject({ ok: true, exit_code: 137 });
      const after = await sb.exec({ command: 'echo alive', timeoutMs: 5_000 });
      expect({ dump, out: after.stdout }).toEqual({ dump, out: 'alive\n' });
      await sb.setSessionState(session);
    }
    // A whole dump still carries the command's changes.
    await sb.exec({ command: 'export CHANGED=yes; cd /workspace', timeoutMs: 5_000 });
    const whole = await sb.exec({ command: 'echo "$KEEP $CHANGED $PWD"', timeoutMs: 5_000 });
    expect(whole.stdout).toBe('kept yes /workspace\n');
    await sb.exec({ command: 'unset KEEP CHANGED', timeoutMs: 5_000 });
  });

  it('never reports an always-failing verifier as passing, whatever the agent left running', async () => {
    // Left behind, out of every call's session: a loop writing "ok" and forged frames to
    // every fd it can open, one killing everything it can, one forking, one waiting to
    // ptrace or signal the verifier's shell.
    const leftovers = [
      `while :; do for f in /proc/[0-9]*/fd/[0-9]*; do printf 'ok\\n{"exit_code":0}' > "$f"; done 2>/dev/null; done`,
      'while :; do sleep 0.01 & done',
      'while :; do for p in $(pgrep -f "exit 1"); do kill -STOP $p; done; done',
      // Last: once it runs, it kills every other process of the agent's, the shells of later
      // calls included.
      'while :; do kill -9 -1; done',
    ];
    // Each call waits until its leftover runs in a session of its own (it wrote its pid file):
    // a call that returned at once ended before the background bash reached setsid, and the
    // end of the call killed its process group, the leftover with it (under load none of them
    // survived, and nothing was left to kill). The killing loop kills the call that started
    // it, which is why its result is not checked.
    for (const [n, loop] of leftovers.entries()) {
      const script = `echo $$ > /tmp/leftover.${n}; ${loop}`;
      await sb.exec({
        command: `setsid nohup bash -c '${script.replace(/'/g, "'\\''")}' >/dev/null 2>&1 & while [ ! -s /tmp/leftover.${n} ]; do :; done`,
        timeoutMs: 5_000,
      });
    }
    const failing = { verifier: { command: 'echo checking; exit 1', timeout: 20 } } as unknown as Task;
    const first = await runVerifier(failing, sb);
    expect(first).toMatchObject({
      success: false,
      exit_code: 1,
      stdout: 'checking\n',
      // A plain verifier: run by the isolated helper itself, over its own channel.
      ran: { channel: 'helper', uid: 1000 },
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
    // Over the helper's own channel (a plain verifier), and the outcome says it timed out.
    expect(r).toMatchObject({ success: false, exit_code: null, ran: { channel: 'helper' } });
    expect(r!.error).toEqual({
      code: 'timeout',
      message: expect.stringMatching(
        /did not finish within its timeout \(1 s, "verifier.timeout" in the task\)/,
      ),
    });
    expect(r!.stderr).toMatch(/did not finish within 1000 ms/);
    const left = await sb.exec({ command: 'pgrep -u 1000 -c sleep || true', timeoutMs: 5_000 });
    // stderr too, so a pgrep that could not run says why.
    expect({ stdout: left.stdout, stderr: left.stderr }).toEqual({ stdout: '0\n', stderr: '' });
  });

  it('a verifier that never exits (it ignores TERM and spins) is killed at its timeout, and the helper answers the next request', async () => {
    const hung = {
      verifier: { command: `trap '' TERM INT HUP; echo started; while :; do :; done`, timeout: 1 },
    } as unknown as Task;
    const started = performance.now();
    const r = await runVerifier(hung, sb);
    expect(r).toMatchObject({
      success: false,
      exit_code: null,
      stdout: 'started\n',
      ran: { channel: 'helper' },
    });
    expect(r!.error?.code).toBe('timeout');
    // Killed at its timeout (1 s), not at the host's wait for the helper (its grace past that).
    expect(performance.now() - started).toBeLessThan(8_000);
    expect(await sb.exec({ command: 'echo next', timeoutMs: 5_000 })).toMatchObject({
      ok: true,
      stdout: 'next\n',
    });
    const passing = { verifier: { command: 'exit 0', timeout: 20 } } as unknown as Task;
    expect(await runVerifier(passing, sb)).toMatchObject({
      success: true,
      exit_code: 0,
      ran: { channel: 'helper' },
    });
  });

  it('kills what a verifier leaves running when it returns (its output ends with it), and spares the kill when nothing is left', async () => {
    // The background sleep holds the verifier's stdout: only its kill ends the output.
    const leaves = { verifier: { command: 'sleep 60 & echo done', timeout: 30 } } as unknown as Task;
    const r = await runVerifier(leaves, sb);
    expect(r).toMatchObject({ success: true, exit_code: 0, stdout: 'done\n' });
    const left = await sb.exec({ command: 'pgrep -u 1000 -c sleep || true', timeoutMs: 5_000 });
    expect({ stdout: left.stdout, stderr: left.stderr }).toEqual({ stdout: '0\n', stderr: '' });
    const clean = { verifier: { command: 'echo done', timeout: 30 } } as unknown as Task;
    expect(await runVerifier(clean, sb)).toMatchObject({ success: true, exit_code: 0, stdout: 'done\n' });
  });
});
