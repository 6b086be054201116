import { CHANNEL_DIR, CHANNEL_ROOT } from '../docker/container-spec.js';
import { describeChannel } from './helper-channel.js';
import { HELPER_SOCKET_PATH } from './helper-socket.js';
import { SandboxFailure, type Sandbox, type SandboxProvider, type VerifierRun } from './sandbox.js';
import { defaultSandboxConfig } from './limits.js';
import { RUNTIME_PYTHON_WRAPPER } from './sandbox-runtime.js';
import { ROOT_LOADER_ENV } from './root-exec.js';

/**
 * The python3 the checks' own probes run in: the image's when it has one, else stepbox's
 * runtime's (sandbox-runtime.ts), so every check holds on an image without python3 too. The
 * probes are the attacker's programs, not the image's: which python runs them changes nothing
 * they try.
 */
const PY = `"$(command -v python3 || echo ${RUNTIME_PYTHON_WRAPPER})"`;
import { isGvisor } from '../docker/gvisor.js';
import { SANDBOX_ENV } from '../../../shared/constants.js';

/** The containment checks of `stepbox sandbox selftest`, in the order they run. */
export const SELFTEST_CHECKS = [
  'network',
  'read_only_root',
  'uid',
  'capabilities',
  'helper_channel',
  'ptrace',
  'verifier_channel',
  'isolated_root',
  'pid_limit',
  'memory',
  'disk',
  'output_cap',
  'timeout',
] as const;

/** One containment check's id. */
export type SelftestCheckId = (typeof SELFTEST_CHECKS)[number];

/** One check: whether the sandbox contained what it tried, and what it saw. */
export interface SelftestCheck {
  readonly id: SelftestCheckId;
  readonly ok: boolean;
  readonly detail: string;
}

/** The self-test's verdict: `ok` only when every check held. */
export interface SelftestReport {
  readonly ok: boolean;
  /** The container runtime the checks ran on (the one asked for, else the engine's default; null when unknown). */
  readonly runtime: string | null;
  readonly checks: SelftestCheck[];
}

/** The limits the self-test's sandbox gets: small, so the limit checks are quick. */
const LIMITS = { memory: '128m', pids: 64, disk: '32m', output: '64k' } as const;
const OUTPUT_CAP = 64 * 1024;

/**
 * What a command of the agent's tries against every process of another user it can see
 * (the helper, init, the main command): write a well-formed forged answer (ids 1–199) to
 * its fds 0-2, read its memory and environment, ptrace-attach, stop and kill it; and
 * against the helper's socket (helper-socket.ts): list its folders, connect and write the
 * same answers. Prints `{others, reached}` (what worked: nothing may), then exits 7.
 */
export const HELPER_ATTACK = `${PY} - <<'PY'
import ctypes, json, os, signal, socket, struct
libc = ctypes.CDLL(None, use_errno=True)
forged = []
for i in range(1, 200):
    h = json.dumps({'id': i, 'ok': True, 'exit_code': 0, 'signal': None, 'stdout_len': 6,
                    'stdout_total': 6, 'stderr_total': 0, 'oom': False, 'duration_ms': 1}).encode()
    forged.append(struct.pack('>II', len(h), 6) + h + b'forged')
forged = b''.join(forged)
others, reached, environ = 0, [], []
me = [str(os.getuid())] * 3
for name in os.listdir('/proc'):
    if not name.isdigit() or int(name) == os.getpid():
        continue
    p = int(name)
    try:
        # Another user's: any of its real, effective or saved uids not ours (a helper whose
        # effective uid is the agent's for its file operations, on gVisor, is root's still).
        with open('/proc/%d/status' % p) as f:
            uids = [l.split()[1:4] for l in f if l.startswith('Uid:')][0]
        if uids == me:
            continue
    except (OSError, IndexError):
        continue
    others += 1
    for fd in (0, 1, 2):
        try:
            with open('/proc/%d/fd/%d' % (p, fd), 'wb', buffering=0) as f:
                f.write(forged)
            reached.append('wrote fd %d of pid %d' % (fd, p))
        except OSError:
            pass
    try:
        with open('/proc/%d/mem' % p, 'rb') as f:
            f.read(1)
        reached.append('read the mem of pid %d' % p)
    except OSError:
        pass
    try:
        with open('/proc/%d/environ' % p, 'rb') as f:
            names = sorted({v.split(b'=', 1)[0].decode('utf-8', 'replace') for v in f.read().split(b'\\0') if v})
        environ.append({'pid': p, 'names': names})
    except OSError:
        pass
    if libc.ptrace(16, p, None, None) == 0:  # PTRACE_ATTACH
        reached.append('ptraced pid %d' % p)
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(p, sig)
            reached.append('signalled pid %d' % p)
        except OSError:
            pass
for d in ('${CHANNEL_ROOT}', '${CHANNEL_DIR}'):
    try:
        os.listdir(d)
        reached.append('listed %s' % d)
    except OSError:
        pass
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('${HELPER_SOCKET_PATH}')
    s.sendall(forged)
    reached.append('wrote to the helper socket')
except OSError:
    pass
s.close()
print(json.dumps({'others': others, 'reached': reached, 'environ': environ}))
PY
exit 7`;

