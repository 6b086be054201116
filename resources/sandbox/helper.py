# stepbox in-container helper.
#
# One long-lived python3 process per sandbox, started by ONE `docker exec` whose stdin
# first carries this source and then the framed protocol. Its python3 is stepbox's runtime's
# (see RUNTIME), never the image's, which needs none. Python rather than sh because it owns timers, /proc scans, output caps
# and hashing without forking: when a fork bomb has used up the PID limit, the helper can
# still find and kill it (os.kill and /proc reads only) and answer the next call.
#
# Protocol (both directions): frames of [u32 BE header length][u32 BE payload length]
# [header: UTF-8 JSON][payload: raw bytes]. Requests carry `id` and `op`; the response
# to a request carries the same `id` and either `ok: true` or `error: {code, message}`.
# stdout is the protocol only; diagnostics go to stderr.
import binascii
import codecs
import collections
import errno
import fcntl
import hashlib
import json
import os
import re
import select
import selectors
import signal
import stat as st
import struct
import sys
import time

if 'PRELUDE' not in globals():
    # Run from its file (tests): the prelude beside it; the host sends it ahead of this source.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from prelude import *  # noqa: F401,F403

# The working directory (the task's `sandbox.workdir`, a tmpfs the host mounted there): from
# the boot configuration the host hands over after the source (see BOOT), /workspace unless
# it names another absolute path.
_workdir = json.loads(globals().get('STEPBOX_BOOT') or b'{}').get('workdir')
WORKSPACE = _workdir if isinstance(_workdir, str) and _workdir.startswith('/') and '\0' not in _workdir else '/workspace'
WORKSPACE_B = os.fsencode(WORKSPACE) + b'/'
# The agent's uid and gid: every command runs as them, every file operation is done with
# them as the filesystem identity (setfsuid), so what the kernel refuses the agent it
# refuses the helper too.
# Isolated mode (the helper's exec runs as root, the container's capabilities cut to
# SETUID/SETGID/KILL): the helper is another user than every command, so no command can
# open /proc/<helper>/fd/*, ptrace or signal it. Without it (an exec as the agent, an old
# container) the helper works as before but commands can reach its channel.
# (AGENT_UID, SEAL_GID and the privilege drop itself: prelude.py, shared with bridge.py and verifier.py.)
_libc = libc_or_none() if os.getuid() == 0 else None
ISOLATED = _libc is not None


def _has_fs_ids():
    """Whether the kernel has setfsuid (gVisor has not: ENOSYS). setfsuid(-1) changes nothing
    and answers the current fsuid, or -1 where the call does not exist."""
    if _libc is None:
        return False
    import ctypes  # present: libc_or_none() found it
    ctypes.set_errno(0)
    return not (_libc.setfsuid(-1) == -1 and ctypes.get_errno() == errno.ENOSYS)


# Without setfsuid (gVisor) the agent's identity is taken as the effective uid/gid instead,
# the real and saved ids staying root's: the kernel checks files against the effective ids
# there (the fs ids follow them), and a process of the agent's can still not signal, ptrace
# or open the fds of a process whose real and saved uid are root's. The effective
# capabilities go with an effective uid other than 0 and come back with it, so whatever
# needs them (starting the agent's shells, killing root's processes) runs as_helper.
FS_IDS = _has_fs_ids()


def set_fs_ids(uid):
    """The filesystem uid/gid of this process (the helper's file operations)."""
    if _libc is None:
        return
    if FS_IDS:
        _libc.setfsgid(uid)
        _libc.setfsuid(uid)
    elif uid == 0:
        os.seteuid(0)
        os.setegid(0)
    else:
        os.setegid(uid)
        os.seteuid(uid)


class as_helper:
    """Files of the helper's own (its private directory) are root's, out of the agent's reach."""

    def __enter__(self):
        set_fs_ids(0)

    def __exit__(self, *_):
        set_fs_ids(AGENT_UID)


# With CAP_SETPCAP (the container grants it to root's execs only) the agent's shells start
# with an empty bounding set: nothing they run can ever hold a capability, even the
# helper's own SETUID/SETGID/KILL.
DROP_BOUNDING = ISOLATED and can_drop_bounding()
# Sealed shells: an idle shell (see ZYGOTES) is started with an effective gid other than its
# real one (SEAL_GID, which owns nothing), so the kernel makes it non-dumpable at exec; bash
# then drops back to the agent's gid, which keeps it non-dumpable until its next exec. No
# process of the agent's can then ptrace it, read or write its memory (/proc/PID/mem,
# process_vm_*) or open its fds through /proc: the shell that runs the next call cannot be
# shaped beforehand. What a call's command execs is dumpable as usual (an agent debugging its
# own programs still can). Only where the host lets credential changes keep a process
# dumpable (fs.suid_dumpable = 1) is the seal void; the selftest's `ptrace` check says so.
SEALED = ISOLATED and suid_dumpable() != b'1'
# Variables the C library (and bash, in its privileged-start mode) drops from the
# environment of a sealed shell (an exec with real and effective gid apart is "secure"):
# the helper exports them to each call again rather than assume the shell kept them.
SECURE_EXEC_DROPS = ('GCONV_PATH', 'GETCONF_DIR', 'HOSTALIASES', 'LOCALDOMAIN', 'LOCPATH', 'NIS_PATH',
                     'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS', 'TMPDIR', 'TZDIR', 'SHELLOPTS',
                     'BASHOPTS', 'CDPATH', 'GLOBIGNORE', 'GLIBC_TUNABLES')


def secure_exec_drops(name):
    return name in SECURE_EXEC_DROPS or name.startswith(('LD_', 'MALLOC_'))


def container_env():
    """The container's own environment (pid 1's): the helper's exec gets a fixed root PATH
    and HOME (see docker-sandbox.ts), which are not the agent's."""
    try:
        with as_helper():
            with open('/proc/1/environ', 'rb') as f:
                data = f.read()
    except OSError:
        return dict(os.environ)
    env = {}
    for item in data.split(b'\0'):
        k, sep, v = item.partition(b'=')
        if sep and k:
            env[os.fsdecode(k)] = os.fsdecode(v)
    return env or dict(os.environ)


# Isolated, the private directory is root's (0711, files 0644: shells read their scripts,
# nothing of the agent's can replace them); a fresh name per helper, so nothing a command
# left at a known path is ever opened. Not isolated, the old fixed name (same user anyway).
PRIV = '/dev/shm/.stepbox-helper' + ('-' + binascii.hexlify(os.urandom(6)).decode() if ISOLATED else '')
CLOCK = PRIV + '/clock'
# Files staged by a restore (blobs sent in chunks) before they are moved into place: on the
# workspace's own filesystem so a move is a rename; hidden from scans. Each blob is hashed
# as it is written and refused (verify_failed) before anything in /workspace changes when
# it does not hash to its name; the restore's verification then takes those hashes rather
# than reading the files back, but only when no process other than the helper's own idle
# shells existed or came into being from the first staged byte to the verification (see
# Helper.begin_staging): then nothing else can have written them. Otherwise it rereads.
STAGE_NAME = '.stepbox-stage'
STAGE = WORKSPACE + '/' + STAGE_NAME
# Frames the helper accepts from the host; anything larger is not the host.
MAX_HEADER = 64 * 1024 * 1024
MAX_PAYLOAD = 256 * 1024 * 1024
# Every process a call starts inherits STEPBOX_CALL=<n>, so a timeout finds even processes
# that left the call's session. For session calls n is kept in the session's environment
# (it is rolled back with it), so `env` prints the same thing when an episode is replayed.
MARKER = 'STEPBOX_CALL'
HIDDEN_ENV = ('PWD', 'OLDPWD', 'SHLVL', '_', 'BASH_ENV', '__stepbox_c')
ENOSPC_TEXT = b'No space left on device'
# read_file returns whole files; larger ones are for commands (head, grep).
MAX_READ = 64 * 1024 * 1024

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


def log(message):
    try:
        os.write(2, ('[helper] %s\n' % message).encode('utf-8', 'replace'))
    except OSError:
        pass


# ---------------------------------------------------------------- framing

def write_all(fd, data):
    try:
        n = os.write(fd, data)  # the usual frame: all of it at once
    except BlockingIOError:
        n = 0
    if n == len(data):
        return
    view = memoryview(data)[n:]
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            selectors.select.select([], [fd], [])
            continue
        view = view[n:]


class Epoll:
    """The part of selectors.EpollSelector the helper uses (fds only, always for reading),
    without its per-call bookkeeping (file-object lookups, key tuples, event mapping): a tool
    call registers, swaps and drops a handful of fds, each once."""

    Key = collections.namedtuple('Key', 'fd data')

    def __init__(self):
        self.ep = select.epoll()
        self.keys = {}  # fd -> Key

    def register(self, fd, _events, data=None):
        if fd in self.keys:
            raise KeyError('%d is already registered' % fd)
        self.ep.register(fd, select.EPOLLIN)
        key = self.keys[fd] = Epoll.Key(fd, data)
        return key

    def modify(self, fd, _events, data=None):
        """A registered fd's callback (the events are always EPOLLIN: no syscall)."""
        if fd not in self.keys:
            raise KeyError('%d is not registered' % fd)
        key = self.keys[fd] = Epoll.Key(fd, data)
        return key

    def unregister(self, fd):
        key = self.keys.pop(fd)
        try:
            self.ep.unregister(fd)
        except OSError:
            pass  # already closed
        return key

    def get_map(self):
        return self.keys

    def select(self, timeout=None):
        keys = self.keys
        ready = self.ep.poll(-1 if timeout is None else max(timeout, 0), max(len(keys), 1))
        return [(keys[fd], ev) for fd, ev in ready if fd in keys]


# The channel: where frames come in and go out. The exec's stdin and stdout by default, or
# the host's socket (see open_socket): a folder of the host's, bind-mounted read-only at
# CHANNEL_DIR inside a tmpfs only root can enter (0700), so no process of the agent's can
# connect to it, list it or put anything in it. The host hands the socket's path and a
# one-time token over the exec's stdin (never argv or the environment, which the agent can
# read). Over the socket no engine relays the frames (docker exec costs ~1-2 ms a round trip:
# node -> dockerd -> containerd-shim -> here and back); where it cannot be had (a remote
# engine, a VM boundary, SELinux) the helper stays on the exec and its hello says why.
BOOT = json.loads(globals().get('STEPBOX_BOOT') or b'{}')
SOCKET_ACK = b'\x01'
# How long connecting and the host's ack may take before the helper stays on the exec.
SOCKET_WAIT = 5.0
channel_in = 0
channel_out = 1


def open_socket(path, token):
    """Connects to the host's socket as root and presents the token: (fd, None) once the host
    acknowledged it, else (None, why not)."""
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(SOCKET_WAIT)
        # Root's filesystem identity: the way in is root's only (see above).
        with as_helper():
            s.connect(path)
        s.sendall(token)
        if s.recv(1) != SOCKET_ACK:
            raise OSError('the host closed it without acknowledging the token')
        s.setblocking(False)
        return s.detach(), None
    except (OSError, ValueError) as e:
        s.close()
        return None, '%s: %s' % (path, e)


