# stepbox helper, part: the session's shells (the exec op, get/set_session, kill_strays): the idle
# shells a call runs in, the script each is fed and the state dump each leaves.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import errno
import os
import re
import selectors
import signal
import time


# Each call runs in a bash started ahead of time (a "zygote", own session via setsid,
# oom_score_adj raised so the kernel's OOM killer picks commands rather than the helper)
# that sources fd 4, a pipe. A call writes one script into that pipe and closes it: its
# prelude (session env, cwd, call marker, and an EXIT trap that writes the cwd and
# `export -p` to fd 3) and the command line as a quoted assignment to __stepbox_c; the
# zygote sources it (one read), says `s` on fd 3 (it took the command) and evals the
# command. A script larger than one pipe page goes through a file instead (the pipe then
# carries `. FILE`), so writing it never blocks the helper. An empty pipe (the helper
# discarding the shell) sets nothing and the shell exits. Starting bash costs ~2 ms; done
# ahead, a call costs well under 1 ms inside the container. Parse errors read
# `bash: eval: line N: …` where `bash -c` would say `-c`; $0 is `bash` and $# is 0, as
# with `bash -c`. The trailing comment names the shell in `ps` (tests use it).
# Where an `execute_shell` of `true` spends its time over the socket channel (a 2-vCPU VM,
# calls 10 ms apart as the bench paces them; host and helper marks on the one
# CLOCK_MONOTONIC, medians of 300; overhead ~1.5 ms, was ~1.7): the host ~0.09 ms in the
# registry (argument check ~0.05) and ~0.09 building the request, its write ~0.11 (it wakes
# this process on the other vCPU), ~0.17 until this loop reads it, ~0.13 here up to the
# script (json ~0.03, the idle shell's limits and SIGCONT ~0.05, the oom counter ~0.02,
# the script's write ~0.03, which wakes the shell), then the command (duration_ms ~2.8:
# the shell waking, sourcing, running, dumping, exiting), ~0.12 here to the reply (reaping
# ~0.03, hang_up's killpg ~0.03, the oom counter ~0.03, the session dump ~0.02), ~0.35
# until the host's 'data' handler runs (the header's encoding and write here, the host's
# wake-up, libuv and Node's stream code), ~0.13 of the host's frame and reply check and
# ~0.15 until the call resolves (Node's stream tail, three async returns). What stays is
# mostly not work: the two wake-ups and the write that makes one (~0.6 ms; a bare
# Node-Python socket ping-pong pays ~0.2 ms round trip when neither side sleeps between)
# and code run 10-25x slower than warm after the model's pause (a JSON.stringify+parse of
# this size: 2.5 us warm, 35 us after 10 ms idle): every piece left is a syscall or a
# library call that the call needs (the limits, SIGCONT and oom reads guard the call; the
# reap, hang_up and dump make its result) whose price is mostly that coldness. A `ping`
# alone (the two wake-ups, no work) takes ~0.5 ms there. Left as they are on purpose:
# Node's stream code around each read (net.Socket's `onread`, which skips it, is offered
# only to sockets Node connects itself; this process connects to the host), and hang_up
# before the reply (after it, the host could act on an answer while the call's group still
# runs, and output the group wrote meanwhile would be lost). The replacement shell used to
# cost ~1.5 ms of os.fork of this process (blocking every request) plus bash's start; it
# is now posix_spawn'ed (see spawn_as_agent). A long-lived shell forking
# each call would save bash's start but not keep its semantics: a forked subshell's `$$`
# is its parent's (a `kill -9 $$` would hit the shared shell, not the call), and calls
# would share one session, so a fresh process per call stays.
ZYGOTES = 2
# Where the kernel has no setfsuid it is gVisor, whose exec (the Debian build of 2022) sets
# the effective gid back to the real one and leaves the shell dumpable: the seal above is
# void, and a process of the agent's could open an idle shell's /proc/PID/fd/* and shape
# the next call (write commands into its script pipe, output into its pipes). There no
# shell waits idle: each call starts its own (slower: ~100 ms more a call on gVisor's
# ptrace platform), and its script and state pipes are root's (mode 0600, not openable
# through /proc by anyone else), its script read from a root-owned file (DRIVER_FILE).
SHELLS_ON_DEMAND = SEALED and not FS_IDS
if SHELLS_ON_DEMAND:
    ZYGOTES = 0
