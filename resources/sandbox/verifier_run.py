# stepbox, part of the verifier runner (verifier.py) and of the helper (its `verify` op): the
# verifier's environment and bash, the kill of every process of the agent's, and the watch of
# its run from start to report — one way for both programs that run a verifier.
# Sent to the sandbox as one source with the prelude and the program (programs.json), and read
# in one namespace, so it uses their names as its own.
import binascii
import os
import selectors
import signal
import time


# Variables that make a shell or an interpreter read a file before the command (dropped),
# and path lists whose entries the agent can write (cut out, see agent_env).
DROPPED_ENV = ('BASH_ENV', 'ENV', 'LD_PRELOAD', 'LD_AUDIT', 'PYTHONSTARTUP', 'PYTHONUSERBASE', 'PYTHONINSPECT')
PATH_LISTS = ('PATH', 'PYTHONPATH', 'LD_LIBRARY_PATH')

# How long end_agents keeps at it before it gives up (the verifier then does not run).
END_AGENTS_SECONDS = 10.0


def agent_writable(path):
    """Whether the agent (this process's effective uid, the agent's while asked) can change what
    `path` names: a relative entry (the workspace), or the path or any directory above it
    (after symlinks) writable."""
    if not path.startswith('/'):
        return True
    p = os.path.realpath(path)
    while True:
        # The effective ids: the runner's while it computes agent_env_as_agent (the real
        # ones stay root's); a forked child's real and effective ids are both the agent's.
        if os.access(p, os.W_OK, effective_ids=True):
            return True
        if p == '/':
            return False
        p = os.path.dirname(p)


def agent_env(base):
    """The verifier's environment: the image's, with a fresh HOME nothing of the agent's has
    seen (made after every process of the agent's is gone), no variable that loads a file
    first, and no path-list entry the agent can write (a fake python3 on PATH, a module on
    PYTHONPATH). Called as the agent's uid."""
    env = {k: v for k, v in base.items() if k not in DROPPED_ENV}
    for k in PATH_LISTS:
        if k in env:
            env[k] = ':'.join(p for p in env[k].split(':') if p and not agent_writable(p))
    home = '/'
    try:
        d = '/tmp/.stepbox-verifier-' + binascii.hexlify(os.urandom(6)).decode()
        os.mkdir(d, 0o700)
        home = d
    except OSError:
        pass
    env['HOME'] = home
    return env


def _ids_and_state(path):
    """(real uid, saved uid, state letter) from a /proc status file; None when it is gone."""
    ids = state = None
    try:
        with open(path + '/status', 'rb') as f:
            for line in f:
                if line.startswith(b'State:'):
                    state = line.split()[1]
                elif line.startswith(b'Uid:'):
                    ids = line.split()[1:4]
    except OSError:
        return None
    if ids is None or state is None:
        return None
    return int(ids[0]), int(ids[2]), state


def live_state(pid, state):
    """Whether a process in `state` can still act: not a zombie, or a zombie leader with a
    thread left (its threads run on after the leader's exit)."""
    if state not in (b'Z', b'X'):
        return True
    try:
        tids = [t for t in os.listdir('/proc/%d/task' % pid) if t.isdigit()]
    except OSError:
        return False
    return any((_ids_and_state('/proc/%d/task/%s' % (pid, t)) or (0, 0, b'Z'))[2] not in (b'Z', b'X')
               for t in tids)


def proc_running(pid):
    """Whether a process is there and can still act (see live_state)."""
    got = _ids_and_state('/proc/%d' % pid)
    return got is not None and live_state(pid, got[2])


def agents_of(uid, me, skip=()):
    """The live processes of the agent's uid but `me` and `skip`: every one whose real or saved
    uid is `uid`, those the kernel lets a process of that uid signal (a sealed shell's /proc
    entry is root's, so its owner would not say). Root's processes, this one's and the
    helper's (real and saved uid 0, whatever their effective uid), are never among them."""
    found = set()
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me or pid in skip:
            continue
        got = _ids_and_state('/proc/' + name)
        if got is not None and uid in got[:2] and live_state(pid, got[2]):
            found.add(pid)
    return found


def stop_then_kill(find, rounds):
    """SIGSTOPs the pids `find(stopped)` lists beyond those stopped so far, until it lists no
    new one (or `rounds` passed): nothing stopped can fork or change its signal dispositions
    meanwhile. Then SIGKILLs them all; answers the pids it stopped."""
    stopped = set()
    for _ in range(rounds):
        new = set()
        for pid in find(stopped):
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                continue
            new.add(pid)
        if not new:
            break
        stopped |= new
    for pid in stopped:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return stopped


