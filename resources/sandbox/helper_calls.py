# stepbox helper, part: one call's shell (Zygote) and its run (Call): output, timeout, the kill of
# its process tree, and its result.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import os
import selectors
import signal
import time

# How long, at most, what a call left in its process group gets to settle before the group is
# hung up (see Call.hang_up).
HANG_UP_GRACE = 0.25


def unsettled_members(pgrp):
    """The live processes of group `pgrp` that do not ignore SIGHUP (zombies hold nothing)."""
    out = []
    for pid in all_pids():
        s = proc_stat(pid)
        if s is not None and s.pgrp == pgrp and s.state not in (b'Z', b'X') and not ignores_sighup(pid):
            out.append(pid)
    return out


class Zygote:
    """A bash started ahead of a call, in its own session, waiting on fd 4 (see DRIVER)."""

    def __init__(self, base, env, started_env):
        self.base = base
        # What the shell's environment holds once started (a sealed one loses some names).
        self.env = started_env
        fds = []
        try:
            for _ in range(2):
                fds.extend(high_pipe())
            # See SHELLS_ON_DEMAND: the state and script pipes root's where /proc would let
            # other processes of the agent's open them.
            if SHELLS_ON_DEMAND:
                with as_helper():
                    fds.extend(high_pipe() + high_pipe())
            else:
                fds.extend(high_pipe() + high_pipe())
            out_r, out_w, err_r, err_w, st_r, st_w, go_r, go_w = fds
            driver = DRIVER_FILE if SHELLS_ON_DEMAND else DRIVER
            # `bash -c SCRIPT bash`: $0 is `bash`, as when it was found by name.
            self.pid = spawn_as_agent(
                [BASH, '-c', driver % {'base': base}, 'bash'], env, [None, out_w, err_w, st_w, go_r])
        except OSError:
            for fd in fds:
                os.close(fd)
            raise
        for fd in (out_w, err_w, st_w, go_r):
            os.close(fd)
        # The helper's ends never block (its loop reads what is there); set now, off the call's path.
        for fd in (out_r, err_r, st_r):
            os.set_blocking(fd, False)
        self.out_r, self.err_r, self.st_r, self.go_w = out_r, err_r, st_r, go_w
        if SEALED:
            # A sealed shell's /proc files are root's: it cannot raise its own score (DRIVER
            # tries), so the helper does, before the shell can start anything.
            try:
                with as_helper():
                    with open('/proc/%d/oom_score_adj' % self.pid, 'w') as f:
                        f.write('1000')
            except OSError:
                pass
        try:
            self.pidfd = os.pidfd_open(self.pid)
        except (OSError, AttributeError):
            self.pidfd = None
        # Opened now, off a call's path (see Shells.limits_intact); the file is this process's
        # (a pid number used again is another process, which it never reads).
        try:
            self.limits_fd = os.open('/proc/%d/limits' % self.pid, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.limits_fd = None

    def alive(self):
        try:
            return os.waitpid(self.pid, os.WNOHANG) == (0, 0)
        except ChildProcessError:
            return False

    def discard(self):
        """Closes an unused shell's pipes (it exits on EOF of fd 4) and reaps it if it is gone."""
        for fd in (self.out_r, self.err_r, self.st_r, self.go_w, self.pidfd, self.limits_fd):
            if fd is not None:
                os.close(fd)
        self.out_r = self.err_r = self.st_r = self.go_w = self.pidfd = self.limits_fd = None
        self.alive()


class Call:
    """One execute_shell call: its bash, pipes, output caps and timer."""

    def __init__(self, shells, req, z, marker, fresh, oom_before, start):
        self.h = shells
        self.req = req
        self.id = req.get('id')
        self.z = z
        pid, out_r, err_r, st_r = z.pid, z.out_r, z.err_r, z.st_r
        self.pid = pid
        self.marker = marker
        self.fresh = fresh
        self.cap = int(req.get('cap') or 1 << 20)
        self.start = start  # the script handed to the shell (see Shells.exec)
        self.timeout_ms = max(1, int(req.get('timeout_ms') or 30000))
        self.deadline = self.start + self.timeout_ms / 1000.0
        self.fds = {out_r: 0, err_r: 1}
        self.st_r = st_r
        self.kept = [bytearray(), bytearray()]
        self.total = [0, 0]
        self.state = bytearray()
        self.oom_before = oom_before
        self.done = False
        self.ended = None  # when the helper saw the command end (see duration_ms)
        self.session_changed = False
        self.pidfd = z.pidfd
        self.script_file = False  # whether its script went through z.base + '.sh'

    def register(self):
        # The read ends are non-blocking since the shell started (Zygote).
        sel = self.h.sel
        for fd in self.fds:
            sel.register(fd, selectors.EVENT_READ, (self.on_output, fd))
        sel.register(self.st_r, selectors.EVENT_READ, (self.on_state, self.st_r))
        if self.pidfd is not None:
            if self.pidfd in sel.get_map():
                # An idle shell's pidfd, still registered: only its callback changes (no syscall).
                sel.modify(self.pidfd, selectors.EVENT_READ, (self.on_exit, None))
            else:
                sel.register(self.pidfd, selectors.EVENT_READ, (self.on_exit, None))

    def read_or_close(self, fd):
        """What `fd` has now: None when nothing yet, b'' at its end (then it is closed)."""
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return None
        if not data:
            self.h.sel.unregister(fd)
            os.close(fd)
        return data

    def on_output(self, fd):
        stream = self.fds.get(fd)
        if stream is None:
            return
        data = self.read_or_close(fd)
        if not data:
            if data is not None:
                del self.fds[fd]
            return
        self.total[stream] += len(data)
        room = self.cap - len(self.kept[stream])
        if room > 0:
            self.kept[stream] += data[:room]

    def on_state(self, fd):
        data = self.read_or_close(fd)
        if not data:
            if data is not None:
                self.st_r = None
            return
        self.state += data

    def drain(self):
        """Reads what the pipes hold now; never waits for EOF (detached processes keep them open)."""
        for fd in list(self.fds):
            while fd in self.fds:
                before = self.total[self.fds[fd]]
                self.on_output(fd)
                if fd in self.fds and self.total[self.fds[fd]] == before:
                    break
        while self.st_r is not None:
            n = len(self.state)
            self.on_state(self.st_r)
            if len(self.state) == n:
                break

    def close_all(self):
        sel = self.h.sel
        for fd in list(self.fds):
            sel.unregister(fd)
            os.close(fd)
        self.fds = {}
        if self.st_r is not None:
            sel.unregister(self.st_r)
            os.close(self.st_r)
            self.st_r = None
        if self.pidfd is not None:
            sel.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = None
        if self.z.limits_fd is not None:
            os.close(self.z.limits_fd)
            self.z.limits_fd = None
        try:
            if self.script_file:
                os.unlink(self.z.base + '.sh')
        except FileNotFoundError:
            pass
        except OSError as e:
            log('cannot remove %s.sh: %s' % (self.z.base, e))
        self.h.calls.pop(self.pid, None)

    def find_procs(self):
        """Every process this call started: its session, descendants, and marked escapes."""
        needle = (MARKER + '=' + self.marker + '\0').encode()
        stats = {}
        for pid in all_pids():
            if pid in self.h.protected:
                continue
            s = proc_stat(pid)
            if s is not None:
                stats[pid] = s
        found = {p for p, s in stats.items() if s.session == self.pid or s.pgrp == self.pid or p == self.pid}
        children = {}
        for p, s in stats.items():
            children.setdefault(s.ppid, []).append(p)
        stack = list(found)
        while stack:
            for c in children.get(stack.pop(), ()):
                if c not in found:
                    found.add(c)
                    stack.append(c)
        for p in stats:
            if p not in found and environ_has(p, needle):
                found.add(p)
        return found

    def kill_tree(self):
        """SIGSTOP everything the call started until no new process appears, then SIGKILL;
        answers the pids killed."""
        return stop_then_kill(lambda stopped: self.find_procs() - stopped, 10)

    def hang_up(self):
        """The call returned: kill its process group, except what ignores SIGHUP (nohup).

        Processes that left the group (setsid) are not in it. The group is stopped first,
        so nothing forks or changes its signal dispositions while we look; a SIGHUP sent
        instead could be lost by a child between fork and exec.

        A command that starts a server and returns (`setsid -f server`, `nohup server &`)
        returns before its child may have run: forked, but not yet out of the group or
        ignoring SIGHUP. Hung up at once, such a child vanished in 5 of 30 calls here and in
        19 of 60 with both cores busy. What is left gets up to HANG_UP_GRACE to settle (each
        member ignoring SIGHUP or gone from the group); a plain `cmd &`, hung up as a
        terminal's job is, waits it out. A call that leaves nothing pays nothing.
        """
        try:
            os.killpg(self.pid, 0)
        except OSError:
            return  # nothing left in the group
        deadline = time.monotonic() + HANG_UP_GRACE
        while unsettled_members(self.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        try:
            os.killpg(self.pid, signal.SIGSTOP)
        except OSError:
            return  # nothing left in the group
        for pid in unsettled_members(self.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(self.pid, signal.SIGCONT)
        except OSError:
            pass

    def reap(self, block):
        try:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return -1
        if pid == 0:
            return None
        return status

    def on_exit(self, _):
        now = time.monotonic()
        status = self.reap(False)
        if status is None:
            return
        self.ended = now
        self.finish(status, None)

    def on_timeout(self):
        # A call that timed out answers once what it started has ended: answered at the
        # kill, a `sleep` of it was still listed by the next call (podman, under load).
        wait_ended(self.kill_tree(), 2.0)
        status = self.reap(True)
        self.finish(status, 'timeout')

    def finish_killed(self, code, message):
        if self.done:
            return
        status = self.reap(True)
        self.finish(status, code, message)

    def finish(self, status, code, message=None):
        if self.done:
            return
        self.done = True
        if self.ended is None:
            self.ended = time.monotonic()
        if code is None:
            self.hang_up()
        self.drain()
        if code is None and not self.state.startswith(b's') and self.req.get('retries', 0) < 3:
            self.close_all()
            # The shell died before it took the command (killed while it waited): run the
            # call again in another one; nothing of it ran.
            retry = dict(self.req, retries=self.req.get('retries', 0) + 1, retry_marker=self.marker)
            if self.fresh:
                retry.pop('retry_marker')
            self.h.loop.dispatch(retry, b'')
            return
        if code is None and self.state.startswith(b'L'):
            # Every shell tried had its limits lowered (see ulimit_guard): nothing ran.
            code, message = 'tool_failed', ("the command did not run: a process of the agent's kept lowering the "
                                            'resource limits of the shells started for it (prlimit); stop it and call again')
        exit_code, sig = None, None
        if status is not None and status >= 0:
            if os.WIFEXITED(status):
                exit_code = os.WEXITSTATUS(status)
            elif os.WIFSIGNALED(status):
                sig = os.WTERMSIG(status)
                exit_code = 128 + sig
        oom_after = self.h.oom.read()
        oom = self.oom_before is not None and oom_after is not None and oom_after > self.oom_before
        if code is None and not self.fresh:
            self.save_state()
        if code is None and oom:
            code, message = 'oom', 'the command ran out of memory and the kernel killed it (memory limit reached)'
        if code is None and ENOSPC_TEXT in self.kept[1] and workspace_full():
            code, message = 'disk_full', '%s is full (No space left on device)' % WORKSPACE
        if code == 'timeout':
            message = 'the command did not finish within %d ms; every process it started was killed' % self.timeout_ms
        header = {
            'id': self.id,
            'ok': True,
            'exit_code': exit_code,
            'signal': sig,
            'stdout_len': len(self.kept[0]),
            'stdout_total': self.total[0],
            'stderr_total': self.total[1],
            'oom': oom,
            'oom_counter': self.oom_before is not None and oom_after is not None,
            'duration_ms': (self.ended - self.start) * 1000.0,
        }
        if code is not None:
            header['error'] = {'code': code, 'message': message}
        if self.session_changed:
            header['session'] = {'cwd': self.h.cwd, 'env': self.h.env}
        send(header, bytes(self.kept[0]) + bytes(self.kept[1]))
        # Its pipes and pidfd are let go once the answer is on its way (nothing else runs in
        # between: the next request is read after this returns).
        self.close_all()
        self.h.loop.active = time.monotonic()
        self.h.loop.call_ended = True

    def save_state(self):
        h = self.h
        data = bytes(self.state)[1:]
        nul = data.find(b'\0')
        # Whole dumps only (see TRAP): the cwd, the dump, the end mark, nothing after. A cut or
        # padded one leaves the session as it was before the command.
        if nul <= 0 or data.find(b'\0', nul + 1) != len(data) - 1:
            if data:
                log('call %s: the session state was cut short or garbled; the session is kept as it was' % self.id)
            return
        data = data[:-1]
        cwd = data[:nul].decode('utf-8', 'surrogateescape')
        # The marker changes every call; anything else in the dump changing means the command
        # changed the env. The NUL stands in for the marker line (a dump never holds one).
        dump = data[nul + 1:].replace(('declare -x %s="%s"\n' % (MARKER, self.marker)).encode(), b'\0', 1)
        if dump == h.dump and h.dump_env is h.env and h.env.get(MARKER) == self.marker:
            env = h.env
        else:
            try:
                parsed = parse_export_p(data[nul + 1:])
            except Exception as e:  # the command wrote the dump; never the helper's loop's end
                log('call %s: the session state could not be read (%s); the session is kept as it was' % (self.id, e))
                return
            env = {k: v for k, v in parsed.items() if k not in HIDDEN_ENV}
        if cwd != h.cwd or env != h.env:
            h.cwd, h.env = cwd, env
            self.session_changed = True
        h.dump, h.dump_env = dump, h.env