# Seconds of quiet from the host before an idle shell is started to fill the pool back up.
REFILL_IDLE = 0.003
# ... and after a call ends, while a shell is still ready: its snapshot usually comes next,
# and a start blocks the loop (a few ms on a loaded machine, where the host's own gap
# between a call's answer and its snapshot is more than REFILL_IDLE): the pool is filled
# once the host's next request is answered, or after this long without one. Under the 10 ms
# between two calls of the bench's paced tool calls (the model's pause), so a call that
# follows a call without a snapshot still finds the pool filled, not being filled.
REFILL_AFTER_CALL = 0.006
DRIVER = (
    'builtin echo 1000 2>/dev/null >/proc/self/oom_score_adj; '
    'builtin . /dev/fd/4 2>/dev/null; [[ -n ${__stepbox_c+x} ]] || builtin exit 0; exec 4<&-; '
    'builtin printf s >&3; builtin eval "$__stepbox_c" # zygote %(base)s'
)
# DRIVER where SHELLS_ON_DEMAND: the script pipe (root's, which the shell cannot open by
# path) carries one byte that says go; the script is in the root-owned file %(base)s.sh.
DRIVER_FILE = (
    'builtin echo 1000 2>/dev/null >/proc/self/oom_score_adj; '
    'builtin read -r -n 1 -u 4 __stepbox_g 2>/dev/null || builtin exit 0; builtin unset __stepbox_g; '
    'builtin . %(base)s.sh 2>/dev/null; [[ -n ${__stepbox_c+x} ]] || builtin exit 0; exec 4<&-; '
    'builtin printf s >&3; builtin eval "$__stepbox_c" # zygote %(base)s'
)
# The state dump: the cwd, a NUL, `export -p`, and a NUL that says the dump is whole. A shell
# killed part-way through (a `kill -9 -1` the command left running reaches it in its trap)
# writes a cut dump; without the end mark an empty or half dump would become the session's
# environment, PATH gone, and every later command "not found" (exit 127).
TRAP = 'builtin trap \'{ builtin printf "%s\\0" "$PWD"; builtin export -p; builtin printf "\\0"; } >&3 2>/dev/null\' EXIT\n'
# At most this much script goes through the pipe: a pipe holds at least one page even when
# the user's pipe buffer quota is used up, so the write never blocks.
PIPE_SCRIPT_MAX = 4096
F_SETPIPE_SZ = 1031
PIPE_BYTES = 1 << 20
NAME_RE = re.compile(r'^[A-Za-z_][A-Za-z0-9_]*$')
# How long kill_strays keeps at it (a process the kernel keeps, in an uninterruptible wait, is
# left after that, as it was after the old 2 s wait).
KILL_STRAYS_SECONDS = 3.0


def sq(value):
    """A shell single-quoted word."""
    return "'" + value.replace("'", "'\\''") + "'"


_ANSI = {ord('a'): 7, ord('b'): 8, ord('e'): 27, ord('E'): 27, ord('f'): 12, ord('n'): 10, ord('r'): 13,
         ord('t'): 9, ord('v'): 11, ord('\\'): 92, ord("'"): 39, ord('"'): 34, ord('?'): 63}
_OCTAL = b'01234567'
_HEX = b'0123456789abcdefABCDEF'


def _ansi_c(data, k, out):
    """Decodes a bash $'...' body from data[k:] into out; returns the index after the closing quote."""
    n = len(data)
    while k < n and data[k] != 39:
        c = data[k]
        if c != 92:
            out.append(c)
            k += 1
            continue
        if k + 1 >= n:  # a backslash last: a cut dump
            return n
        e = data[k + 1]
        k += 2
        if e in _ANSI:
            out.append(_ANSI[e])
        elif e in _OCTAL:
            j = k - 1
            while k < n and k - j < 3 and data[k] in _OCTAL:
                k += 1
            out.append(int(data[j:k], 8) & 0xFF)
        elif e in b'xuU':
            j, width = k, {ord('x'): 2, ord('u'): 4, ord('U'): 8}[e]
            while k < n and k - j < width and data[k] in _HEX:
                k += 1
            v = int(data[j:k] or b'0', 16)
            if e == ord('x'):
                out.append(v)
            elif v <= 0x10FFFF:
                out += chr(v).encode('utf-8', 'surrogatepass')
        elif e == ord('c'):
            if k >= n:
                return n
            out.append(data[k] & 0x1F)
            k += 1
        else:
            out += bytes([92, e])
    return k + 1