# A frame whose payload is at most this size leaves in one write: two would let the host
# wake up for the header alone and again for the rest (a tool call's output, say).
SEND_JOIN_MAX = 256 * 1024


def header_encoder():
    """json.dumps(header, separators=(',', ':')), built once: dumps makes an encoder object
    and then a C encoder per call (~30 us of a tool call's answer after the model's pause).
    Headers hold no cycles, so no check for them; where the C encoder is missing or takes
    other arguments, the Python one."""
    slow = json.JSONEncoder(separators=(',', ':'))
    make = getattr(json.encoder, 'c_make_encoder', None)
    try:
        fast = make(None, slow.default, json.encoder.encode_basestring_ascii, None, ':', ',', False, False, True)
        if ''.join(fast({'a': [1, None, True, 0.5, '\u00e9']}, 0)) == slow.encode({'a': [1, None, True, 0.5, '\u00e9']}):
            return lambda header: ''.join(fast(header, 0))
    except TypeError:
        pass
    return slow.encode


encode_header = header_encoder()
# The host's headers are compact JSON (UTF-8, nothing around the object): the C scanner reads
# them at once (json.loads adds an encoding guess and two Python frames, ~25 us of a request
# after the model's pause). Anything else goes to json.loads, which decides as always.
scan_json = json.JSONDecoder().scan_once


def decode_header(raw):
    s = raw.decode('utf-8', 'surrogatepass')
    try:
        value, end = scan_json(s, 0)
    except StopIteration:
        end = -1
    return value if end == len(s) else json.loads(s)


def send(header, payload=b''):
    h = encode_header(header).encode('ascii')
    head = struct.pack('>II', len(h), len(payload)) + h
    if len(payload) <= SEND_JOIN_MAX:
        write_all(channel_out, head + payload if payload else head)
        return
    write_all(channel_out, head)
    write_all(channel_out, payload)


class ToolErr(Exception):
    def __init__(self, code, message):
        Exception.__init__(self, message)
        self.code = code
        self.message = message


ERRNO_CODES = {
    errno.ENOENT: 'not_found',
    errno.EISDIR: 'is_directory',
    errno.ENOTDIR: 'not_a_directory',
    errno.EACCES: 'permission_denied',
    errno.EPERM: 'permission_denied',
    errno.EROFS: 'permission_denied',
    errno.ENOSPC: 'disk_full',
    errno.EDQUOT: 'disk_full',
}


def os_error(e, path):
    code = ERRNO_CODES.get(e.errno, 'tool_failed')
    return ToolErr(code, '%s: %s' % (path, e.strerror or str(e)))


def resolve(path):
    if not isinstance(path, str) or path == '':
        raise ToolErr('invalid_arguments', 'path must be a non-empty string')
    return os.path.normpath(path if path.startswith('/') else os.path.join(WORKSPACE, path))


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


def proc_running(pid):
    """Whether a process is there and neither a zombie nor dead."""
    return (proc_stat(pid) or ZOMBIE).state not in (b'Z', b'X')


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


# ---------------------------------------------------------------- processes

# ---------------------------------------------------------------- named records

# One entry of a tree, as the host and the helper exchange it (a JSON list on the wire):
# content is a file's sha256, a symlink's target, None for a directory. Types other than
# file/dir/symlink ('unexpected') only ever appear in a restore's verification.
Entry = collections.namedtuple('Entry', 'path type mode size content')
# What a scan knew of a file: its stat, and the hash it had then.
Cached = collections.namedtuple('Cached', 'ino size mtime_ns ctime_ns mode hash')


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


def ensure_priv():
    if ISOLATED:
        # Root's, in the sticky /dev/shm: no command can remove or change it.
        if not os.path.isdir(PRIV):
            with as_helper():
                os.mkdir(PRIV, 0o711)
        return
    # Commands run as the same user and may remove or close this directory.
    try:
        mode = os.lstat(PRIV).st_mode
    except FileNotFoundError:
        os.makedirs(PRIV, mode=0o700, exist_ok=True)
        return
    if not st.S_ISDIR(mode):
        os.unlink(PRIV)
        os.makedirs(PRIV, mode=0o700, exist_ok=True)
    elif mode & 0o700 != 0o700:
        os.chmod(PRIV, 0o700)


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
        victims = set()
        keep = self.protected | {z.pid for z in self.zygotes}
        for _ in range(5):
            new = False
            for pid in all_pids():
                if pid in keep or pid in victims:
                    continue
                s = proc_stat(pid)
                if s is None or s.ppid == 0:
                    continue
                try:
                    os.kill(pid, signal.SIGSTOP)
                except OSError:
                    continue
                victims.add(pid)
                new = True
            if not new:
                break
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        # kill() returns before the victims die: on a busy machine one can still be listed
        # (or finish a write it was in) after we return. Wait until each is gone or a zombie.
        deadline = time.monotonic() + 2.0
        while victims and time.monotonic() < deadline:
            victims = {pid for pid in victims if proc_running(pid)}
            if victims:
                time.sleep(0.001)
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


# ---------------------------------------------------------------- files (read_file, write_file, list_dir)

class Files:
    """The file tools: whole files in and out, directory listings; paths relative to /workspace."""

    def op_read(self, req):
        """A whole regular file, in the payload (at most MAX_READ bytes)."""
        path = resolve(req['path'])
        try:
            # O_NONBLOCK: opening a FIFO must not hang the helper.
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as e:
            raise os_error(e, path)
        try:
            s = os.fstat(fd)
            if st.S_ISDIR(s.st_mode):
                raise ToolErr('is_directory', '%s: is a directory' % path)
            if not st.S_ISREG(s.st_mode):
                raise ToolErr('tool_failed', '%s: not a regular file (a FIFO, socket or device); read it with a command' % path)
            if s.st_size > MAX_READ:
                raise ToolErr('tool_failed', '%s: %d bytes is more than read_file returns (%d); use a command such as head' % (path, s.st_size, MAX_READ))
            chunks = []
            while True:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                chunks.append(b)
            return {}, b''.join(chunks)
        except OSError as e:
            raise os_error(e, path)
        finally:
            os.close(fd)

    def op_write(self, req, payload):
        """Writes the payload to a regular file (created with its parents; `mode` when given)."""
        path = resolve(req['path'])
        mode = req.get('mode')
        try:
            parent = os.path.dirname(path)
            if not os.path.isdir(parent):
                os.makedirs(parent, exist_ok=True)
            if os.path.isdir(path):
                raise ToolErr('is_directory', '%s: is a directory' % path)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o644 if mode is None else mode)
            try:
                if not st.S_ISREG(os.fstat(fd).st_mode):
                    raise ToolErr('tool_failed', '%s: not a regular file (a FIFO, socket or device); write it with a command' % path)
                os.set_blocking(fd, True)
                write_all(fd, payload)
                if mode is not None:
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)
        except OSError as e:
            raise os_error(e, path)
        return {'bytes': len(payload)}

    def op_list(self, req):
        """A directory's entries {name, type, size}, sorted by name."""
        path = resolve(req['path'])
        entries = []
        try:
            with os.scandir(path) as it:
                for e in it:
                    try:
                        s = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if st.S_ISREG(s.st_mode):
                        kind, size = 'file', s.st_size
                    elif st.S_ISDIR(s.st_mode):
                        kind, size = 'dir', 0
                    elif st.S_ISLNK(s.st_mode):
                        kind, size = 'symlink', s.st_size
                    else:
                        kind, size = 'other', 0
                    entries.append({'name': e.name, 'type': kind, 'size': size})
        except OSError as e:
            raise os_error(e, path)
        entries.sort(key=lambda x: x['name'])
        return {'entries': entries}


# ---------------------------------------------------------------- scanning (snapshots)

