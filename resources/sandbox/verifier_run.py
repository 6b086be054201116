# stepbox, part of the verifier runner (verifier.py) and of the helper (its `verify` op): the
# verifier's environment and bash, the kill of every process of the agent's, and the watch of
# its run from start to report — one way for both programs that run a verifier.
# Sent to the sandbox as one source with the prelude and the program (programs.json), and read
# in one namespace, so it uses their names as its own.
import binascii
import os
import selectors
import time


# Variables that make a shell or an interpreter read a file before the command (dropped),
# and path lists whose entries the agent can write (cut out, see agent_env).
DROPPED_ENV = ('BASH_ENV', 'ENV', 'LD_PRELOAD', 'LD_AUDIT', 'PYTHONSTARTUP', 'PYTHONUSERBASE', 'PYTHONINSPECT')
PATH_LISTS = ('PATH', 'PYTHONPATH', 'LD_LIBRARY_PATH')

# The killer: the runtime's busybox kill (never the image's), run as the agent's uid.
VERIFIER_KILL = [RUNTIME + '/bin/busybox', 'kill']


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


def agent_count(uid, me):
    """Processes of `uid` but `me`."""
    n = 0
    for name in os.listdir('/proc'):
        if name.isdigit() and int(name) != me:
            try:
                if os.stat('/proc/' + name).st_uid == uid:
                    n += 1
            except OSError:
                pass
    return n


def bash_on(env):
    """The bash the verifier runs in: the first on its PATH (which lists no directory the
    agent can write), else the runtime's static one (an image without bash)."""
    for d in env.get('PATH', '').split(':'):
        if d.startswith('/') and os.access(d + '/bash', os.X_OK) and not os.path.isdir(d + '/bash'):
            return d + '/bash'
    return RUNTIME_BASH


def kill_until_sent(kill_once):
    """SIGKILL to every process of the agent's uid, sent by a child of that uid (kill(-1)
    spares only its caller, which exits right after). Once the child has that uid, a
    process of the agent's spinning on kill(-1) can kill it first: the child then dies by a
    signal, having killed nothing, and is sent again until one gets its kill out.
    `kill_once()` starts one such child and says whether it got its kill out."""
    for _ in range(1000):
        if kill_once():
            return True
    return False


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