/**
 * Python for the probes below: `others()`, the pids of every process but the probe and its
 * shell; `reach(pid, name, opens)`, what a process of the agent's gets
 * of another process: a ptrace attach, each `/proc/PID/<what>` opened in its mode (its memory,
 * environment, fds), a process_vm_readv of its memory. Returns what it got, in words.
 */
const REACH = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class IoVec(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
def others():
    for name in os.listdir('/proc'):
        if name.isdigit() and int(name) not in (os.getpid(), os.getppid()):
            yield int(name)
def reach(p, name, opens):
    got = []
    if libc.ptrace(16, p, None, None) == 0:  # PTRACE_ATTACH
        got.append('ptraced %s %d' % (name, p))
    for what, mode in opens:
        try:
            with open('/proc/%d/%s' % (p, what), mode, buffering=0) as f:
                pass
            got.append('opened the %s of %s %d' % (what, name, p))
        except OSError:
            pass
    buf = ctypes.create_string_buffer(8)
    local, remote = IoVec(ctypes.addressof(buf), 8), IoVec(0x400000, 8)
    if libc.process_vm_readv(p, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) >= 0 or ctypes.get_errno() != 1:
        got.append('process_vm_readv on %s %d did not give EPERM' % (name, p))
    return got`;

/**
 * What a command of the agent's tries against the helper's idle shells (bash processes of
 * its own uid, started ahead of the next calls): ptrace-attach, read and write their memory
 * (/proc/PID/mem, process_vm_readv), open their fds and environment through /proc. Then it
 * attaches to a program of its own (a debugger's ordinary use), which must still work.
 * Prints `{shells, reached, own}`.
 *
 * No shell may be idle when it first looks: when this call took the pool's last one, the
 * helper starts the next at once (helper.py run()), and a shell of the pool may still be
 * between its start and its exec of bash (root's setpriv until then). Either is there
 * soon, whatever the load: it looks again until one is, every 5 ms for at most
 * `IDLE_SHELL_WAIT` seconds (20; 0 where no shell waits idle, on gVisor).
 */
export const SHELL_ATTACK = `${PY} - <<'PY'
${REACH}
import json, subprocess, time
def idle_shells():
    found = []
    for p in others():
        try:
            with open('/proc/%d/cmdline' % p, 'rb') as f:
                cmd = f.read()
            # Started: the agent's bash (not yet the setpriv that starts it, root's at first).
            if os.stat('/proc/%d' % p).st_uid != os.getuid() or b'# zygote' not in cmd or not cmd.split(b'\\0', 1)[0].endswith(b'/bash'):
                continue
        except OSError:
            continue
        found.append(p)
    return found
deadline = time.monotonic() + float(os.environ.get('IDLE_SHELL_WAIT', '20'))
shells = idle_shells()
while not shells and time.monotonic() < deadline:
    time.sleep(0.005)
    shells = idle_shells()
reached = []
for p in shells:
    reached += reach(p, 'shell', (('mem', 'rb+'), ('environ', 'rb'), ('fd/4', 'wb'), ('fd/1', 'wb')))
# The shell running this call (the parent): its state pipe carries the session's dump.
try:
    with open('/proc/%d/fd/3' % os.getppid(), 'wb', buffering=0) as f:
        pass
    reached.append("opened the state pipe of this call's own shell")
except OSError:
    pass
own = subprocess.Popen(['sleep', '30'])
ok = libc.ptrace(16, own.pid, None, None) == 0
own.kill()
print(json.dumps({'shells': len(shells), 'reached': reached, 'own': ok}))
PY`;

/**
 * What a process of the agent's tries against the window's terminal: for every process on a
 * tty (the person's shell; a tool call has none), reach it (its environment holds the history
 * hook's key, its fds the pty), then open its pty by name to print a forged line into it or
 * type one (TIOCSTI). Prints `{shells, reached}`.
 */
export const TERMINAL_ATTACK = `${PY} - <<'PY'
${REACH}
import fcntl, json, termios
shells, reached = 0, []
for p in others():
    try:
        with open('/proc/%d/stat' % p) as f:
            tty = int(f.read().rsplit(')', 1)[1].split()[4])
    except (OSError, ValueError, IndexError):
        continue
    if tty == 0:
        continue
    shells += 1
    reached += reach(p, 'terminal', (('mem', 'rb'), ('environ', 'rb'), ('fd/0', 'wb'), ('fd/1', 'wb'), ('fd/2', 'wb')))
    pts = '/dev/pts/%d' % ((tty & 0xff) | ((tty >> 12) & 0xfff00))
    for flags in (os.O_WRONLY, os.O_RDONLY):
        try:
            fd = os.open(pts, flags | os.O_NOCTTY)
        except OSError:
            continue
        reached.append('opened %s (%s)' % (pts, 'write' if flags else 'read'))
        try:
            if flags:
                os.write(fd, b'forged\\n')
            for c in b'echo forged\\r':
                fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
            reached.append('typed into %s' % pts)
        except OSError:
            pass
        os.close(fd)
print(json.dumps({'shells': shells, 'reached': reached}))
PY`;

/**
 * Files in the agent's HOME, /workspace and /tmp that would run code before a verifier or a
 * root program if either read them: Python's usercustomize/sitecustomize and a `.pth` in the
 * user site, shell startup files, a `python3`/`bash` in directories a PATH might list, a
 * preload file; and session variables (BASH_ENV, PYTHONSTARTUP, LD_PRELOAD, …) pointing at
 * them. Each leaves `/tmp/pwned-*` (with the uid it ran as) and exits 0.
 */
export const FORGE_ATTEMPT = `site=$(${PY} -c 'import site; print(site.getusersitepackages())')
mkdir -p "$site" ~/bin /workspace/bin /tmp/bin
code='import os; open("/tmp/pwned-py-%d" % os.getuid(), "w").close(); os._exit(0)'
for f in usercustomize sitecustomize; do echo "$code" > "$site/$f.py"; echo "$code" > "/workspace/$f.py"; done
for m in json base64 selectors signal binascii; do echo "$code" > "/workspace/$m.py"; done
echo "$code" > "$site/stepbox-forge.pth"
for f in .bashrc .bash_profile .bash_login .profile .pythonrc.py; do printf 'touch /tmp/pwned-rc-$(id -u); exit 0\n' > ~/$f; done
for d in ~/bin /workspace/bin /tmp/bin ~/.local/bin; do
  mkdir -p $d
  for b in python3 bash sh; do printf '#!/bin/sh\ntouch /tmp/pwned-path-$(id -u)\nexit 0\n' > $d/$b; chmod +x $d/$b; done
done
(echo /workspace/stepbox-missing.so > /etc/ld.so.preload) 2>/dev/null && echo wrote-ld.so.preload
export BASH_ENV=~/.bashrc ENV=~/.bashrc PYTHONSTARTUP=~/.pythonrc.py PYTHONPATH=/workspace PYTHONUSERBASE=~/.local LD_PRELOAD=/workspace/stepbox-missing.so PATH=~/bin:/workspace/bin:$PATH
[ -n "$site" ] && [ -f "$site/stepbox-forge.pth" ] && [ -x ~/.local/bin/python3 ] && echo planted`;

/** A sandbox run by a helper process: what the selftest checks (it says its channel and isolation). */
type HelperSandbox = Sandbox & Required<Pick<Sandbox, 'channel' | 'isolated'>>;

/** Whether `sb` has a helper to check (Docker's has; the memory backend's has none). */
function hasHelper(sb: Sandbox): sb is HelperSandbox {
  return sb.channel !== undefined && sb.isolated !== undefined;
}

type Probe = (sb: HelperSandbox) => Promise<Omit<SelftestCheck, 'id'>>;

/**
 * Variables a process's environment may hold where the kernel lets any process read it
 * (gVisor: /proc/PID/environ of every process is readable): the container's own (which every
 * command has) and the fixed PATH/HOME of root's execs. Anything else would be a leak.
 */
const PUBLIC_ENV = new Set([
  ...Object.keys(SANDBOX_ENV),
  'PATH',
  'HOME',
  // Emptied in root's execs (ROOT_LOADER_ENV): their names and empty values are no secret.
  ...ROOT_LOADER_ENV.map((v) => v.slice(0, v.indexOf('='))),
  'HOSTNAME',
  'TERM',
  'PWD',
  'SHLVL',
  '_',
]);

/** What reading other users' environments means here: a failure on runc (it must be refused), a note on gVisor. */
function environReads(
  sb: HelperSandbox,
  reads: readonly { pid: number; names: readonly string[] }[],
): { problem: string | null; note: string } {
  if (!reads.length) return { problem: null, note: '' };
  if (!isGvisor(sb.runtime))
    return { problem: reads.map((e) => `read the environ of pid ${e.pid}`).join('; '), note: '' };
  const leaked = reads.flatMap((e) =>
    e.names.filter((n) => !PUBLIC_ENV.has(n)).map((n) => `${n} (pid ${e.pid})`),
  );
  if (leaked.length)
    return { problem: `read other users' environments holding ${leaked.slice(0, 5).join(', ')}`, note: '' };
  return {
    problem: null,
    note: `; gVisor lets it read the environment of ${reads.length} of them, which hold only the container's own variables (${[...new Set(reads.flatMap((e) => e.names))].join(', ')})`,
  };
}