class Scanner:
    """The helper's view of /workspace: the last scan's tree with a stat cache (only what
    changed is hashed again), inotify to know what changed, and the tree the host was last
    told about (`base`), so scans answer and restores arrive as deltas against it."""

    def __init__(self, shells):
        self.shells = shells
        self.protected = shells.protected
        self.cache = {}  # path -> Cached
        self.cache_clock = 0
        self.by_hash = {}  # hash -> path, from the last scan
        # The tree the host was last told about (a scan's result, or a verified restore's
        # target), path -> entry, under an id the host names to get or send a delta against it.
        self.base = None
        self.base_id = None
        self.base_scanned = False
        self.base_scan = 0
        self.scans = 0
        self.hashed_scan = None
        self.touched = None
        self.bases = 0
        self.hasher = TreeHasher()
        # The last scan's tree (path -> entry), each directory's listing, files over the cap
        # (path -> size) and files stat'ed at every scan whatever happened (see walk).
        self.tree = None
        self.tree_cap = None
        self.children = {}
        self.skip = {}
        self.recheck = set()
        self.by_ino = {}  # inode -> the paths it was seen at (hard links)
        # inotify tells which names something happened to since the last scan, so a scan
        # stats only those; it is trusted only when nothing could have written unseen (see
        # unseen_writers), else the scan walks the whole tree as it does without inotify.
        self.watch = Watch.open()
        self.ws_dev = None
        self.skipped = []
        self.file_cap = None
        self.rehashed = []
        self.walked = 'full'

    def reset(self):
        """Forgets every tree (the workspace was emptied)."""
        self.cache = {}
        self.cache_clock = 0
        self.by_hash = {}
        self.base = self.base_id = None
        self.tree = None

    def fs_now(self):
        """The filesystem clock: what a file written now would carry as mtime."""
        ensure_priv()
        with as_helper():
            with open(CLOCK, 'wb'):
                pass
            os.utime(CLOCK, None)
            return os.stat(CLOCK).st_mtime_ns

    def scan(self, rehash_all=False, file_cap=None):
        """/workspace now, path -> entry; rehashes only files whose stat changed (racy-git
        rule), and always those mapped shared or written since the last scan. With a Watch and
        nothing that could write unseen (unseen_writers), only the names something happened to
        since the last scan are stat'ed again; else the scan walks the whole tree. Files larger
        than file_cap are left out and listed in self.skipped."""
        self.scans += 1
        clock = self.fs_now()
        old_clock = self.cache_clock
        # Processes first, then the events: a mapping given up in between has its close event
        # read below; one taken after it is this scan's race, and the next scan's to see.
        busy, mapped = self.unseen_writers()
        changed = self.watch.changed() if self.watch is not None else None
        written = changed.written if changed is not None else set()
        if busy:
            changed = None
        full = rehash_all or changed is None or self.tree is None or file_cap != self.tree_cap
        self.rehashed = []
        self.walked = 'full' if full else 'pruned'
        self.tree_cap = file_cap
        # Directories the agent closed (chmod 000) are opened for the walk and closed after.
        opened = []
        ctx = Visit(self, opened, old_clock, clock, file_cap, full)
        # A page written through a mapping moves the file's mtime only at its first write after
        # it was last written back, so stat cannot vouch for a file mapped shared or written
        # (an event) since the last scan: those are hashed again whatever stat says.
        ctx.force, ctx.force_ino = written, mapped
        # Every path whose entry this scan set or dropped (all of them after a full walk).
        self.touched = set()
        try:
            if full:
                self.tree, self.children, self.skip, self.recheck, self.by_ino = {}, {}, {}, set(), {}
                if rehash_all:
                    self.cache = {}
                ctx.stack.append('')
            else:
                dirty, names = changed.dirty, changed.names
                # Files that were being written when hashed, or have other names: stat'ed again.
                for rel in self.recheck:
                    names.add(rel.rpartition('/')[::2])
                # Parents first, so a directory that went away is dropped before what was in it.
                for d, name in sorted(names, key=lambda n: n[0].count('/') + (1 if n[0] else 0)):
                    if d == '' or (d in self.tree and self.tree[d].type == 'dir'):
                        ctx.visit(d, name)
                ctx.stack.extend(d for d in dirty if d == '' or (d in self.tree and self.tree[d].type == 'dir'))
            ctx.walk()
        finally:
            for path, mode in reversed(opened):
                os.chmod(path, mode)
        self.cache_clock = clock
        if full:
            self.touched = None
        self.by_hash = {e.content: rel for rel, e in self.tree.items() if e.type == 'file'}
        self.skipped = [[rel, n] for rel, n in self.skip.items()]
        return self.tree

    def unseen_writers(self):
        """(busy, mapped): busy when something may have written to /workspace since the last
        scan without an inotify event, and the inodes of the /workspace files some process has
        mapped shared.
        inotify sees no write made through a shared mapping, and a file's close event comes
        only when its last reference goes (the last fd or mapping, in any process, or in a
        socket's queue). So events are trusted only while no process of the agent's is alive
        but the idle shells the helper started, none of them holding a mapping or any open
        file but its pipes and /dev/null (a command of before may have ptraced one: same
        uid). A process that cannot be read (non-dumpable) counts as busy; a zombie holds
        nothing unless its other threads still run."""
        idle = {z.pid for z in self.shells.zygotes}
        busy, mapped = False, set()
        if self.ws_dev is None:
            self.ws_dev = os.stat(WORKSPACE).st_dev
        for pid in all_pids():
            if pid in self.protected:
                continue
            if SEALED and pid in idle:
                # A sealed idle shell (see SEALED; unreaped, so its pid is its own) is out of
                # every agent process's reach from its fork on: it holds nothing but what the
                # helper gave it. Its /proc files are not read: while one is still starting
                # (the pool's refill, right after a call) a read of them waits for its exec.
                if len(task_ids(pid)) > 1:
                    busy = True
                continue
            s = proc_stat(pid)
            if s is None or engine_root_exec(pid, s):
                continue
            if s.state == b'Z':
                # A zombie holds nothing, unless only its first thread ended: its other
                # threads live on with its mappings and files (listed under task/, not /proc).
                live = [t for t in task_ids(pid) if t != pid and (proc_stat(t) or ZOMBIE).state != b'Z']
                if live:
                    busy = True
                    for t in live:
                        held_files(t, self.ws_dev, mapped)
                continue
            held = held_files(pid, self.ws_dev, mapped)
            if held is UNREADABLE and pid in idle:
                # A shell just started is unreadable for the few microseconds between setuid
                # and exec; one that stays so (made non-dumpable) is busy.
                for _ in range(40):
                    time.sleep(0.0001)
                    held = held_files(pid, self.ws_dev, mapped)
                    if held is not UNREADABLE:
                        break
            if held is None:
                continue  # gone since listed
            # An idle shell is one bash thread; another task in it (a thread made with its
            # own fd table, say) is not something the helper started: busy.
            if held or pid not in idle or len(task_ids(pid)) != 1:
                busy = True  # and on: `mapped` must name every mapping, for a full walk too
        return busy, mapped

    def drop(self, rel):
        """Forgets a directory's listing, and below it (it went away or is listed anew)."""
        for child in self.children.pop(rel, ()):
            self.touched.add(child)
            e = self.tree.pop(child, None)
            self.skip.pop(child, None)
            self.cache.pop(child, None)
            self.recheck.discard(child)
            if e is not None and e.type == 'dir':
                self.drop(child)

    def op_scan(self, req):
        """Walks /workspace. With `since` naming the tree the host last had from this helper,
        answers with what changed against it (`changed` entries, `removed` paths) rather than
        every entry; with `inline_max`, the content of files whose hash is new (up to that
        many bytes in all) rides in the payload, so a small change is captured in one trip."""
        cap = req.get('file_cap')
        self.file_cap = cap if isinstance(cap, int) and cap > 0 else None
        known = self.by_hash
        # The base is the tree of the scan right before this one (no restore's in between):
        # only what this scan touched can differ from it.
        incremental = self.base_scanned and self.base_scan == self.scans
        current = self.scan(rehash_all=bool(req.get('rehash_all')), file_cap=self.file_cap)
        touched = self.touched if incremental else None
        res = {'tree_hash': self.hasher.of(current, touched), 'skipped': self.skipped, 'walk': self.walked}
        self.hashed_scan = self.scans  # the hasher's lines are the live tree's as of this scan
        since, base = req.get('since'), self.base
        if since is not None and since == self.base_id and base is not None:
            res['since'] = since
            if touched is None:
                res['changed'] = [e for rel, e in current.items() if base.get(rel) != e]
                res['removed'] = [rel for rel in base if rel not in current]
            else:
                res['changed'] = [current[rel] for rel in touched if rel in current and base.get(rel) != current[rel]]
                res['removed'] = [rel for rel in touched if rel not in current and rel in base]
        else:
            res['entries'] = list(current.values())
        # A copy: the next scan updates the live tree in place.
        self.set_base(dict(current))
        self.base_scanned = True
        self.base_scan = self.scans
        res['base'] = self.base_id
        inline_max = req.get('inline_max')
        parts, sizes, sent, room = [], [], set(), inline_max if isinstance(inline_max, int) else 0
        for rel in self.rehashed:
            e = current.get(rel)
            if room <= 0 or e is None or e.content in known or e.content in sent or e.size > room:
                continue
            try:
                data = read_workspace_file(rel)
            except OSError:
                continue
            if len(data) > room:
                continue
            # The host checks each blob against its name (a file still being written fails it).
            sent.add(e.content)
            parts.append(data)
            sizes.append([e.content, len(data)])
            room -= len(data)
        if sizes:
            res['inline'] = sizes
        return res, b''.join(parts)

    def set_base(self, tree):
        self.base_scanned = False
        self.bases += 1
        self.base = tree
        self.base_id = '%d.%d' % (self.shells.loop.pid, self.bases)

    def op_blobs(self, req):
        """Small blobs of the last scan whole, in one payload (the host batches them up to a bounded size)."""
        parts, sizes = [], []
        for h in req['hashes']:
            data = self.blob_range(h, 0, None)
            parts.append(data)
            sizes.append(len(data))
        return {'sizes': sizes}, b''.join(parts)

    def op_blob_read(self, req):
        """One chunk of a large blob: [offset, offset + length) of the file that had this content."""
        length = req['length']
        if not isinstance(length, int) or length < 0 or length > MAX_PAYLOAD:
            raise ToolErr('invalid_arguments', 'blob_read: length must be 0..%d' % MAX_PAYLOAD)
        return {}, self.blob_range(req['hash'], req['offset'], length)

    def blob_range(self, h, offset, length):
        rel = self.by_hash.get(h)
        if rel is None:
            raise ToolErr('not_found', 'no file with content %s in the last scan' % h)
        try:
            return read_workspace_file(rel, offset, length)
        except OSError as e:
            raise os_error(e, rel)


# ---------------------------------------------------------------- restoring

class StagedBlob:
    """A blob being staged for a restore, hashed as its bytes are written."""

    __slots__ = ('sha', 'size')

    def __init__(self):
        self.sha = hashlib.sha256()
        self.size = 0


