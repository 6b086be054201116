# stepbox sandbox prelude: what every program stepbox runs as root inside the sandbox shares
# (helper.py, bridge.py, verifier.py) — the one way a process of theirs becomes the agent.
#
# Loaded ahead of each program: the host sends this file's source, the program's parts (the
# helper's: programs.json), then the program's, as one source to `python3 -I -c`
# (sandbox-resources.ts, loadSandboxProgram); a program run from its file (tests) reads them
# into its namespace the same way (load_parts). It only defines: nothing runs at import.
#
# Becoming the agent, in a child about to exec, AFTER its fds are set (so nothing of the
# root parent's — its channel to the host above all — is held once it is the agent's uid):
#   1. an empty capability bounding set (with CAP_SETPCAP, which the container grants
#      root's execs only): nothing the agent runs can ever hold a capability;
#   2. no supplementary groups;
#   3. real gid the agent's; effective and saved gid the agent's, or SEAL_GID to seal it
#      (real and effective gid apart, the kernel makes the exec non-dumpable: no process of
#      the agent's can ptrace it, read its memory or open its fds through /proc);
#   4. real, effective and saved uid the agent's.
# setpriv_prefix() is the same drop for a posix_spawn of setpriv (no fork of the parent).
import os

PRELUDE = 'stepbox.prelude/1'
# The agent's uid and gid (the sandbox user).
AGENT_UID = 1000
# A gid that owns nothing: the effective gid of a sealed process until it drops back.
SEAL_GID = 65534
CAP_SETPCAP = 8
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_LIBC = []


def libc_or_none():
    """The C library through ctypes (once), or None where ctypes is missing."""
    if not _LIBC:
        try:
            import ctypes
            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        except (ImportError, OSError):
            _LIBC.append(None)
    return _LIBC[0]


def capability_mask():
    """This process's effective capability mask (0 when unreadable)."""
    try:
        with open('/proc/self/status', 'rb') as f:
            for line in f:
                if line.startswith(b'CapEff:'):
                    return int(line.split()[1], 16)
    except (OSError, ValueError):
        pass
    return 0


def can_drop_bounding():
    """Whether this process may empty a child's bounding set (it holds CAP_SETPCAP)."""
    return bool(capability_mask() & (1 << CAP_SETPCAP))


def suid_dumpable():
    """The host's fs.suid_dumpable (b'1' voids the seal), b'?' when unreadable."""
    try:
        with open('/proc/sys/fs/suid_dumpable', 'rb') as f:
            return f.read().strip()
    except OSError:
        return b'?'


def undumpable():
    """Seals this process: no process of another uid can ptrace it, read its memory or open
    its fds through /proc (a root program that keeps a channel to the host)."""
    libc = libc_or_none()
    if libc is not None:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def drop_bounding_set():
    """Empties this process's capability bounding set (needs CAP_SETPCAP; a no-op without)."""
    libc = libc_or_none()
    if libc is None:
        return
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:  # EINVAL past the last cap, EPERM without SETPCAP
            break


def become(uid, gid, seal_gid=None, bounding=None):
    """Makes this process (a child about to exec, its fds already set) the agent: steps 1-4
    above. `bounding`: whether to empty the bounding set (None: when CAP_SETPCAP is held)."""
    if bounding is None:
        bounding = can_drop_bounding()
    if bounding:
        drop_bounding_set()
    os.setgroups([])
    effective = gid if seal_gid is None else seal_gid
    os.setresgid(gid, effective, effective)
    os.setresuid(uid, uid, uid)


def setpriv_prefix(setpriv, uid, gid, seal_gid=None, bounding=None):
    """The argv prefix that makes setpriv(1) do what become() does before it execs the rest.
    `setpriv` is its path, or the argv that starts it (the runtime's loader, then setpriv)."""
    if bounding is None:
        bounding = can_drop_bounding()
    gids = ['--rgid=%d' % gid, '--egid=%d' % seal_gid] if seal_gid is not None else ['--regid=%d' % gid]
    start = list(setpriv) if isinstance(setpriv, (list, tuple)) else [setpriv]
    return (start + (['--bounding-set=-all'] if bounding else []) + ['--reuid=%d' % uid] + gids
            + ['--clear-groups', '--'])


class effective_ids(object):
    """For a while, another user's effective uid/gid and no supplementary groups (the kernel
    checks files as theirs); root's effective ids come back after. The real and saved uids
    stay root's, so a process of that user's can still not signal or ptrace this one."""

    def __init__(self, uid, gid):
        self.uid, self.gid = uid, gid

    def __enter__(self):
        os.setgroups([])
        os.setegid(self.gid)
        os.seteuid(self.uid)
        return self

    def __exit__(self, *exc):
        os.seteuid(0)
        os.setegid(0)
        return False


def load_parts(program, namespace):
    """A program run from its file (tests): what the host sends ahead of its source
    (programs.json: this prelude, then the program's parts), read from beside it into its
    namespace, as in the sandbox, where they are one source."""
    import json
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, 'programs.json')) as f:
        parts = json.load(f)[program]
    for part in parts:
        path = os.path.join(here, part)
        with open(path) as f:
            exec(compile(f.read(), path, 'exec'), namespace)