const ok = (detail: string) => ({ ok: true, detail });
const fail = (detail: string) => ({ ok: false, detail });

async function out(sb: Sandbox, command: string, timeoutMs = 20_000): Promise<string> {
  const r = await sb.exec({ command, timeoutMs });
  return r.stdout ?? '';
}

/**
 * Runs an always-failing verifier `command` on the sandbox's own verifier channel (what the
 * harness's `runVerifier` uses; the sandbox knows no task or episode); null when the backend
 * has no such channel or the command could not run at all.
 */
async function failingVerifier(
  sb: Sandbox,
  command: string,
  files?: Readonly<Record<string, Uint8Array>>,
): Promise<VerifierRun | null> {
  if (!sb.runVerifier) return null;
  return sb.runVerifier({ command, timeoutMs: 20_000, ...(files ? { files } : {}) }).catch(() => null);
}

/** What a command said on stderr, for a failure's detail: its last line, or nothing. */
function said(r: { stderr?: string }): string {
  const last = (r.stderr ?? '').trim().split('\n').pop()?.slice(0, 200);
  return last ? ` (stderr: ${last})` : '';
}

/** How an always-failing verifier was reported, when it was not its exit code 1. */
function notFailing(r: VerifierRun): string | null {
  if (r.exitCode === 1 && !r.timedOut) return null;
  return r.exitCode === 0 ? 'passing' : r.timedOut ? 'timed out' : `exit ${String(r.exitCode)}`;
}