class Restorer:
    """Puts /workspace back to a tree the host sends: blobs staged (checked as they are
    written), the tree compared with a fresh scan, only what differs written (Apply), the
    result verified by its tree hash inside the container."""

    def __init__(self, shells, scanner):
        self.shells = shells
        self.scanner = scanner
        self.protected = shells.protected
        # Blobs staged for the restore under way: hash -> StagedBlob; and, when staging began
        # with no process but the helper's own in the container, (pid counter, calls started)
        # then (None: not begun; -1: others ran).
        self.stage_hashes = {}
        self.stage_quiet = None
        self.dropped = []  # idle shells discarded by begin_staging, until reaped
        self.reread = 0  # files the last restore's verification read back
        # Pristine: the pid counter at start when nothing but init and the main command ran
        # (a fresh container); see begin_staging.
        self.pristine = self.quiet()

    def reset(self):
        """Forgets what was staged (the workspace, stage included, is emptied)."""
        self.stage_hashes = {}
        self.stage_quiet = None

    def ensure_stage(self):
        """The staging directory, a real directory of the agent's (whatever was at its name goes)."""
        try:
            m = os.lstat(STAGE).st_mode
        except FileNotFoundError:
            m = None
        if m is not None and not st.S_ISDIR(m):
            os.unlink(STAGE)
            m = None
        if m is None:
            os.mkdir(STAGE, 0o700)
        else:
            make_writable(STAGE)

    def begin_staging(self):
        """Notes, at the first blob staged for a restore, whether the helper is alone in the
        container (see quiet): if it still is when the restore verifies, and no process came
        into being meanwhile but its own shells, nothing else can have written what it
        staged, and the hashes taken while writing stand for a reread."""
        if self.stage_quiet is None:
            self.shells.spawned = set()
            last = self.quiet()
            self.stage_quiet = (last, self.shells.execs) if last >= 0 else -1
            if last >= 0 and not self.untouched(last) and not self.idle_sealed():
                # The idle shells are the agent's uid: unsealed, a command of before could
                # have ptraced one and left it waiting to write. They are killed (one still
                # there after a moment is another process from then on: the restore rereads)
                # and the loop starts fresh ones, which nothing of the agent's has seen.
                # (Sealed ones are out of every command's reach from their fork on: killing
                # them cost a restore 2-70 ms of waiting for them to die and for their
                # replacements to start.)
                self.dropped.extend(self.shells.drop_idle())
                deadline = time.monotonic() + 0.05
                while self.dropped and time.monotonic() < deadline:
                    self.dropped = [z for z in self.dropped if z.alive()]
                    if self.dropped:
                        selectors.select.select([], [], [], 0.0005)

    def idle_sealed(self):
        """Whether every idle shell is sealed (see SEALED) and still one thread, as it
        started: nothing of the agent's can have shaped it to write later."""
        return SEALED and all(task_ids(z.pid) == [z.pid] for z in self.shells.zygotes)

    def quiet(self):
        """The pid counter now when no process runs but init, the main command, this helper
        and its idle shells (no call under way); -1 otherwise. (Reaps the shells
        begin_staging let go that have exited.)"""
        self.dropped = [z for z in self.dropped if z.alive()]
        if self.shells.calls:
            return -1
        last = last_pid()
        keep = self.protected | {z.pid for z in self.shells.zygotes}
        for pid in all_pids():
            if pid in keep:
                continue
            s = proc_stat(pid)
            if s is not None and s.state != b'Z' and not engine_root_exec(pid, s):
                return -1
        return last

    def untouched(self, last):
        """Whether nothing but the helper's own idle shells ever ran as the agent here: a
        fresh container (see pristine), no call started, every pid since the helper's."""
        start = self.pristine
        if start < 0 or self.shells.execs or last - start > 64:
            return False
        return all(pid in self.shells.started for pid in range(start + 1, last + 1))

    def still_quiet(self):
        """Whether the container stayed as begin_staging found it: alone, no call started (its
        shell, already there, could write with builtins alone), every pid allocated since then
        one of the helper's own shells."""
        if not isinstance(self.stage_quiet, tuple):
            return False
        start, execs = self.stage_quiet
        if execs != self.shells.execs:
            return False
        now = self.quiet()
        if now < start:
            return False
        return all(pid in self.shells.spawned for pid in range(start + 1, now + 1))

    def op_stage(self, req, payload):
        """Appends chunks to blobs staged for the next restore: `parts` [[hash, offset, length], ...]
        in payload order, each blob hashed as its bytes are written."""
        self.begin_staging()
        self.ensure_stage()
        off = 0
        view = memoryview(payload)
        for h, at, n in req['parts']:
            if not isinstance(h, str) or not HEX64.match(h):
                raise ToolErr('invalid_arguments', 'stage: %r is not a sha256 hex digest' % (h,))
            path = STAGE + '/' + h
            if at == 0:
                # A fresh file, never one already there (a hard link of something else's).
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                try:
                    fd = os.open(path, flags, 0o600)
                except FileExistsError:
                    os.unlink(path)
                    fd = os.open(path, flags, 0o600)
            else:
                fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
            try:
                if at == 0:
                    state = self.stage_hashes[h] = StagedBlob()
                else:
                    size = os.fstat(fd).st_size
                    if size != at:
                        raise ToolErr('restore_failed', 'stage: blob %s has %d bytes staged, the host sent offset %d' % (h, size, at))
                    state = self.stage_hashes.get(h)
                    if state is None or state.size != at:
                        state = None
                        self.stage_hashes.pop(h, None)
                    os.lseek(fd, at, os.SEEK_SET)
                chunk = view[off:off + n]
                write_all(fd, chunk)
                if state is not None:
                    state.sha.update(chunk)
                    state.size += n
            finally:
                os.close(fd)
            off += n
        return {}

    def op_restore(self, req, payload):
        """Puts /workspace back to a tree: `entries` whole, or `changed`/`removed` against the
        tree `base` names; content from `staged` blobs, `inline` ones in the payload, or the
        workspace itself. Answers `need` (hashes to send, then ask again) when the workspace
        lacks content it was assumed to have, else the tree hash recomputed inside."""
        try:
            return self.restore(req, payload)
        finally:
            self.stage_hashes = {}
            self.stage_quiet = None
            self.shells.spawned = set()
            if os.path.lexists(STAGE) and not os.path.islink(STAGE):
                clear_dir(STAGE)
                try:
                    os.rmdir(STAGE)
                except OSError as e:
                    log('cannot remove %s: %s' % (STAGE, e))

    def target(self, req):
        """The target tree by path: `entries` whole, or `changed`/`removed` against the tree
        `base` names (stale_base when this helper no longer has it: the host sends it whole)."""
        if 'entries' in req:
            return check_manifest(req['entries'])
        sc = self.scanner
        if req.get('base') != sc.base_id or sc.base is None:
            raise ToolErr('stale_base', 'the helper no longer has tree %r' % (req.get('base'),))
        changed, removed = req.get('changed'), req.get('removed')
        if not isinstance(changed, list) or not isinstance(removed, list):
            raise ToolErr('invalid_manifest', 'a delta restore needs changed and removed lists')
        target = dict(sc.base)
        for rel in removed:
            target.pop(rel, None)
        seen = set()
        for e in changed:
            e = check_entry(e)
            if e.path in seen:
                raise bad_entry(e, 'is listed twice')
            seen.add(e.path)
            target[e.path] = e
        # The base passed this check (a restore's target) or is a scan of the real tree: only
        # what the delta changed can break it (a full check cost a restore ~1000 lookups).
        if any(sc.base.get(rel) is not None and sc.base[rel].type == 'dir' for rel in removed) or any(
                sc.base.get(rel) is not None and sc.base[rel].type == 'dir' and target[rel].type != 'dir' for rel in seen):
            check_parents(target)
        else:
            check_parents(target, seen)
        return target

    def received(self, req, payload, target):
        """The blobs the host staged (chunks, see op_stage) or sent inline, each checked
        against its name before anything in /workspace changes (a blob whose bytes do not
        hash to it is refused): hash -> staged path, and hash -> its inode, so verifying
        can tell the file it put in place from anything that replaced it."""
        staged, sent = {}, {}
        at = 0
        for h, n in req.get('inline') or []:
            if not isinstance(h, str) or not HEX64.match(h) or not isinstance(n, int) or n < 0 or at + n > len(payload):
                raise ToolErr('invalid_arguments', 'restore: inline blob %r does not fit the payload' % (h,))
            data = payload[at:at + n]
            if hashlib.sha256(data).hexdigest() != h:
                raise damaged_blob(h, target)
            self.ensure_stage()
            write_file(STAGE + '/' + h, data)
            at += n
            staged[h] = STAGE + '/' + h
            sent[h] = os.lstat(staged[h]).st_ino
        for h, n in req['staged']:
            p = STAGE + '/' + h
            try:
                ls = os.lstat(p)
                size = ls.st_size
            except FileNotFoundError:
                size = -1
            if size != n:
                raise ToolErr('restore_failed', 'blob %s was not fully staged (%d of %d bytes); the transfer was cut' % (h, max(size, 0), n))
            state = self.stage_hashes.get(h)
            if state is None or state.size != n:
                raise ToolErr('restore_failed', 'blob %s was not staged in order from its start; the transfer was cut' % h)
            if state.sha.hexdigest() != h:
                raise damaged_blob(h, target)
            staged[h] = p
            sent[h] = ls.st_ino
        return staged, sent

    def keep_present(self, uses, staged):
        """Content the container already has, kept in the stage (a hard link, else a copy)
        before anything is overwritten; the helper's memory never holds a whole file.
        Returns the hashes so kept."""
        linked = set()
        for h in uses:
            if h in staged:
                continue
            rel = self.scanner.by_hash[h]
            self.ensure_stage()
            dst = STAGE + '/' + h
            try:
                os.link(WORKSPACE + '/' + rel, dst)
            except OSError:
                copy_workspace_file(rel, dst)
            staged[h] = dst
            linked.add(h)
        return linked

    def restore(self, req, payload):
        sc = self.scanner
        marks = [time.monotonic()]
        target = self.target(req)
        self.begin_staging()
        staged, sent = self.received(req, payload, target)
        current = dict(sc.scan(file_cap=sc.file_cap))
        # Whether the hasher's lines are the live tree's as of the scan right before this one,
        # and what this scan changed in it (None after a full walk).
        scanned = sc.touched if sc.hashed_scan == sc.scans - 1 and sc.hasher.tree is sc.tree else None
        # Only what differs is written; the rest is the scan's, equal to the target.
        # (The two trees' items compared as sets, in C: a Python loop over 1,000 entries cost
        # a restore ~0.3 ms. Sorted by path, so the order does not depend on hashing.)
        try:
            todo = [e for _, e in sorted(target.items() - current.items())]
        except TypeError:  # an entry holding something unhashable: compared one by one
            todo = [e for rel, e in target.items() if current.get(rel) != e]
        need = sorted(set(
            e.content for e in todo
            if e.type == 'file' and e.content not in staged and e.content not in sc.by_hash))
        if need:
            # The workspace changed since the tree the host planned from: it sends these and asks again.
            return {'need': need}
        # How many paths each blob goes to (the last one gets the staged file itself).
        uses = {}
        for e in todo:
            if e.type == 'file':
                c = current.get(e.path)
                if c is None or c.type != 'file' or c.content != e.content:
                    uses[e.content] = uses.get(e.content, 0) + 1
        linked = self.keep_present(uses, staged)
        marks.append(time.monotonic())
        apply = Apply(target, current)
        apply.remove_absent(todo)
        apply.make_dirs(todo)
        apply.place(todo, staged, linked, sent, uses)
        marks.append(time.monotonic())
        # Verify inside the container: rehash every file we touched, while the directories
        # are still open (untouched entries are the scan's, equal to the target) ...
        full = req.get('verify') == 'full'
        tree = None if full else self.verify_touched(target, apply.touched, apply.placed if self.still_quiet() else {})
        # ... then close the directories we opened or made.
        apply.close_dirs()
        # /workspace itself is not in the tree; it is left writable for the agent as it was.
        # 'full': walk and rehash everything as it finally is.
        if full:
            tree = dict(sc.scan(rehash_all=True, file_cap=sc.file_cap))
        if full or scanned is None:
            got = sc.hasher.of(tree)
        else:
            # Only paths this restore or its scan touched can have lines other than the hasher's:
            # every other path holds its target entry, equal to the scan's, unchanged since the
            # hasher's last tree. (A line wrongly kept could only fail the check, never pass it:
            # such a path's entry in `tree` is its target entry.)
            got = sc.hasher.of(tree, scanned | apply.touched, since=sc.tree)
        if got != req['tree_hash']:
            sc.base = sc.base_id = None
            diff = sorted(set(k for k in set(tree) | set(target) if tree.get(k) != target.get(k)))
            raise ToolErr('verify_failed', 'tree hash after restore is %s, expected %s; differing: %s' % (got, req['tree_hash'], ', '.join(diff[:5])))
        sc.set_base(target)
        marks.append(time.monotonic())
        phases = [round((b - a) * 1000, 2) for a, b in zip(marks, marks[1:])]
        return {'tree_hash': got, 'written': apply.written, 'removed': apply.removed, 'phases_ms': phases,
                'base': sc.base_id, 'reread': None if full else self.reread}

    def verify_touched(self, target, touched, placed):
        """The tree as it now is, by path: touched paths re-read from disk, the rest as scanned.
        A path in `placed` (inode, hash) that still is that inode is the blob the helper wrote
        and hashed while writing, with nothing else in the container since (see still_quiet):
        its hash is taken, not read again."""
        sc = self.scanner
        tree = dict(target)
        self.reread = 0
        for rel in touched:
            t = target.get(rel)
            p = WORKSPACE + '/' + rel
            try:
                s = os.lstat(p)
            except (FileNotFoundError, NotADirectoryError):
                tree.pop(rel, None)
                sc.cache.pop(rel, None)
                continue
            mode = s.st_mode & 0o7777
            if t is None:
                sc.cache.pop(rel, None)
                tree[rel] = Entry(rel, 'unexpected', 0, 0, None)
            elif st.S_ISDIR(s.st_mode):
                # Still open for the restore; its final mode is set right after.
                tree[rel] = Entry(rel, 'dir', t.mode, 0, None)
            elif st.S_ISLNK(s.st_mode):
                tree[rel] = Entry(rel, 'symlink', mode, s.st_size, os.readlink(p))
            elif st.S_ISREG(s.st_mode):
                ino, h = placed.get(rel, (None, None))
                if ino != s.st_ino:
                    h = hash_file(p)
                    self.reread += 1
                sc.cache[rel] = Cached(s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_mode, h)
                sc.by_hash[h] = rel
                tree[rel] = Entry(rel, 'file', mode, s.st_size, h)
            else:
                tree[rel] = Entry(rel, 'unexpected', 0, 0, None)
        return tree