def parse_export_p(data):
    """Exported variables from bash's `export -p` output (`declare -x NAME="…"` or `NAME=$'…'`)."""
    # The dump is the command's to write (it can replace the exit trap): any bytes must end
    # the loop, each turn strictly past the last (a `declare -` with no space after it once
    # sent the scan back to the start of the data, forever).
    env, i, n = {}, 0, len(data)
    while i < n:
        if not data.startswith(b'declare -', i):
            nl = data.find(b'\n', i)
            i = n if nl < 0 else nl + 1
            continue
        sp = data.find(b' ', i + 9)
        if sp < 0:
            break
        flags, k = data[i + 9:sp], sp + 1
        j = k
        while j < n and data[j] not in (61, 10):
            j += 1
        name = data[k:j].decode('utf-8', 'surrogateescape')
        if j >= n or data[j] == 10:
            i = j + 1
            continue
        k, out = j + 1, bytearray()
        if data.startswith(b"$'", k):
            k = _ansi_c(data, k + 2, out)
        elif data[k:k + 1] == b'"':
            k += 1
            while k < n and data[k] != 34:
                if data[k] == 92 and k + 1 < n and data[k + 1] in b'"$`\\\n':
                    out.append(data[k + 1])
                    k += 2
                else:
                    out.append(data[k])
                    k += 1
            k += 1
        else:
            while k < n and data[k] != 10:
                out.append(data[k])
                k += 1
        i = k + 1
        if b'a' not in flags and b'A' not in flags:
            env[name] = out.decode('utf-8', 'surrogateescape')
    return env


# ---------------------------------------------------------------- shells (exec, session)