/** What the verifier_channel check leaves running before each verification: what it does, its loop. */
const LEFTOVERS = [
  ['kills everything it can', 'while :; do kill -9 -1; done'],
  ['stops everything it can', 'while :; do kill -STOP -1; done'],
  [
    'writes "ok" into every stdout it can open',
    'while :; do for f in /proc/[0-9]*/fd/1; do echo ok > "$f"; done 2>/dev/null; done',
  ],
] as const;

let leftovers = 0;

/**
 * Starts `loop` the way a command of the agent's leaves a process behind (its own session,
 * SIGHUP ignored, the call returning at once) and proves it running before anything else is
 * asked. The process writes its pid, and the call waits for that (so it has left the call's
 * group); it starts its loop once the call's shell is gone (a loop that kills or stops
 * everything would otherwise end or hang the call that started it), and says so in a second
 * file, which is waited for here; it is then read alive through the helper (no command of the
 * agent's could run beside such a loop). Without that proof the attack was a race: the call's
 * hang-up often killed the child before it left the group, and the check held while nothing
 * attacked. Returns the loop's pid, or why it could not be seen running.
 */
async function startLeftover(sb: Sandbox, loop: string): Promise<number | string> {
  const marker = `/tmp/.stepbox-leftover-${++leftovers}`;
  // "$BASH": the session's own bash (the image may have none on its PATH); setsid where the
  // image has one, SIGHUP ignored by the loop itself (busybox images have no nohup).
  const started = await sb.exec({
    command: `$(command -v setsid) "$BASH" -c 'trap "" HUP; echo $$ > ${marker}; while [ -e /proc/$PPID ]; do :; done; echo $$ > ${marker}.looping; ${loop}' >/dev/null 2>&1 & until [ -s ${marker} ] || ! kill -0 $! 2>/dev/null; do :; done`,
    timeoutMs: 10_000,
  });
  if (!started.ok) return `the call that starts it failed: ${started.error?.message ?? 'no error said'}`;
  const text = (r: { value: Uint8Array }) => new TextDecoder().decode(r.value).trim();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const read = await sb.readFile(`${marker}.looping`);
    if (read.ok && text(read)) {
      const pid = Number(text(read));
      if (!Number.isInteger(pid) || pid <= 1) return `its pid file says ${JSON.stringify(text(read))}`;
      return (await alive(sb, pid)) ? pid : `pid ${pid} was gone before the verifier was asked`;
    }
    if (Date.now() > deadline) return 'it did not start its loop within 10 s of its call';
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether process `pid` is there and not a zombie, read by the helper (no command of the agent's runs). */
async function alive(sb: Sandbox, pid: number): Promise<boolean> {
  const stat = await sb.readFile(`/proc/${pid}/stat`);
  if (!stat.ok) return false;
  const text = new TextDecoder().decode(stat.value);
  return !/^\s*[ZX]\b/.test(text.slice(text.lastIndexOf(')') + 1));
}

/** Plants {@link FORGE_ATTEMPT}, then runs an always-failing verifier: it must still fail, and nothing planted run. */
async function forgeVerdict(sb: Sandbox): Promise<Omit<SelftestCheck, 'id'>> {
  const attempt = await sb.exec({ command: FORGE_ATTEMPT, timeoutMs: 20_000 });
  const planted = attempt.stdout ?? '';
  if (!planted.includes('planted'))
    return fail(`could not plant the files: ${(planted + (attempt.stderr ?? '')).trim().slice(-200)}`);
  if (planted.includes('wrote-ld.so.preload')) return fail('a command wrote /etc/ld.so.preload');
  const r = await failingVerifier(sb, `${PY} -c 'import sys; sys.exit(1)'`);
  // Builtins only: a session whose PATH is broken must not read as "nothing ran".
  const left = (await out(sb, 'for f in /tmp/pwned*; do [ -e "$f" ] && echo "$f"; done; echo listed')).trim();
  if (!left.endsWith('listed')) return fail('could not list /tmp after the attempt');
  if (!r) return fail('the verifier could not run');
  const reported = notFailing(r);
  if (reported)
    return fail(
      `with files planted in HOME, /workspace and /tmp, an always-failing verifier was reported as ${reported}`,
    );
  const ran = left.split('\n').slice(0, -1);
  if (ran.length) return fail(`planted code ran: ${ran.join(', ')}`);
  if (/ld\.so/.test(r.stderr)) return fail("the verifier saw the session's LD_PRELOAD");
  return ok(
    'usercustomize/sitecustomize/.pth files, shell startup files, fake python3/bash and preload variables planted by a command changed no verdict and ran nothing',
  );
}

const PROBES: Record<SelftestCheckId, Probe> = {
  network: async (sb) => {
    // A glob, not ls: coreutils 9's ls fails on Debian's runsc (statx AT_NO_AUTOMOUNT: EINVAL).
    const ifaces = (await out(sb, 'for i in /sys/class/net/*; do echo "${i##*/}"; done')).trim().split(/\s+/);
    return ifaces.join(',') === 'lo'
      ? ok('only the loopback interface')
      : fail(`interfaces ${ifaces.join(', ')} (expected only lo)`);
  },
  read_only_root: async (sb) => {
    const writable = (
      await out(
        sb,
        'for d in / /etc /usr /var /var/tmp /opt; do touch $d/.probe 2>/dev/null && echo $d; done',
      )
    ).trim();
    return writable
      ? fail(`writable: ${writable.split('\n').join(', ')}`)
      : ok('/, /etc, /usr, /var, /var/tmp, /opt are read-only');
  },
  uid: async (sb) => {
    const [uid, groups] = (await out(sb, 'id -u; id -G')).trim().split('\n');
    return uid === '1000' && groups === '1000'
      ? ok('commands run as uid 1000, gid 1000, no other groups')
      : fail(`uid ${uid}, groups ${groups} (expected 1000 and 1000)`);
  },
  capabilities: async (sb) => {
    // gVisor's /proc/PID/status has no NoNewPrivs (nor CapAmb): asked of prctl instead.
    const lines = (
      await out(
        sb,
        'grep -E "^(Cap(Inh|Prm|Eff|Bnd|Amb)|NoNewPrivs):" /proc/self/status; grep -q "^NoNewPrivs:" /proc/self/status || python3 -c "import ctypes; print(\'NoNewPrivs:\t%d\' % ctypes.CDLL(None).prctl(39, 0, 0, 0, 0))"',
      )
    )
      .trim()
      .split('\n');
    const bad = lines.filter((l) => (l.startsWith('Cap') ? !/:\s+0+$/.test(l) : !/:\s+1$/.test(l)));
    const expected = isGvisor(sb.runtime) ? 5 : 6;
    return bad.length || lines.length < expected
      ? fail(`unexpected: ${bad.join('; ') || lines.join('; ')}`)
      : ok('none: no inheritable, permitted, effective, bounding or ambient capability; no-new-privileges');
  },
  helper_channel: async (sb) => {
    if (!sb.isolated) return fail('the helper runs as the same user as the commands');
    const r = await sb.exec({ command: HELPER_ATTACK, timeoutMs: 30_000 });
    const report = JSON.parse((r.stdout ?? '').trim().split('\n')[0] || '{}') as {
      others?: number;
      reached?: string[];
      environ?: { pid: number; names: string[] }[];
    };
    if (r.exit_code !== 7)
      return fail(`the command's result was altered (exit ${String(r.exit_code)}, not 7)`);
    if (report.reached?.length) return fail(report.reached.slice(0, 3).join('; '));
    const environ = environReads(sb, report.environ ?? []);
    if (environ.problem) return fail(environ.problem);
    if ((await out(sb, 'echo next')) !== 'next\n') return fail('the next call failed after the attempt');
    return ok(
      `a command could not write, read, ptrace or signal any of ${report.others ?? 0} processes of other users, nor reach the helper's socket; its result was its own (${describeChannel(sb.channel)})${environ.note}`,
    );
  },
  ptrace: async (sb) => {
    // gVisor starts no idle shell (see below): nothing to wait for there.
    const command = isGvisor(sb.runtime) ? `IDLE_SHELL_WAIT=0 ${SHELL_ATTACK}` : SHELL_ATTACK;
    const r = await sb.exec({ command, timeoutMs: 30_000 });
    const report = JSON.parse((r.stdout ?? '').trim().split('\n').pop() || '{}') as {
      shells?: number;
      reached?: string[];
      own?: boolean;
    };
    if (report.reached?.length) return fail(report.reached.slice(0, 3).join('; '));
    // gVisor leaves a shell dumpable whatever its ids at exec, so no shell waits idle there
    // (helper.py SHELLS_ON_DEMAND): each call starts its own; nothing to shape beforehand.
    const onDemand = isGvisor(sb.runtime) && report.shells === 0;
    if (!report.shells && !onDemand)
      return fail(`no idle shell found to try (${r.stderr?.trim().slice(-200) ?? ''})`);
    if (!report.own)
      return fail('a command could not ptrace a program of its own (debuggers would not work)');
    return ok(
      onDemand
        ? "no shell waits idle on gVisor (each call starts its own, so none can be shaped beforehand); a command could not open its own shell's state pipe, and could still attach to a program of its own"
        : `a command could not ptrace, read or write the memory of, or open the fds of ${report.shells} idle shell(s), nor its own shell's state pipe; it could still attach to a program of its own`,
    );
  },
  isolated_root: async (sb) => {
    const session = await sb.sessionState();
    try {
      return await forgeVerdict(sb);
    } finally {
      // The later checks get the session and the scratch places as they were.
      await sb.killStrays();
      await sb.setSessionState(session);
    }
  },
  verifier_channel: async (sb) => {
    // Both ways a verifier runs out of the agent's reach: a plain one (the isolated helper's
    // own channel, or its own exec where the helper is not isolated) and one with files (a
    // Harbor task's tests/: always its own exec). Each meets, in turn, leftovers that kill or
    // stop everything they can, or write "ok" into every stdout they can open, each proven
    // running before the verifier is asked (see startLeftover).
    const said: string[] = [];
    const killed: number[] = [];
    for (const [name, files] of [
      ['plain', undefined],
      ['with files', {}],
    ] as const) {
      let channel = '';
      for (const [what, loop] of LEFTOVERS) {
        const started = await startLeftover(sb, loop);
        if (typeof started === 'string') return fail(`the leftover that ${what} did not start: ${started}`);
        const r = await failingVerifier(sb, 'exit 1', files);
        if (!r) return fail(`the ${name} verifier could not run beside a leftover that ${what}`);
        const reported = notFailing(r);
        if (reported)
          return fail(
            `an always-failing ${name} verifier was reported as ${reported} beside a leftover that ${what}`,
          );
        if (r.channel === 'session')
          return fail(
            `the ${name} verifier ran in the sandbox session, not its own exec or the helper's channel`,
          );
        if (await alive(sb, started))
          return fail(`the leftover that ${what} (pid ${started}) outlived the ${name} verifier`);
        if ((await out(sb, 'echo next')) !== 'next\n')
          return fail(`the next call failed after the ${name} verifier beside a leftover that ${what}`);
        channel = r.channel === 'helper' ? "over the helper's channel" : 'in its own exec';
        killed.push(r.killed);
      }
      said.push(`${name}: ${channel}`);
    }
    return ok(
      `an always-failing verifier failed each way (${said.join('; ')}), each time beside a leftover proven running that ${LEFTOVERS.map(([what]) => what).join(', or ')}; none outlived it (processes killed before each: ${killed.join(', ')})`,
    );
  },
  pid_limit: async (sb) => {
    const r = await sb.exec({
      command: `${PY} -c "import os, time\nn = 0\nwhile n < 1000:\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    n += 1\nprint(n)"`,
      timeoutMs: 30_000,
    });
    const n = Number((r.stdout ?? '').trim());
    await sb.killStrays();
    return n > 0 && n < LIMITS.pids
      ? ok(`a fork loop was stopped after ${n} processes (limit ${LIMITS.pids})`)
      : fail(`a fork loop started ${n} processes (limit ${LIMITS.pids})${said(r)}`);
  },
  // On gVisor, see memoryOnGvisor (the whole sandbox ends).
  memory: async (sb) => {
    const r = await sb.exec({
      command: `${PY} -c "b = bytearray(1 << 30); print(len(b))"`,
      timeoutMs: 30_000,
    });
    return r.error?.code === 'oom'
      ? ok(`allocating 1 GiB was stopped as oom (memory ${LIMITS.memory})`)
      : fail(
          `allocating 1 GiB gave ${r.error ? r.error.code : `exit ${String(r.exit_code)}`}, not oom${said(r)}`,
        );
  },
  disk: async (sb) => {
    // dd: GNU's and busybox's both name the error (busybox's head says only "I/O error").
    const r = await sb.exec({
      command: 'dd if=/dev/zero of=/workspace/.fill bs=1048576 count=64',
      timeoutMs: 30_000,
    });
    await sb.exec({ command: 'rm -f /workspace/.fill', timeoutMs: 5_000 });
    return r.error?.code === 'disk_full'
      ? ok(`writing 64 MiB to /workspace gave disk_full (disk ${LIMITS.disk})`)
      : fail(
          `writing 64 MiB to /workspace gave ${r.error ? r.error.code : `exit ${String(r.exit_code)}`}, not disk_full${said(r)}`,
        );
  },
  output_cap: async (sb) => {
    const r = await sb.exec({ command: 'yes | head -c 1000000', timeoutMs: 20_000 });
    return r.truncated?.stdout && r.stdout?.length === OUTPUT_CAP && r.bytes === 1_000_000
      ? ok(`1,000,000 bytes of output kept ${OUTPUT_CAP}, counted all`)
      : fail(`kept ${r.stdout?.length ?? 0} of ${r.bytes ?? 0} bytes (cap ${OUTPUT_CAP})${said(r)}`);
  },
  timeout: async (sb) => {
    const r = await sb.exec({ command: 'sleep 30 & sleep 30', timeoutMs: 500 });
    // Builtins over /proc, not pgrep (busybox images have none): the agent's `sleep`s left.
    // A zombie has ended (it waits for the container's init to reap it, which under load
    // can come after this look): not counted.
    const left = (
      await out(
        sb,
        'n=0; for p in /proc/[0-9]*; do { read -r c < "$p/comm"; read -r s < "$p/stat"; } 2>/dev/null && [ "$c" = sleep ] && [ -O "$p" ] && case $s in *") Z "*) false ;; esac && n=$((n+1)); done; echo $n',
      )
    ).trim();
    return r.error?.code === 'timeout' && left === '0'
      ? ok('a 30 s command ended at its 500 ms timeout with every process it started')
      : fail(`gave ${r.error?.code ?? 'no error'}, ${left} sleep process(es) left`);
  },
};

/**
 * The memory check on gVisor, in a sandbox of its own: gVisor has no OOM killer, so past the
 * limit the host's stops the Sentry and the whole sandbox ends (docker/gvisor.ts). Holds when
 * allocating 1 GiB ends the sandbox as out of memory, never past the limit.
 */
async function memoryOnGvisor(
  provider: SandboxProvider,
  runtime: string | undefined,
): Promise<Omit<SelftestCheck, 'id'>> {
  const sb = await provider.create({ ...defaultSandboxConfig(LIMITS), ...(runtime ? { runtime } : {}) });
  try {
    const r = await sb
      .exec({ command: 'python3 -c "b = bytearray(1 << 30); print(len(b))"', timeoutMs: 60_000 })
      .catch((e: Error) => e);
    if (r instanceof Error)
      return /out of memory/.test(r.message)
        ? ok(
            `allocating 1 GiB ended the sandbox as out of memory (memory ${LIMITS.memory}): gVisor has no OOM killer of its own, so the engine stops the whole sandbox rather than the one command (its calls report sandbox_lost)`,
          )
        : fail(`allocating 1 GiB failed otherwise: ${r.message}`);
    return r.error?.code === 'oom'
      ? ok(`allocating 1 GiB was stopped as oom (memory ${LIMITS.memory})`)
      : fail(
          `allocating 1 GiB gave ${r.error ? `${r.error.code}: ${r.error.message}` : `exit ${String(r.exit_code)}`}, not oom${said(r)}`,
        );
  } finally {
    await sb.destroy().catch(() => undefined);
  }
}

/**
 * Starts one sandbox from `provider` (the engine's: `openEngine(...).provider()`, on this
 * machine's engine), of `image` (default: the stepbox image), and tries what the sandbox must contain: one check per
 * {@link SELFTEST_CHECKS} entry. Rejects (a SandboxFailure) only when no sandbox can start.
 */
export async function runSelftest(
  provider: SandboxProvider,
  options: { image?: string; runtime?: string } = {},
): Promise<SelftestReport> {
  const { image, runtime } = options;
  const sb = await provider.create({
    ...defaultSandboxConfig(LIMITS),
    ...(image ? { image } : {}),
    ...(runtime ? { runtime } : {}),
  });
  try {
    if (!hasHelper(sb))
      throw new SandboxFailure(
        'sandbox_failed',
        `the selftest checks Docker sandboxes, not ${provider.backend} ones`,
      );
    const checks: SelftestCheck[] = [];
    for (const id of SELFTEST_CHECKS) {
      try {
        const probe =
          id === 'memory' && isGvisor(sb.runtime) ? () => memoryOnGvisor(provider, runtime) : PROBES[id];
        checks.push({ id, ...(await probe(sb)) });
      } catch (e) {
        checks.push({ id, ok: false, detail: `the check could not run: ${(e as Error).message}` });
      }
    }
    return { ok: checks.every((c) => c.ok), runtime: sb.runtime ?? null, checks };
  } finally {
    await sb.destroy();
  }
}