def damaged_blob(h, target):
    """The refusal of a blob whose bytes, as received, do not hash to its name."""
    paths = sorted(rel for rel, e in target.items() if e.type == 'file' and e.content == h)
    return ToolErr('verify_failed', 'the content sent for %s (blob %s) does not hash to its name; nothing in the workspace was changed' % (
        ', '.join(paths[:5]) + (' and %d more' % (len(paths) - 5) if len(paths) > 5 else ''), h))


class Apply:
    """One restore's changes to /workspace, in order: remove what the target lacks, make its
    directories, place its files and symlinks, and (after verification) close the
    directories it opened. Counts what it removed and wrote, and every path it touched."""

    def __init__(self, target, current):
        self.target = target
        self.current = current
        self.touched = set()
        self.removed = 0
        self.written = 0
        self.placed = {}  # path -> (inode, hash) of a checked blob moved into place
        # Directories whose mode the restore opened (to write into them): closed again at the end.
        self.opened = set()

    def open_parent(self, rel):
        """Every directory above rel searchable and writable (each opened once)."""
        parts = rel.split('/')[:-1]
        for i in range(len(parts)):
            d = '/'.join(parts[:i + 1])
            if d not in self.opened:
                self.opened.add(d)
                make_writable(WORKSPACE + '/' + d)

    def remove_absent(self, todo):
        """Removes what the target lacks (or has with another type: such a path's target
        entry is in `todo`, what differs from the workspace), deepest first."""
        target, current = self.target, self.current
        gone = current.keys() - target.keys()
        gone.update(e.path for e in todo if e.path in current and current[e.path].type != e.type)
        for rel in sorted(gone, reverse=True):
            c = current[rel]
            p = WORKSPACE + '/' + rel
            if not os.path.lexists(p):
                continue
            self.open_parent(rel)
            if c.type == 'dir':
                clear_dir(p)
                os.rmdir(p)
            else:
                os.unlink(p)
            self.removed += 1
            self.touched.add(rel)

    def make_dirs(self, todo):
        """Directories, parents first, writable while we fill them. A parent that is not a
        real directory (a symlink a command put there) is refused, never followed."""
        dirs = sorted((e for e in todo if e.type == 'dir'), key=lambda e: e.path.count('/'))
        for e in dirs:
            check_parent(e.path)
            p = WORKSPACE + '/' + e.path
            if not os.path.isdir(p) or os.path.islink(p):
                self.open_parent(e.path)
                if os.path.lexists(p):
                    os.unlink(p)
                os.mkdir(p, 0o700)
                self.written += 1
            self.touched.add(e.path)
            self.opened.add(e.path)
            make_writable(p)

    def place(self, todo, staged, linked, sent, uses):
        """Files and symlinks, each replaced atomically (temp file + rename); a staged blob's
        last use moves it into place."""
        for e in todo:
            rel, kind = e.path, e.type
            if kind == 'dir':
                continue
            check_parent(rel)
            c = self.current.get(rel)
            p = WORKSPACE + '/' + rel
            self.open_parent(rel)
            tmp = os.path.join(os.path.dirname(p), '.stepbox-restore.%d.tmp' % os.getpid())
            if kind == 'file':
                h = e.content
                if c is not None and c.type == 'file' and c.content == h and os.path.lexists(p):
                    os.chmod(p, e.mode)
                    self.touched.add(rel)
                    continue
                uses[h] -= 1
                if uses[h] == 0 and h not in linked:
                    # The staged file's last use: moved into place, no copy.
                    os.chmod(staged[h], e.mode)
                    os.rename(staged[h], p)
                    if h in sent:
                        self.placed[rel] = (sent[h], h)
                else:
                    copy_file(staged[h], tmp, e.mode)
                    os.rename(tmp, p)
            else:
                if c is not None and c.type == 'symlink' and c.content == e.content and os.path.lexists(p):
                    continue
                if os.path.lexists(tmp):
                    os.unlink(tmp)
                os.symlink(e.content, tmp)
                os.rename(tmp, p)
            self.written += 1
            self.touched.add(rel)

    def close_dirs(self):
        """The directories opened or made get their final modes, deepest first (a 0555
        directory is filled before it is closed). A chmod that did not raise set exactly that mode."""
        for rel in sorted(self.opened, key=lambda r: r.count('/'), reverse=True):
            t = self.target.get(rel)
            if t is not None and t.type == 'dir':
                p = WORKSPACE + '/' + rel
                if os.lstat(p).st_mode & 0o7777 != t.mode:
                    os.chmod(p, t.mode)


# ---------------------------------------------------------------- the operations

# Every operation the host can ask for: the job that does it (an attribute of Helper), its
# method, its request fields and reply fields (`?`: may be left out), whether a payload
# comes with the request or the reply, and what it does. The host's side of the same table
# is electron/engine/sandbox/helper-protocol.ts; `describe` answers this one, and a test
# compares the two. A request without a required field is refused before its method runs.
Op = collections.namedtuple('Op', 'job method request reply payload doc required')


def op(job, method, request, reply, doc, payload=None):
    fields = tuple(request.split())
    return Op(job, method, fields, tuple(reply.split()), payload, doc, tuple(f for f in fields if f[-1] != '?'))


OPS = {
    'exec': op('shells', 'exec', 'command timeout_ms fresh cap',
               'exit_code signal stdout_len stdout_total stderr_total oom oom_counter duration_ms error? session?',
               'Runs a command line in the session (or a fresh one); stdout then stderr in the payload.',
               payload='reply'),
    'read': op('files', 'op_read', 'path', '', 'A whole regular file, in the payload.', payload='reply'),
    'write': op('files', 'op_write', 'path mode?', 'bytes', 'Writes the payload to a file.', payload='request'),
    'list': op('files', 'op_list', 'path', 'entries', "A directory's entries {name, type, size}."),
    'get_session': op('shells', 'op_get_session', '', 'cwd env', "The session's cwd and exported environment."),
    'set_session': op('shells', 'op_set_session', 'cwd env', '', "Replaces the session's cwd and environment."),
    'kill_strays': op('shells', 'op_kill_strays', '', '',
                      'Kills every process but the helper and its idle shells; empties /tmp, $HOME, /dev/shm, IPC.'),
    'reset': op('helper', 'op_reset', '', '', 'Back to a clean state: no strays, empty /workspace, fresh session.'),
    'scan': op('scanner', 'op_scan', 'file_cap? since? inline_max? rehash_all?',
               'tree_hash skipped walk base entries? since? changed? removed? inline?',
               'Walks /workspace: its tree whole or as a delta, new content inline.', payload='reply'),
    'blobs': op('scanner', 'op_blobs', 'hashes', 'sizes', 'Small blobs of the last scan, whole.', payload='reply'),
    'blob_read': op('scanner', 'op_blob_read', 'hash offset length', '', 'One chunk of a large blob.',
                    payload='reply'),
    'stage': op('restorer', 'op_stage', 'parts', '', 'Appends chunks to blobs staged for a restore.',
                payload='request'),
    'restore': op('restorer', 'op_restore', 'entries? base? changed? removed? staged inline? tree_hash verify?',
                  'need? tree_hash? written? removed? phases_ms? base? reread?',
                  'Puts /workspace back to a tree, verified by its hash inside.', payload='request'),
    'ping': op('helper', 'op_ping', '', 'pid', "The helper's pid (a round trip)."),
    'describe': op('helper', 'op_describe', '', 'ops hello', 'This table: every op with its fields.'),
}


# ---------------------------------------------------------------- the loop

