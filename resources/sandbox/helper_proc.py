# stepbox helper, part: reading /proc: process states, who holds a file, the cgroup's OOM counter,
# which processes are never killed (whether one still runs, stopping and killing them:
# verifier_run.py's proc_running and stop_then_kill, which the verifier runner shares).
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import collections
import os
import time


# ---------------------------------------------------------------- /proc

ProcStat = collections.namedtuple('ProcStat', 'state ppid pgrp session starttime')
# What a process that is gone counts as where only its state matters.
ZOMBIE = ProcStat(b'Z', 0, 0, 0, 0)


def proc_stat(pid):
    """A process's ProcStat, or None when it is gone."""
    try:
        with open('/proc/%d/stat' % pid, 'rb') as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b')') + 2:].split()
    return ProcStat(rest[0], int(rest[1]), int(rest[2]), int(rest[3]), int(rest[19]))


def wait_ended(pids, seconds):
    """Waits, up to `seconds`, until each of `pids` is gone or a zombie; answers those still
    running. kill() returns before its victims die: on a busy machine one can still be listed
    (or finish a write it was in) after the helper answered."""
    deadline = time.monotonic() + seconds
    while pids and time.monotonic() < deadline:
        pids = {pid for pid in pids if proc_running(pid)}
        if pids:
            time.sleep(0.001)
    return pids


def last_pid():
    """The last pid allocated in this pid namespace (/proc/loadavg's last field)."""
    with open('/proc/loadavg', 'rb') as f:
        return int(f.read().split()[-1])


def all_pids():
    return [int(n) for n in os.listdir('/proc') if n.isdigit()]


def held_files(pid, ws_dev, mapped):
    """Whether a process holds a file of /workspace (a shared mapping of one, an fd on one)
    or may hold one unseen (a socket, which can carry fds; an io_uring, which registers
    them); True when it cannot be read, None when it is gone. Adds the inode of each
    /workspace file it has mapped shared to `mapped`."""
    held = False
    dev = ('%02x:%02x' % (os.major(ws_dev), os.minor(ws_dev))).encode()
    try:
        with open('/proc/%d/maps' % pid, 'rb') as f:
            for line in f:
                fields = line.split(None, 5)
                if len(fields) == 6 and fields[1][3:4] == b's' and (fields[3] == dev or fields[5].startswith(WORKSPACE_B)):
                    held = True
                    mapped.add(int(fields[4]))
        if held:
            return True
        for fd in os.listdir('/proc/%d/fd' % pid):
            link = '/proc/%d/fd/%s' % (pid, fd)
            try:
                target = os.readlink(link)
                if target.startswith(('pipe:', 'anon_inode:[event', 'anon_inode:[signal', 'anon_inode:[timer', 'anon_inode:[pidfd')) or target == '/dev/null':
                    continue
                if target.startswith(('socket:', 'anon_inode:')) or os.stat(link).st_dev == ws_dev:
                    return True
            except FileNotFoundError:
                continue
    except (FileNotFoundError, ProcessLookupError):
        return None
    except PermissionError:
        # Root's (a shell the helper started, still in setpriv before it drops to the agent's
        # uid): nothing of the agent's can have touched it. Non-dumpable at the agent's uid:
        # between setpriv's setuid and its exec, or made so by something of the agent's.
        return False if owned_by_root(pid) else UNREADABLE
    except OSError:
        return True
    return False


UNREADABLE = 'unreadable'


def engine_root_exec(pid, s):
    """Whether a process is an exec the engine started as root (ppid 0: its parent is outside
    the container; every uid 0), such as a verifier runner started ahead and waiting for its
    command. Not the agent's: the agent can become neither root (no capability,
    no-new-privileges) nor a child of nothing (orphans go to init)."""
    return s.ppid == 0 and owned_by_root(pid)


def owned_by_root(pid):
    try:
        with open('/proc/%d/status' % pid, 'rb') as f:
            for line in f:
                if line.startswith(b'Uid:'):
                    return line.split()[1:] == [b'0'] * 4
    except OSError:
        pass
    return False


def task_ids(pid):
    """The thread ids of a process (none when it is gone)."""
    try:
        return [int(n) for n in os.listdir('/proc/%d/task' % pid) if n.isdigit()]
    except OSError:
        return []


def environ_has(pid, needle):
    try:
        with open('/proc/%d/environ' % pid, 'rb') as f:
            return needle in f.read()
    except OSError:
        return False


def ignores_sighup(pid):
    try:
        with open('/proc/%d/status' % pid, 'rb') as f:
            for line in f:
                if line.startswith(b'SigIgn:'):
                    return int(line.split()[1], 16) & 1 == 1
    except OSError:
        pass
    return False


class OomCounter:
    """The container cgroup's oom_kill counter (v1 memory.oom_control, v2 memory.events),
    read twice per call: the file stays open and each read is one pread."""

    PATHS = ('/sys/fs/cgroup/memory/memory.oom_control', '/sys/fs/cgroup/memory.events')

    def __init__(self):
        self.fd = None
        for path in self.PATHS:
            try:
                self.fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            if self.read() is not None:
                return
            os.close(self.fd)
            self.fd = None

    def read(self):
        """The counter now, or None when the container cannot read it."""
        if self.fd is None:
            return None
        try:
            data = os.pread(self.fd, 4096, 0)
        except OSError:
            return None
        at = data.find(b'oom_kill ')
        if at < 0:
            return None
        return int(data[at + 9:].split(None, 1)[0])


def workspace_full():
    try:
        s = os.statvfs(WORKSPACE)
    except OSError:
        return False
    return s.f_bavail * s.f_frsize < max(64 * 1024, s.f_blocks * s.f_frsize // 200)


def find_protected(me):
    """(pids never killed: init, the container's main command (oldest child of init) and
    this helper; the main command's pid, None when it is gone)."""
    keep = {1, me}
    oldest = None
    for pid in all_pids():
        s = proc_stat(pid)
        if s and s.ppid == 1 and (oldest is None or s.starttime < oldest[1]):
            oldest = (pid, s.starttime)
    if oldest:
        keep.add(oldest[0])
    return keep, oldest[0] if oldest else None