def end_all(find, seconds):
    """Ends every process `find(skip)` lists (the live ones to end, but `skip`) and answers True
    once a look finds none; False when some are still alive after `seconds`.

    They are stopped first, and what they start meanwhile, so a fork loop cannot outrun the
    kill; then killed, and looked for again until none is left: a kill that reached each one
    found is no proof that none is left (one may have forked between the look and its stop,
    and gVisor's kill(-1) is not atomic against forks either). The signals are this process's
    own: root's (the runner) or the helper's (real and saved uid 0), which no process of the
    agent's may signal, so a leftover spinning on `kill -9 -1` or `kill -STOP -1` cannot stop
    or kill the killer (a killer child of the agent's uid calling kill(-1) was killed or
    stopped by such a loop first, on gVisor nearly every time)."""
    deadline = time.monotonic() + seconds
    while True:
        if not find(()):
            return True
        if time.monotonic() > deadline:
            return False
        killed = stop_then_kill(find, 100)
        # SIGKILL is acted on by each process on its own way out: that is waited for before
        # the next look (which would find them still alive and stop and kill them again).
        end = time.monotonic() + 1.0
        while killed and time.monotonic() < end:
            killed = {pid for pid in killed if proc_running(pid)}
            if killed:
                time.sleep(0.001)


def end_agents(uid, me):
    """Ends every process of the agent's uid (agents_of) but `me`; True once none is left,
    False when some still are after END_AGENTS_SECONDS (see end_all)."""
    return end_all(lambda skip: agents_of(uid, me, skip), END_AGENTS_SECONDS)


def bash_on(env):
    """The bash the verifier runs in: the first on its PATH (which lists no directory the
    agent can write), else the runtime's static one (an image without bash)."""
    for d in env.get('PATH', '').split(':'):
        if d.startswith('/') and os.access(d + '/bash', os.X_OK) and not os.path.isdir(d + '/bash'):
            return d + '/bash'
    return RUNTIME_BASH


def watch_verifier(pid, out_r, err_r, timeout_ms, cap, kill_all, agents):
    """Watches a verifier started as `pid` (None: it could not start) writing to the pipes
    `out_r`/`err_r` (their write ends already closed; the read ends are closed here): keeps `cap` bytes of each, kills
    everything of the agent's (`kill_all`) when it runs out of time, and what it left behind
    when it returns (when `agents()` finds any). Returns (exit code, signal, timed out, kept
    stdout, kept stderr, stdout total, stderr total)."""
    kept, total = {out_r: bytearray(), err_r: bytearray()}, {out_r: 0, err_r: 0}
    sel = selectors.DefaultSelector()
    for fd in kept:
        sel.register(fd, selectors.EVENT_READ)
    pidfd = None
    if pid is not None:
        try:
            pidfd = os.pidfd_open(pid)
            sel.register(pidfd, selectors.EVENT_READ)
        except (AttributeError, OSError):
            pidfd = None
    deadline = time.monotonic() + timeout_ms / 1000.0
    status, timed_out = None, False
    if pid is None:
        status = 127 << 8  # exited 127, as a child that failed before its exec

    def reaped(st):
        if pidfd is not None and pidfd in sel.get_map():
            sel.unregister(pidfd)
        # Whatever the verifier left running goes too; its pipes then reach EOF. With no process
        # of the agent's left there is nothing to kill (only one of its own could start another):
        # the killer's fork and wait are spared.
        if agents():
            kill_all()
        return st

    while status is None or len(sel.get_map()) > 0:
        if status is None:
            p, st = os.waitpid(pid, os.WNOHANG)
            if p:
                status = reaped(st)
                continue
        left = deadline - time.monotonic()
        if status is None and left <= 0:
            timed_out = True
            kill_all()
            status = reaped(os.waitpid(pid, 0)[1])
            continue
        if status is not None and left < -5:
            break  # pipes held open past every kill: give up on the rest of the output
        wait = 0.05 if pidfd is None else max(0.0, left)
        for key, _ in sel.select(wait if status is None else 1.0):
            if key.fd == pidfd:
                continue  # the waitpid at the top reaps it
            data = os.read(key.fd, 65536)
            if not data:
                sel.unregister(key.fd)
                continue
            total[key.fd] += len(data)
            room = cap - len(kept[key.fd])
            if room > 0:
                kept[key.fd] += data[:room]
    # The helper lives on after a verification: nothing of this one stays open in it.
    sel.close()
    for fd in (out_r, err_r, pidfd):
        if fd is not None:
            os.close(fd)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    return code, sig, timed_out, bytes(kept[out_r]), bytes(kept[err_r]), total[out_r], total[err_r]