class Helper:
    """The helper's loop: frames in from the host, each dispatched to its operation (OPS),
    answers out; shells, output and timers in between."""

    def __init__(self):
        # The exec starts in / (see root-exec.ts); shells start where they always did.
        try:
            os.chdir(WORKSPACE)
        except OSError:
            pass
        self.sel = Epoll() if hasattr(select, 'epoll') else selectors.DefaultSelector()
        self.inbuf = bytearray()
        self.pid = os.getpid()
        self.active = 0.0  # when the host's last request was handled
        self.call_ended = False  # a call ended since then (see REFILL_AFTER_CALL)
        self.protected, self.main = find_protected(self.pid)
        self.files = Files()
        self.shells = Shells(self)
        self.scanner = Scanner(self.shells)
        self.restorer = Restorer(self.shells, self.scanner)
        # Each op's method, bound once (a table entry that names no method fails here, at start).
        self.handlers = {name: getattr(self if o.job == 'helper' else getattr(self, o.job), o.method)
                         for name, o in OPS.items()}
        # Which channel the frames use (see open_socket), and why not the socket when one was offered.
        self.channel = 'exec'
        self.channel_problem = None

    def op_reset(self, _req):
        """Back to the clean state: no strays, empty /workspace and /tmp, fresh session, no trees."""
        self.shells.kill_strays()
        self.restorer.reset()
        clear_dir(WORKSPACE)
        self.shells.reset()
        self.scanner.reset()
        return {}

    def op_ping(self, _req):
        return {'pid': self.pid}

    def op_describe(self, _req):
        """The operations table as data (see helper-protocol.ts)."""
        ops = {name: {'request': list(o.request), 'reply': list(o.reply), 'doc': o.doc} for name, o in OPS.items()}
        return {'ops': ops, 'hello': [k for k in self.hello() if k != 'event']}

    def hello(self):
        # main: the container's main command, None when it is gone (a `kill -9 -1` killed it
        # and init is about to stop the container; the host then reports the sandbox lost).
        return {'event': 'hello', 'pid': self.pid, 'main': self.main, 'oom_kills': self.shells.oom.read(),
                'isolated': ISOLATED, 'sealed': SEALED, 'uid': os.getuid(), 'channel': self.channel,
                'channel_problem': self.channel_problem}

    def dispatch(self, header, payload):
        rid = header.get('id')
        name = header.get('op')
        try:
            spec = OPS.get(name) if isinstance(name, str) else None
            if spec is None:
                raise ToolErr('invalid_arguments', 'unknown op %r' % (name,))
            for f in spec.required:
                if f not in header:
                    missing = [f for f in spec.required if f not in header]
                    raise ToolErr('invalid_arguments', '%s: missing %s' % (name, ', '.join(missing)))
            handler = self.handlers[name]
            res = handler(header, payload) if spec.payload == 'request' else handler(header)
            if res is None:
                return  # answered later (exec: when its command ends)
            body, data = res if isinstance(res, tuple) else (res, b'')
            body['id'] = rid
            body['ok'] = True
            send(body, data)
        except ToolErr as e:
            send({'id': rid, 'ok': False, 'error': {'code': e.code, 'message': e.message}})
        except OSError as e:
            err = os_error(e, getattr(e, 'filename', None) or name)
            send({'id': rid, 'ok': False, 'error': {'code': err.code, 'message': err.message}})
        except Exception as e:  # the helper must survive any one bad request
            log('op %s failed: %r' % (name, e))
            send({'id': rid, 'ok': False, 'error': {'code': 'internal_error', 'message': '%s: %r' % (name, e)}})

    def on_stdin(self):
        try:
            data = os.read(channel_in, 1 << 20)
        except BlockingIOError:
            return
        except OSError:
            data = b''  # the host's end of the socket went away (ECONNRESET)
        if not data:
            self.shutdown()
        # The usual read (a request, nothing left over before it) is parsed where it lies, not
        # copied into inbuf and out again; a frame in parts is gathered in inbuf.
        if self.inbuf:
            self.inbuf += data
            data = self.inbuf
        pos = 0
        while len(data) - pos >= 8:
            hlen, plen = struct.unpack_from('>II', data, pos)
            if hlen > MAX_HEADER or plen > MAX_PAYLOAD:
                log('a frame of %d+%d bytes is not the host\'s; exiting' % (hlen, plen))
                self.shutdown()
            end = pos + 8 + hlen + plen
            if len(data) < end:
                break
            header = decode_header(data[pos + 8:pos + 8 + hlen])
            if plen:
                with memoryview(data) as view:
                    payload = view[pos + 8 + hlen:end].tobytes()
            else:
                payload = b''
            pos = end
            self.dispatch(header, payload)
        if data is self.inbuf:
            del self.inbuf[:pos]
        elif pos < len(data):
            self.inbuf = bytearray(data[pos:])
        self.active = time.monotonic()
        self.call_ended = False
        self.shells.lost_idle = False

    def on_exec_input(self, _):
        """The exec's stdin while the frames use the socket: its end (the host let the exec go) ends the helper."""
        try:
            data = os.read(0, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b''
        if not data:
            self.shutdown()

    def open_channel(self):
        """Moves the frames to the host's socket when the host offered one (BOOT)."""
        global channel_in, channel_out
        path = BOOT.get('socket')
        if not isinstance(path, str):
            return
        try:
            token = bytes.fromhex(BOOT.get('token', ''))
        except (TypeError, ValueError):
            token = b''
        fd, self.channel_problem = open_socket(path, token)
        if fd is not None:
            channel_in = channel_out = fd
            self.channel = 'socket'

    def shutdown(self):
        for call in list(self.shells.calls.values()):
            call.kill_tree()
        sys.exit(0)

    def refill(self):
        # Shells begin_staging let go are reaped first.
        r = self.restorer
        r.dropped = [z for z in r.dropped if z.alive()]
        self.shells.refill()

    def run(self):
        # Blobs cross these pipes by the megabyte: a larger pipe means fewer wake-ups of the
        # engine's relay and of this loop per megabyte (the default is 64 KiB).
        for fd in (0, 1):
            try:
                fcntl.fcntl(fd, F_SETPIPE_SZ, PIPE_BYTES)
            except OSError:
                pass
        os.set_blocking(0, False)
        self.open_channel()
        self.sel.register(channel_in, selectors.EVENT_READ, None)
        if channel_in != 0:
            self.sel.register(0, selectors.EVENT_READ, (self.on_exec_input, None))
        send(self.hello())
        self.refill()
        shells = self.shells
        calls = shells.calls
        while True:
            deadline = min((c.deadline for c in calls.values()), default=None)
            # Starting a shell blocks the helper for a moment: while a shell is still ready,
            # the pool is filled once the host has been quiet for REFILL_IDLE, and after a
            # call once its next request is answered (its snapshot comes first; see
            # REFILL_AFTER_CALL). With none left (a reset, killStrays, calls at once), at
            # once, a call running or not; after another hand killed them (a verifier's
            # kill), once the host asks for something (see Shells.lost_idle).
            refill_at = None
            if shells.zygotes and len(shells.zygotes) < ZYGOTES and not calls and not shells.lost_idle:
                refill_at = self.active + (REFILL_AFTER_CALL if self.call_ended else REFILL_IDLE)
                deadline = refill_at if deadline is None else min(deadline, refill_at)
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            polled = [c for c in calls.values() if c.pidfd is None]
            if polled:
                # Without pidfd_open (old kernels) the loop wakes every 10 ms to reap.
                timeout = 0.01 if timeout is None else min(timeout, 0.01)
                for c in polled:
                    c.on_exit(None)
            for key, _ in self.sel.select(timeout):
                # An earlier callback of this batch may have closed this fd (and a new pipe
                # may have its number): only act on keys that are still registered.
                if self.sel.get_map().get(key.fd) is not key:
                    continue
                if key.data is None:
                    self.on_stdin()
                else:
                    key.data[0](key.data[1])
            now = time.monotonic()
            for call in list(calls.values()):
                if call.deadline <= now and not call.done:
                    call.on_timeout()
            if not self.inbuf and not shells.lost_idle and (
                    not shells.zygotes or (refill_at is not None and now >= refill_at and not calls)):
                self.refill()


def high_pipe():
    """A pipe whose ends are numbered 10 or more, so posix_spawn's dup2 onto fds 0-4 never
    clobbers a source it has yet to copy (or meets a source already at its target)."""
    r, w = os.pipe()  # close-on-exec, as every fd Python opens
    if r >= 10 and w >= 10:
        return r, w  # the usual case once the helper runs: no renumbering syscalls
    try:
        return fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(r)
        os.close(w)


def write_file(path, data, mode=0o600):
    # A fresh file every time: whatever a command left at this name (a FIFO would block
    # the helper) is replaced, not opened.
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        if ISOLATED:
            os.fchmod(fd, mode)
        write_all(fd, data)
    finally:
        os.close(fd)


# Where root-owned programs are found: never on the agent's PATH, which an image may have
# point at directories the agent can write (a fake `bash` there would answer every call).
SYSTEM_PATH = ('/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin')


def system_program(name):
    """The absolute path of a program in the system directories (the name when none has it)."""
    for d in SYSTEM_PATH:
        p = d + '/' + name
        if os.access(p, os.X_OK):
            return p
    return name


# stepbox's runtime, a read-only volume in every sandbox (electron/engine/sandbox/
# sandbox-runtime.ts): this interpreter, util-linux's setpriv and ipcrm (started with the
# runtime's own loader and libraries: the image may have no loader, or another C library),
# and a static bash. The image needs none of them.
RUNTIME = '/opt/stepbox/runtime'
RUNTIME_LOADER = [RUNTIME + '/lib/ld.so', '--inhibit-cache', '--library-path', RUNTIME + '/lib']


def runtime_program(name):
    """The argv prefix starting the runtime's dynamic program `name` (usr/bin/NAME)."""
    return RUNTIME_LOADER + [RUNTIME + '/usr/bin/' + name]


# The agent's shell: the image's bash when it has one (in a system directory), else the
# runtime's static one, so an image without bash still gets the same session.
BASH = system_program('bash')
if not BASH.startswith('/'):
    BASH = RUNTIME + '/bin/bash'
RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)


# Isolated, a shell is started by posix_spawn (a vfork: it does not copy the helper's
# memory, ~0.1 ms where os.fork of the helper costs ~1.5 ms on a loaded machine and blocks
# every request meanwhile) of setpriv, which drops to the agent's uid/gid and no
# supplementary groups before it execs bash (the runtime's setpriv: busybox's, in some images, lacks
# the option to set the real uid). Not isolated, fork.
SETPRIV = runtime_program('setpriv')
SPAWN_VIA_SETPRIV = ISOLATED and hasattr(os, 'posix_spawn') and os.access(SETPRIV[-1], os.X_OK)


# bash's ulimit option for each resource limit and its unit (KiB, or 1024-byte blocks for -c
# and -f outside POSIX mode; -q is in bytes). RLIMIT_RTTIME is
# left out (older bash has no -R; it bounds only real-time scheduling, which the agent
# cannot have without CAP_SYS_NICE).
ULIMIT_OPTIONS = (('RLIMIT_CORE', 'c', 1024), ('RLIMIT_DATA', 'd', 1024), ('RLIMIT_NICE', 'e', 1),
                  ('RLIMIT_FSIZE', 'f', 1024), ('RLIMIT_SIGPENDING', 'i', 1), ('RLIMIT_MEMLOCK', 'l', 1024),
                  ('RLIMIT_RSS', 'm', 1024), ('RLIMIT_NOFILE', 'n', 1), ('RLIMIT_MSGQUEUE', 'q', 1),
                  ('RLIMIT_RTPRIO', 'r', 1), ('RLIMIT_STACK', 's', 1024), ('RLIMIT_CPU', 't', 1),
                  ('RLIMIT_NPROC', 'u', 1), ('RLIMIT_AS', 'v', 1024), ('RLIMIT_LOCKS', 'x', 1))