class Shells:
    """The agent's shells: the idle ones (see ZYGOTES), the calls running in them, and the
    persistent session (cwd and exported environment) they carry from call to call."""

    def __init__(self, loop):
        self.loop = loop
        self.sel = loop.sel
        self.protected = loop.protected
        self.calls = {}  # pid -> Call
        self.counter = 0
        with as_helper():
            base = container_env()
        for k in HIDDEN_ENV:
            base.pop(k, None)
        self.base_env = base
        self.home = base.get('HOME') or '/home/agent'
        # Every shell starts with these (inherited); see limits_intact. Where the kernel has
        # no /proc/PID/limits (gVisor) each call's script checks them itself (ulimit_guard).
        try:
            with open('/proc/self/limits', 'rb') as f:
                self.limits = f.read()
            self.limits_guard = ''
        except FileNotFoundError:
            self.limits = None
            self.limits_guard = ulimit_guard()
        self.cwd = WORKSPACE
        self.env = dict(base)
        self.zygotes = []
        self.zcount = 0
        # Idle shells were killed by another hand since the host's last request: the
        # verifier's runner kills every process of the agent's twice (before and after the
        # verifier), and refilling at once started two shells each time, only for them to
        # be killed again or the sandbox reset or removed: ~100 ms of CPU beside each
        # verification. The pool is filled again after the host's next request; a call that
        # comes first starts its own shell.
        self.lost_idle = False
        self.oom = OomCounter()
        # The last `export -p` parsed, with this call's marker line cut out, and the env it
        # gave: an unchanged dump (the usual case) is not parsed again.
        self.dump = None
        self.dump_env = None
        # What every idle shell's environment holds once started (a sealed one loses some
        # names), one dict for them all: the script prefix below is cached against it.
        self.zygote_env = {k: v for k, v in base.items() if not secure_exec_drops(k)} if SEALED else base
        # The start of a call's script for one session (env and cwd; see script_prefix).
        self.prefix_for = None
        self.prefix = ''
        self.execs = 0  # calls started (a call's command may be all builtins of a shell already there)
        # Every pid the helper started itself, and those since staging began (see Restorer).
        self.started = set()
        self.spawned = set()

    def exec(self, req):
        """Runs `command` in the persistent session (or, `fresh`, a session of its own), in a
        shell started ahead of time; answers when the command ends or its timeout passes."""
        self.execs += 1
        if not ISOLATED:
            # Commands run as the helper's user and may have removed it. Isolated, it is root's
            # in the sticky /dev/shm, which a reset clears around it: a call needs it only
            # for a script too long for the pipe (below), not on every call's path.
            ensure_priv()
        fresh = bool(req.get('fresh'))
        if fresh:
            self.counter += 1
            marker = 'f%d' % self.counter
            env, cwd = self.base_env, WORKSPACE
        else:
            last = self.env.get(MARKER, '0')
            marker = req.get('retry_marker') or str(int(last) + 1 if last.isdigit() else 1)
            self.env[MARKER] = marker
            env, cwd = self.env, self.cwd
        z = self.take_zygote()
        marker_line = ('builtin export %s=%s 2>/dev/null\n' % (MARKER, sq(marker))
                       if z.env.get(MARKER) != marker else '')
        # bash variables end at a NUL, as `read -d ''` of the command did.
        script = (self.limits_guard + self.script_prefix(z.env, env, cwd) + marker_line + TRAP
                  + '__stepbox_c=%s\n' % sq(req['command'].split('\0', 1)[0])).encode('utf-8', 'surrogateescape')
        via_file = SHELLS_ON_DEMAND or len(script) > PIPE_SCRIPT_MAX
        if via_file:
            ensure_priv()
            with as_helper():
                write_file(z.base + '.sh', script, 0o644 if ISOLATED else 0o600)
            script = b'g' if SHELLS_ON_DEMAND else ('builtin . %s\n' % sq(z.base + '.sh')).encode('utf-8', 'surrogateescape')
        oom_before = self.oom.read()
        # The command's own time (its reply's duration_ms) runs from here, the script handed
        # to the shell, to the helper seeing the shell gone (see Call.on_exit): the helper's
        # own work before and after is the call's overhead, never the command's.
        start = time.monotonic()
        try:
            os.write(z.go_w, script)
        except OSError as e:
            # The shell died while it waited (a `pkill bash`): its exit retries the call.
            log('shell %d gone before call %s: %s' % (z.pid, req.get('id'), e))
        # The shell sources its script up to this EOF: closed first, so it runs while the
        # call is set up below (its pipes registered: epoll is level-triggered, so what the
        # shell wrote, or its end, meanwhile is reported all the same).
        os.close(z.go_w)
        z.go_w = None
        call = Call(self, req, z, marker, fresh, oom_before, start)
        call.script_file = via_file
        self.calls[z.pid] = call
        call.register()

    def script_prefix(self, zenv, env, cwd):
        """The lines that turn an idle shell's environment `zenv` into the session's (`env`,
        every name but the call marker, and `cwd`): computed again only when the session
        changed. The session's env dict is replaced whenever it changes (save_state,
        set_session, reset), never changed in place but for the marker, so its identity
        (held here, never an id() that a new dict could reuse) stands for its content."""
        key = self.prefix_for
        if key is not None and key[0] is zenv and key[1] is env and key[2] == cwd:
            return self.prefix
        lines = []
        gone = [k for k in zenv if k not in env and k != MARKER and NAME_RE.match(k)]
        if gone:
            lines.append('builtin unset %s 2>/dev/null\n' % ' '.join(gone))
        for k, v in env.items():
            if k != MARKER and NAME_RE.match(k) and zenv.get(k) != v:
                lines.append('builtin export %s=%s 2>/dev/null\n' % (k, sq(v)))
        lines.append('builtin cd -- %s 2>/dev/null || builtin cd -- %s 2>/dev/null\n' % (sq(cwd), sq(WORKSPACE)))
        self.prefix = ''.join(lines)
        self.prefix_for = (zenv, env, cwd)
        return self.prefix

    def take_zygote(self):
        """A ready shell (alive), or a new one when none is."""
        while self.zygotes:
            z = self.zygotes.pop(0)
            # Its pidfd stays registered: the call's register() gives it the call's callback
            # (no epoll syscall); a shell not used is unregistered here. No waitpid to ask if
            # it is alive: an idle shell's death is reported by its pidfd (on_zygote_exit took
            # it out of the pool), and one that died since is met as any shell killed while it
            # waits: the write of its script fails, the call sees it gone without having said
            # `s` and runs again in another (Call.finish). Without pidfds, asked here.
            if z.pidfd is not None or z.alive():
                if not self.limits_intact(z):
                    # A command of the agent's lowered its limits (prlimit needs only the same
                    # uid, not ptrace): the next call must not run crippled. Another shell.
                    log('idle shell %d had its resource limits changed; discarding it' % z.pid)
                    try:
                        os.kill(z.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    if z.pidfd is not None:
                        self.sel.unregister(z.pidfd)
                    z.discard()
                    continue
                # A command's `kill -STOP -1` stops idle shells too: the call must not hang in one.
                try:
                    os.kill(z.pid, signal.SIGCONT)
                except OSError:
                    pass
                return z
            if z.pidfd is not None:
                self.sel.unregister(z.pidfd)
            z.discard()
        return self.spawn_zygote(idle=False)

    def limits_intact(self, z):
        """Whether a shell's resource limits are still the helper's own (what it inherited):
        its /proc limits file, opened when it started, read again from its start (one pread;
        the kernel writes the file anew from the process's limits of now)."""
        if self.limits is None:
            return True  # no /proc/PID/limits: the call's script checks (see ulimit_guard)
        if z.limits_fd is None:
            return False
        try:
            return os.pread(z.limits_fd, 65536, 0) == self.limits
        except OSError:
            return False

    def spawn_zygote(self, idle=True):
        """Starts a bash that waits for its command; raises tool_failed when no process can start."""
        ensure_priv()
        self.zcount += 1
        try:
            z = Zygote(PRIV + '/z%d' % self.zcount, self.base_env, self.zygote_env)
        except OSError as e:
            if e.errno == errno.EAGAIN:
                raise ToolErr('tool_failed', 'cannot start the command: the sandbox is out of processes (PID limit reached)')
            raise ToolErr('tool_failed', 'cannot start the command: %s' % e)
        self.spawned.add(z.pid)
        self.started.add(z.pid)
        if idle:
            if z.pidfd is not None:
                self.sel.register(z.pidfd, selectors.EVENT_READ, (self.on_zygote_exit, z))
            self.zygotes.append(z)
        return z

    def refill(self):
        """Keeps ZYGOTES shells ready; a failure (PID limit) just leaves the pool short."""
        while len(self.zygotes) < ZYGOTES:
            try:
                self.spawn_zygote()
            except ToolErr:
                return

    def on_zygote_exit(self, z):
        # Something killed an idle shell (pkill bash, say): the loop starts another once the
        # host asks for something (see lost_idle).
        if z in self.zygotes:
            self.zygotes.remove(z)
            self.sel.unregister(z.pidfd)
            z.discard()
            self.lost_idle = True

    def drop_idle(self):
        """Kills the idle shells (the loop starts fresh ones); returns them, to be reaped."""
        dropped = self.zygotes
        for z in dropped:
            if z.pidfd is not None:
                self.sel.unregister(z.pidfd)
            try:
                os.kill(z.pid, signal.SIGKILL)
            except OSError:
                pass
            z.discard()
        self.zygotes = []
        return dropped

    def op_kill_strays(self, _req):
        """Kills every process but init, the main command, the helper and its idle shells;
        empties /tmp, $HOME, /dev/shm, message queues and System V IPC."""
        self.kill_strays()
        return {}

    def kill_strays(self):
        """Kills every process but init, the main command, this helper and other exec roots (ppid 0)."""
        for call in list(self.calls.values()):
            call.kill_tree()
        keep = self.protected | {z.pid for z in self.zygotes}

        def strays(skip):
            found = set()
            for pid in all_pids():
                if pid in keep or pid in skip:
                    continue
                s = proc_stat(pid)
                if s is not None and s.ppid != 0 and live_state(pid, s.state):
                    found.add(pid)
            return found
        # Until none is left: a leftover of the agent's that forks anew, or kills or stops
        # everything it may, is stopped and killed with the rest (see end_all).
        if not end_all(strays, KILL_STRAYS_SECONDS):
            log('kill_strays: processes still alive after %.0f s: %s' % (KILL_STRAYS_SECONDS, sorted(strays(()))[:10]))
        for call in list(self.calls.values()):
            call.finish_killed('cancelled', 'the call was stopped by a rollback or reset')
        self.clear_scratch()

    def clear_scratch(self):
        """Empties every place outside /workspace a command can write (the root is read-only):
        /tmp, $HOME, /dev/shm (but the helper's own directory), POSIX message queues and
        System V IPC objects. A rollback then leaves what a fork from the same step has: the
        workspace of the snapshot and nothing else of the steps undone."""
        clear_dir('/tmp')
        clear_dir(self.home)
        clear_dir('/dev/shm', keep=os.path.basename(PRIV))
        clear_dir('/dev/mqueue')
        self.clear_sysv_ipc()

    def clear_sysv_ipc(self):
        """Removes the agent's System V shared memory, semaphores and message queues (only
        their owner can: an `ipcrm --all` run as the agent), when there are any."""
        for kind in ('shm', 'sem', 'msg'):
            try:
                with open('/proc/sysvipc/' + kind, 'rb') as f:
                    if len(f.read().splitlines()) > 1:
                        break
            except OSError:
                continue
        else:
            return
        try:
            pid = spawn_as_agent(runtime_program('ipcrm') + ['--all'], self.base_env, [None, None, None])
            os.waitpid(pid, 0)
        except OSError as e:
            log('cannot remove the System V IPC objects: %s' % e)

    def reset(self):
        """A fresh session: the container's environment, cwd /workspace."""
        self.cwd = WORKSPACE
        self.env = dict(self.base_env)

    def op_get_session(self, _req):
        """The session's cwd and exported environment."""
        return {'cwd': self.cwd, 'env': self.env}

    def op_set_session(self, req):
        """Replaces the session's cwd and exported environment (a rollback, a restarted helper)."""
        self.cwd = req['cwd']
        self.env = {k: v for k, v in req['env'].items() if k not in HIDDEN_ENV}
        return {}
