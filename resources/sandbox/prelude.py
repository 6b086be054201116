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
#
# Also theirs alike: the one framing of their channels to the host (frame, FrameReader), the
# runtime's paths, the container's environment, emptying a folder, and their log lines.
import json
import os
import selectors
import struct

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



# ---------------------------------------------------------------- framing
# Every channel between the host and a program here (the helper's requests and replies, the
# bridge's frames, the verifier's request and report) is frames of
#   [u32 BE header length][u32 BE payload length][header: UTF-8 JSON object][payload: raw bytes]
# The host's side: electron/engine/sandbox/frames.ts; each channel's headers are typed in
# electron/engine/sandbox/sandbox-channels.ts, which a test holds against the tables here.
FRAME_HEAD = struct.Struct('>II')


class FrameError(ValueError):
    """Bytes that are not a frame of the host's (a length beyond the channel's limits)."""


# One buffer that reads of unknown length land in (one thread per program). os.read(fd, n)
# allocates n bytes before it reads and gives back what it did not use; for n of 256 KiB and
# more the C allocator then grows and trims the heap (or maps and unmaps) on every call: ~13 us
# warm in the sandbox's python for a 120-byte frame read with n = 1 MiB, ~1.5 us into this
# buffer and out. The helper paid it on every request the host sent (a tool call's included).
_SCRATCH = bytearray(1 << 20)
_SCRATCH_VIEW = memoryview(_SCRATCH)


def read_some(fd):
    """One read of `fd` of up to 1 MiB (raising as os.read does), as bytes: b'' at its end."""
    n = os.readv(fd, [_SCRATCH])
    return bytes(_SCRATCH_VIEW[:n])


def write_all(fd, data):
    """Writes all of `data` to `fd`, blocking or not (a non-blocking fd waits until writable)."""
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


def frame(header, payload=b''):
    """One frame: `header` (a dict) as compact JSON, then `payload`."""
    h = encode_header(header).encode('ascii')
    return FRAME_HEAD.pack(len(h), len(payload)) + h + payload


# A frame at least this large (head included) is filled in one buffer of its own size (see
# FrameReader): the blobs of a restore cross in frames of megabytes.
LARGE_FRAME = 256 * 1024


class FrameReader(object):
    """Whole frames out of a byte stream as it arrives: feed() answers the (header, payload)
    pairs its bytes complete and keeps the rest. The usual read (whole frames, nothing kept
    before it) is parsed where it lies, not copied into the buffer and out again. A large
    frame, once its head is known, is filled in one buffer of its size (read() reads into it
    straight from the fd) and its payload handed on as that bytearray: grown read by read
    and copied out whole, a 4 MiB payload cost the helper ~10 times the CPU of its reads,
    the most of a fork's restore."""

    def __init__(self, max_header, max_payload):
        self.buf = bytearray()
        self.max_header, self.max_payload = max_header, max_payload
        # The large frame being filled: its header and payload buffers, and the bytes in them.
        self.large = None
        self.filled = 0

    def read(self, fd):
        """Reads once from `fd` (raising as os.read does): the frames completed, None at its end."""
        large = self.large
        if large is None:
            data = read_some(fd)
            return self.feed(data) if data else None
        head, body = large
        got = self.filled
        n = os.readv(fd, [memoryview(head)[got:], body] if got < len(head) else [memoryview(body)[got - len(head):]])
        if not n:
            return None
        self.filled += n
        return self.finish_large()

    def finish_large(self):
        """The large frame, once filled, as a list of one frame (else an empty list)."""
        head, body = self.large
        if self.filled < len(head) + len(body):
            return []
        self.large = None
        return [(decode_header(head), body)]

    def feed(self, data):
        frames = []
        if self.large is not None:
            head, body = self.large
            total = len(head) + len(body)
            n = min(len(data), total - self.filled)
            at = self.filled
            with memoryview(data) as view:
                if at < len(head):
                    k = min(n, len(head) - at)
                    head[at:at + k] = view[:k]
                    body[0:n - k] = view[k:n]
                else:
                    body[at - len(head):at - len(head) + n] = view[:n]
            self.filled += n
            frames = self.finish_large()
            if not frames:
                return frames
            data = data[n:]
        if self.buf:
            self.buf += data
            data = self.buf
        pos = 0
        while len(data) - pos >= 8:
            hlen, plen = FRAME_HEAD.unpack_from(data, pos)
            if hlen > self.max_header or plen > self.max_payload:
                raise FrameError('a frame of %d+%d bytes is not the host\'s' % (hlen, plen))
            end = pos + 8 + hlen + plen
            if len(data) < end:
                if end - pos >= LARGE_FRAME:
                    # Filled in place from here on (see read).
                    self.large = (bytearray(hlen), bytearray(plen))
                    self.filled = 0
                    if data is self.buf:
                        self.buf = bytearray()
                    return frames + self.feed(memoryview(data)[pos + 8:])
                break
            header = decode_header(data[pos + 8:pos + 8 + hlen])
            if plen:
                with memoryview(data) as view:
                    payload = view[pos + 8 + hlen:end].tobytes()
            else:
                payload = b''
            pos = end
            frames.append((header, payload))
        if data is self.buf:
            del self.buf[:pos]
        elif pos < len(data):
            self.buf = bytearray(data[pos:])
        return frames

    @property
    def pending(self):
        """Whether part of a frame is waiting for the rest."""
        return bool(self.buf) or self.large is not None