def ulimit_guard():
    """The first line of each call's script where the kernel has no /proc/PID/limits
    (gVisor), in place of limits_intact: a command of the agent's may lower an idle shell's
    limits (prlimit needs only the same uid), and the helper cannot read them (prlimit on
    another user's process needs CAP_SYS_RESOURCE). So the shell, before it says it took
    the command, sets its hard limits to the helper's (a no-op when they are intact; raising
    a lowered one fails without CAP_SYS_RESOURCE) and its soft limits back to the helper's
    (allowed under those). If the hard limits were lowered it says `L` on fd 3 and exits:
    the call runs again in another shell (Call.finish), nothing of it having run. Builtins
    only, no fork."""
    import resource
    hard, soft = [], []
    for name, flag, unit in ULIMIT_OPTIONS:
        res = getattr(resource, name, None)
        if res is None:
            continue
        try:
            cur, top = resource.getrlimit(res)
            # A limit the kernel lets no one set (gVisor: nice, sigpending, msgqueue, rtprio)
            # cannot be lowered either: nothing to check.
            resource.setrlimit(res, (cur, top))
        except (OSError, ValueError):
            continue
        words = ['unlimited' if v == resource.RLIM_INFINITY else '%d' % (v // unit) if v % unit == 0 else None
                 for v in (top, cur)]
        if None in words:
            log('%s (%d/%d) is not a whole number of KiB; bash cannot set it back' % (name, cur, top))
            continue
        hard.append('-%s %s' % (flag, words[0]))
        soft.append('-%s %s' % (flag, words[1]))
    return ('builtin ulimit -H %s 2>/dev/null && builtin ulimit -S %s 2>/dev/null '
            '|| { builtin printf L >&3; builtin exit 0; }\n' % (' '.join(hard), ' '.join(soft)))


def spawn_as_agent(argv, env, fds):
    """Starts argv (argv[0] an absolute path) in a new session as the agent (uid/gid
    AGENT_UID, no supplementary groups, an empty bounding set, sealed: see SEALED) with fds[i] as its fd i (/dev/null for None). Python opens
    every other fd close-on-exec, so nothing of the helper's (its exec's stdin/stdout
    above all) is inherited."""
    if FS_IDS or not ISOLATED:
        return _spawn_as_agent(argv, env, fds)
    # The agent's identity is the effective one here (see FS_IDS): the child must start as
    # root, with the capabilities it needs to drop to the agent's ids and bounding set.
    with as_helper():
        return _spawn_as_agent(argv, env, fds)


def _spawn_as_agent(argv, env, fds):
    if SPAWN_VIA_SETPRIV:
        actions = []
        for target, fd in enumerate(fds):
            if fd is None:
                actions.append((os.POSIX_SPAWN_OPEN, target, '/dev/null', os.O_RDONLY, 0))
            else:
                actions.append((os.POSIX_SPAWN_DUP2, fd, target))
        as_agent = setpriv_prefix(SETPRIV, AGENT_UID, AGENT_UID, SEAL_GID if SEALED else None, DROP_BOUNDING)
        # argv[0] by its absolute path: the agent's PATH may list directories it can write.
        return os.posix_spawn(
            SETPRIV[0], as_agent + argv, env,
            file_actions=actions, setsid=True, setsigdef=RESET_SIGNALS, setsigmask=[])
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setsid()
        for target, fd in enumerate(fds):
            if fd is None:
                fd = os.open('/dev/null', os.O_RDONLY)
                if fd != target:
                    os.dup2(fd, target)
                    os.close(fd)
            else:
                os.dup2(fd, target)
        if ISOLATED:
            become(AGENT_UID, AGENT_UID, SEAL_GID if SEALED else None, DROP_BOUNDING)
        # Python ignores SIGPIPE; the command must get the default back.
        for sig in RESET_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execve(argv[0], argv, env)
    except BaseException as e:  # never return into the helper's loop in the child
        try:
            os.write(2, ('[helper] cannot start %s: %s\n' % (argv[0], e)).encode())
        finally:
            os._exit(127)


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

    def on_output(self, fd):
        stream = self.fds.get(fd)
        if stream is None:
            return
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        if not data:
            self.h.sel.unregister(fd)
            del self.fds[fd]
            os.close(fd)
            return
        self.total[stream] += len(data)
        room = self.cap - len(self.kept[stream])
        if room > 0:
            self.kept[stream] += data[:room]

    def on_state(self, fd):
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        if not data:
            self.h.sel.unregister(fd)
            os.close(fd)
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
        """SIGSTOP everything the call started until no new process appears, then SIGKILL."""
        stopped = set()
        for _ in range(10):
            new = self.find_procs() - stopped
            if not new:
                break
            for p in new:
                try:
                    os.kill(p, signal.SIGSTOP)
                except OSError:
                    pass
            stopped |= new
        for p in stopped:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass

    def hang_up(self):
        """The call returned: kill its process group, except what ignores SIGHUP (nohup).

        Processes that left the group (setsid) are not in it. The group is stopped first,
        so nothing forks or changes its signal dispositions while we look; a SIGHUP sent
        instead could be lost by a child between fork and exec.
        """
        try:
            os.killpg(self.pid, signal.SIGSTOP)
        except OSError:
            return  # nothing left in the group
        for pid in all_pids():
            s = proc_stat(pid)
            if s is not None and s.pgrp == self.pid and not ignores_sighup(pid):
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
        self.kill_tree()
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


class Visit:
    """One scan's walk over the scanner's tree: `visit` stats one name (after an event, or as
    a listing finds it), `walk` lists the directories on its stack (new ones, whole)."""

    def __init__(self, scanner, opened, old_clock, clock, file_cap, full):
        self.h = scanner
        self.opened = opened
        self.old_clock = old_clock
        self.clock = clock
        self.file_cap = file_cap
        self.full = full
        self.stack = []
        self.listed = set()
        self.force = ()  # paths hashed again whatever stat says
        self.force_ino = ()  # ... and inodes

    def forget(self, rel):
        h = self.h
        h.touched.add(rel)
        e = h.tree.pop(rel, None)
        h.skip.pop(rel, None)
        c = h.cache.pop(rel, None)
        if c is not None:
            h.by_ino.get(c.ino, set()).discard(rel)
        h.recheck.discard(rel)
        if e is not None and e.type == 'dir':
            h.drop(rel)

    def visit(self, rel_dir, name, listing=False):
        """Stats rel_dir/name and puts what is there now in the tree (nothing when it is gone)."""
        h = self.h
        rel = rel_dir + '/' + name if rel_dir else name
        if not rel_dir and name == STAGE_NAME:
            return
        path = WORKSPACE + '/' + rel
        try:
            s = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            if not listing:
                self.forget(rel)
                names = h.children.get(rel_dir)
                if names is not None:
                    names.discard(rel)
            return
        m = s.st_mode
        was = h.tree.get(rel)
        h.touched.add(rel)
        if st.S_ISREG(m):
            if was is not None and was.type == 'dir':
                h.drop(rel)
            size = s.st_size
            if self.file_cap is not None and size > self.file_cap:
                h.tree.pop(rel, None)
                h.skip[rel] = size
                h.children.setdefault(rel_dir, set()).add(rel)
                return
            h.skip.pop(rel, None)
            ino, mtime, ctime = s.st_ino, s.st_mtime_ns, s.st_ctime_ns
            c = h.cache.get(rel)
            if (c is not None and c.ino == ino and c.size == size and c.mtime_ns == mtime and c.ctime_ns == ctime
                    and c.mode == m and mtime < self.old_clock and ctime < self.old_clock
                    and rel not in self.force and ino not in self.force_ino):
                digest = c.hash
            else:
                try:
                    digest = hash_file(path)
                except FileNotFoundError:
                    return
                except OSError as e:
                    raise os_error(e, path)
                h.rehashed.append(rel)
            if c is not None and c.ino != ino:
                h.by_ino.get(c.ino, set()).discard(rel)
            h.cache[rel] = Cached(ino, size, mtime, ctime, m, digest)
            names = h.by_ino.get(ino)
            if names is None:
                h.by_ino[ino] = names = set()
            names.add(rel)
            if s.st_nlink > 1:
                # Written through another name, it changes here without an event here: every
                # name of it is stat'ed at every scan, this one included.
                h.recheck.add(rel)
                for other in names:
                    if other != rel and other in h.tree:
                        parent = other.rpartition('/')[0]
                        if parent not in self.listed:
                            self.stack.append(parent)
            elif mtime >= self.clock or ctime >= self.clock:
                h.recheck.add(rel)
            else:
                h.recheck.discard(rel)
            h.tree[rel] = Entry(rel, 'file', m & 0o7777, size, digest)
        elif st.S_ISDIR(m):
            h.tree[rel] = Entry(rel, 'dir', m & 0o7777, 0, None)
            if self.full or was is None or was.type != 'dir' or (h.watch is not None and h.watch.renewed(rel)):
                h.drop(rel)
                self.listed.discard(rel)
                self.stack.append(rel)
        elif st.S_ISLNK(m):
            if was is not None and was.type == 'dir':
                h.drop(rel)
            h.tree[rel] = Entry(rel, 'symlink', m & 0o7777, s.st_size, os.readlink(path))
        else:
            self.forget(rel)
            return
        h.children.setdefault(rel_dir, set()).add(rel)

    def walk(self):
        h = self.h
        while self.stack:
            rel_dir = self.stack.pop()
            if rel_dir in self.listed:
                continue
            self.listed.add(rel_dir)
            base = WORKSPACE + ('/' + rel_dir if rel_dir else '')
            try:
                mode = os.lstat(base).st_mode
            except (FileNotFoundError, NotADirectoryError):
                continue  # gone, or below what is now a file: its parent's listing said so
            if not st.S_ISDIR(mode):
                continue
            mode &= 0o7777
            if mode & 0o500 != 0o500:
                os.chmod(base, mode | 0o500)
                self.opened.append((base, mode))
            if h.watch is not None:
                h.watch.add(base, rel_dir)
            try:
                names = [d.name for d in os.scandir(base)]
            except OSError as e:
                raise os_error(e, base)
            before = h.children.pop(rel_dir, set())
            h.children[rel_dir] = set()
            for name in names:
                self.visit(rel_dir, name, listing=True)
            now = h.children[rel_dir]
            for child in before:
                if child not in now:
                    self.forget(child)


def owner_access(path, bits, action):
    """Runs `action(path)`; when the owner's permission bits forbid it (chmod 000), opens
    them for the duration. Every file in /workspace is the sandbox user's own."""
    try:
        return action(path)
    except PermissionError:
        mode = os.lstat(path).st_mode & 0o7777
        if mode & bits == bits:
            raise
        os.chmod(path, mode | bits)
        try:
            return action(path)
        finally:
            os.chmod(path, mode)


def _hash(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def hash_file(path):
    return owner_access(path, 0o400, _hash)


def read_workspace_file(rel, offset=0, length=None):
    """Reads a workspace file (all, or length bytes from offset) even below directories or with
    modes that forbid it (chmod 000), restoring every mode it had to open."""
    def read(path):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not st.S_ISREG(os.fstat(fd).st_mode):
                raise ToolErr('not_found', '%s is no longer a regular file' % rel)
            if length is None:
                chunks = []
                while True:
                    b = os.read(fd, 1 << 20)
                    if not b:
                        return b''.join(chunks)
                    chunks.append(b)
            out, at = [], offset
            while at < offset + length:
                b = os.pread(fd, min(1 << 20, offset + length - at), at)
                if not b:
                    break
                out.append(b)
                at += len(b)
            return b''.join(out)
        finally:
            os.close(fd)
    return with_open_parents(rel, lambda: owner_access(WORKSPACE + '/' + rel, 0o400, read))


def with_open_parents(rel, action):
    """Runs action() with every directory above rel searchable, then gives them their modes back."""
    opened = []
    try:
        parts = rel.split('/')[:-1]
        for i in range(len(parts)):
            d = WORKSPACE + '/' + '/'.join(parts[:i + 1])
            mode = os.lstat(d).st_mode & 0o7777
            if mode & 0o100 == 0:
                os.chmod(d, mode | 0o100)
                opened.append((d, mode))
        return action()
    finally:
        for d, mode in reversed(opened):
            os.chmod(d, mode)


def copy_fd(src, dst):
    while True:
        b = os.read(src, 1 << 20)
        if not b:
            return
        write_all(dst, b)


def copy_file(src_path, dst_path, mode):
    """Copies a file in bounded chunks to a fresh dst_path (replacing what is there) with mode."""
    if os.path.lexists(dst_path):
        os.unlink(dst_path)
    src = os.open(src_path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        dst = os.open(dst_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            copy_fd(src, dst)
            os.fchmod(dst, mode)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def copy_workspace_file(rel, dst_path):
    """Copies a workspace file (whatever its mode and its parents') to dst_path in bounded chunks."""
    def copy(path):
        copy_file(path, dst_path, 0o600)
    with_open_parents(rel, lambda: owner_access(WORKSPACE + '/' + rel, 0o400, copy))


HEX64 = re.compile(r'^[0-9a-f]{64}$')


def bad_entry(e, why):
    return ToolErr('invalid_manifest', 'manifest entry %r %s; the snapshot is damaged or was not made by stepbox: re-import it from a trusted bundle' % (e[0] if isinstance(e, (list, tuple)) and e else e, why))


def check_entry(e):
    """The Entry of a wire entry [path, type, mode, size, content]; refuses one whose path
    could reach outside /workspace (absolute, `..`, `.`, empty parts, NUL) or that is malformed."""
    if not isinstance(e, list) or len(e) != 5 or not isinstance(e[0], str):
        raise bad_entry(e, 'is malformed')
    e = Entry(*e)
    rel, kind = e.path, e.type
    if rel.startswith('/'):
        raise bad_entry(e, 'is an absolute path')
    if '\0' in rel or any(part in ('', '.', '..') for part in rel.split('/')):
        raise bad_entry(e, 'is not a plain relative path (empty, `.` or `..` parts)')
    if not rel.split('/')[0] or (rel.split('/')[0] == STAGE_NAME):
        raise bad_entry(e, 'uses a name stepbox reserves')
    if kind not in ('file', 'dir', 'symlink'):
        raise bad_entry(e, 'has an unknown type %r' % (kind,))
    if kind == 'file' and not (isinstance(e.content, str) and HEX64.match(e.content)):
        raise bad_entry(e, 'has no sha256 content hash')
    if kind == 'symlink' and not isinstance(e.content, str):
        raise bad_entry(e, 'has no link target')
    if not isinstance(e.mode, int) or e.mode < 0 or e.mode > 0o7777:
        raise bad_entry(e, 'has an invalid mode')
    if not isinstance(e.size, int) or e.size < 0:
        raise bad_entry(e, 'has an invalid size')
    return e


def check_parents(target, paths=None):
    """Refuses any entry below something the target does not list as a directory (of
    `paths` only, when given: the rest is known to pass)."""
    for rel in (target if paths is None else paths):
        parent = rel.rpartition('/')[0]
        if parent and (parent not in target or target[parent].type != 'dir'):
            raise bad_entry(target[rel], 'lies below %r, which the snapshot does not list as a directory' % parent)


def check_manifest(entries):
    """The target entries by path (see check_entry and check_parents), each listed once."""
    target = {}
    for e in entries:
        e = check_entry(e)
        if e.path in target:
            raise bad_entry(e, 'is listed twice')
        target[e.path] = e
    check_parents(target)
    return target


def check_parent(rel):
    """Refuses to write rel when a directory above it is a symlink (or not a directory) now."""
    parts = rel.split('/')[:-1]
    path = WORKSPACE
    for part in parts:
        path += '/' + part
        m = os.lstat(path).st_mode
        if not st.S_ISDIR(m):
            raise ToolErr('restore_failed', '%s: %s is %s, not a directory; refusing to follow it out of the workspace' % (
                rel, path, 'a symlink' if st.S_ISLNK(m) else 'not a directory'))


# A file name that is not UTF-8 reaches Python as lone surrogates (surrogateescape) and the
# host as the same lone surrogates in JSON; Node hashes those as U+FFFD, and so do we.
codecs.register_error('stepbox-fffd', lambda e: (b'\xef\xbf\xbd' * (e.end - e.start), e.end))


def tree_hash(entries):
    """sha256 of shared/tree-hash.ts treeHashText, byte for byte."""
    lines = [tree_line(e) for e in sorted(entries, key=lambda e: e.path.encode('utf-16-be', 'surrogatepass'))]
    return hashlib.sha256(''.join(lines).encode('utf-8', 'stepbox-fffd')).hexdigest()


IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_Q_OVERFLOW, IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x1000000, 0x2000000, 0x40000000
WATCH_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
              | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW)
EVENT = struct.Struct('iIII')
# The uid the helper's inotify instance is counted against (see Watch.open): one no host
# account or rootless-container range uses.
INOTIFY_UID = 2000000000


# What a Watch saw since the last scan: directories to list, (directory, name) pairs to
# stat, paths written.
Changes = collections.namedtuple('Changes', 'dirty names written')


class Watch:
    """inotify on every directory of /workspace: which directories something happened in
    since the last scan, so a scan lists and stat's only those. Anything it cannot vouch
    for (a queue overflow, a directory moved, a watch refused) asks for a full walk."""

    def __init__(self, libc, fd):
        self.libc = libc
        self.fd = fd
        self.rel = {}  # wd -> directory (relative path, '' for /workspace)
        self.fresh = set()  # directories created since the last scan
        self.pending = set()  # ... as the scan under way sees them
        self.full = True

    @staticmethod
    def open():
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
        except (ImportError, OSError):
            return None
        # Counted against a uid of its own, neither root's nor the agent's: inotify instances
        # and watches are limited per user on the whole host (128 instances by default), and
        # root's serve the host's daemons while uid 1000 is often the person at the desktop.
        root = os.geteuid() == 0
        try:
            if root:
                os.seteuid(INOTIFY_UID)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            fd = -1
        finally:
            if root:
                os.seteuid(0)
                set_fs_ids(AGENT_UID)
        if fd < 0:
            log('no inotify (%s): every scan walks all of /workspace' % os.strerror(ctypes.get_errno() or errno.ENOSYS))
            return None
        return Watch(libc, fd)

    def add(self, path, rel):
        if self.full and rel == '':
            # A full walk starts: every directory's watch is named again as it is listed.
            self.rel = {}
            self.fresh = set()
            self.full = False
        wd = self.libc.inotify_add_watch(self.fd, path.encode('utf-8', 'surrogateescape'), WATCH_MASK)
        if wd < 0:
            log('inotify refused %s; scans walk everything from now on' % path)
            self.full = True
            return
        self.rel[wd] = rel

    def renewed(self, rel):
        return rel in self.pending

    def changed(self):
        """(directories to list, (directory, name) pairs to stat, paths written) for what
        happened since the last call, or None when a full walk is due."""
        dirty, names, written = set(), set(), set()
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self.full = True
                break
            if not data:
                break
            at = 0
            while at + 16 <= len(data):
                wd, mask, _cookie, n = EVENT.unpack_from(data, at)
                name = data[at + 16:at + 16 + n].split(b'\0', 1)[0].decode('utf-8', 'surrogateescape')
                at += 16 + n
                if mask & IN_Q_OVERFLOW or (mask & IN_ISDIR and mask & (IN_MOVED_FROM | IN_MOVED_TO)) or mask & IN_MOVE_SELF:
                    self.full = True
                    continue
                rel = self.rel.get(wd)
                if mask & IN_IGNORED:
                    self.rel.pop(wd, None)
                    continue
                if rel is None:
                    continue
                if name:
                    names.add((rel, name))
                    if mask & (IN_MODIFY | IN_CLOSE_WRITE):
                        written.add(rel + '/' + name if rel else name)
                    if mask & IN_ISDIR and mask & IN_CREATE:
                        self.fresh.add(rel + '/' + name if rel else name)
                elif rel and not mask & IN_DELETE_SELF:
                    # The directory itself (its mode, say): its entry is its parent's.
                    names.add(rel.rpartition('/')[::2])
        if self.full:
            return None
        fresh, self.fresh = self.fresh, set()
        self.pending = fresh
        return Changes(dirty, names, written)


class TreeHasher:
    """tree_hash() of a path -> entry map, keeping the sorted order and each entry's line
    from the last call: after a small change only the changed lines are formatted again."""

    def __init__(self):
        self.keys = None
        self.order = []
        self.lines = {}
        self.tree = None  # the dict of the last call (the helper's live tree, or another)

    def of(self, tree, touched=None, since=None):
        """The tree hash of `tree`; `touched`, when given, holds every path whose entry may
        differ from the tree of the last call (the others' lines are reused unlooked-at), or,
        with `since`, from `since` when that was the tree of the last call."""
        keys = self.keys
        if keys is None or self.tree is not (tree if since is None else since):
            touched = None
        if touched is None:
            same = keys is not None and tree.keys() == keys
        else:
            same = all((rel in tree) == (rel in keys) for rel in touched)
        if not same:
            self.order = sorted(tree, key=lambda p: p.encode('utf-16-be', 'surrogatepass'))
            self.keys = keys = set(tree)
            self.lines = {k: v for k, v in self.lines.items() if k in keys}
        self.tree = tree
        lines = self.lines
        for rel in (tree if touched is None or not same else (r for r in touched if r in tree)):
            e = tree[rel]
            c = lines.get(rel)
            # The same entry object (a tree built from the last one) is the same line: no compare.
            if c is None or (c[0] is not e and c[0] != e):
                lines[rel] = (e, tree_line(e))
        return hashlib.sha256(''.join([lines[r][1] for r in self.order]).encode('utf-8', 'stepbox-fffd')).hexdigest()


def tree_line(e):
    path = e.path.replace('\\', '\\\\').replace('\n', '\\n')
    size = 0 if e.type == 'dir' else e.size
    content = e.content if e.type != 'dir' else '-'
    return '%s %04o %s %d %s\n' % (e.type, e.mode & 0o7777, path, size, content)


def make_writable(path):
    try:
        m = os.lstat(path).st_mode
        if st.S_ISDIR(m) and m & 0o700 != 0o700:
            os.chmod(path, (m & 0o7777) | 0o700)
    except OSError:
        pass


def clear_dir(path, keep=None):
    """Removes everything inside `path` (not `path` itself, nor an entry named `keep`), opening read-only dirs as needed."""
    make_writable(path)
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for e in entries:
        if e.name == keep:
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                clear_dir(e.path)
                os.rmdir(e.path)
            else:
                os.unlink(e.path)
        except OSError as err:
            log('cannot remove %s: %s' % (e.path, err))


# Run by the engine's bootstrap (`python3 -c`, so __main__); imported, it only defines (a
# unit test reads the state-dump parser this way).
if __name__ == '__main__':
    sys.stdout = sys.stderr
    set_fs_ids(AGENT_UID)
    Helper().run()