# ---------------------------------------------------------------- the runtime
# stepbox's runtime, a read-only volume in every sandbox (electron/engine/sandbox/
# sandbox-runtime.ts): this interpreter, util-linux's setpriv and ipcrm (started with the
# runtime's own loader and libraries: the image may have no loader, or another C library),
# busybox and a static bash. The image needs none of them.
RUNTIME = '/opt/stepbox/runtime'
RUNTIME_LOADER = [RUNTIME + '/lib/ld.so', '--inhibit-cache', '--library-path', RUNTIME + '/lib']
RUNTIME_BASH = RUNTIME + '/bin/bash'


def runtime_program(name):
    """The argv prefix starting the runtime's dynamic program `name` (usr/bin/NAME)."""
    return RUNTIME_LOADER + [RUNTIME + '/usr/bin/' + name]


# ---------------------------------------------------------------- the container, folders, logs
# Which program a line on stderr comes from (`[helper] …`); each program names itself.
LOG_NAME = 'stepbox'


def log(message):
    """One line on stderr, named for the program (never on its channel to the host)."""
    try:
        os.write(2, ('[%s] %s\n' % (LOG_NAME, message)).encode('utf-8', 'replace'))
    except OSError:
        pass


def container_env():
    """The container's own environment (pid 1's): a root program's exec gets a fixed root
    PATH and HOME (root-exec.ts), which are not the agent's. The helper reads it with its
    own filesystem identity (as_helper)."""
    try:
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


def make_writable(path):
    """Opens a directory's owner bits (a chmod 000 folder of the agent's can be emptied)."""
    try:
        m = os.lstat(path).st_mode
        if (m & 0o170000) == 0o040000 and m & 0o700 != 0o700:
            os.chmod(path, (m & 0o7777) | 0o700)
    except OSError:
        pass


def clear_dir(path, keep=None):
    """Removes everything inside `path` (not `path` itself, nor an entry named `keep`), never
    following a link, opening read-only folders as needed; what it could not remove, as a
    list of 'path: why' (each also logged)."""
    make_writable(path)
    try:
        entries = list(os.scandir(path))
    except OSError:
        return []
    failed = []
    for e in entries:
        if e.name == keep:
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                failed += clear_dir(e.path)
                os.rmdir(e.path)
            else:
                os.unlink(e.path)
        except OSError as err:
            log('cannot remove %s: %s' % (e.path, err))
            failed.append('%s: %s' % (e.path, err))
    return failed

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
