# stepbox in-sandbox agent bridge (`--agent sandbox:CMD`, recipes).
#
# One python3 process per run of an agent inside the sandbox, started as root by its own
# `docker exec` (the runtime's `python3 -I -c SOURCE`, never the image's), apart from the helper. It
#   1. checks the agent's files (--agent-dir, a recipe's package: a read-only volume at
#      /opt/agent, filled once per engine) are whole (their hash mark);
#   2. listens on 127.0.0.1:PORT inside the container (the network stays `none`; loopback
#      is all there is) and carries every connection over its stdio to the host, where
#      stepbox pipes it to the episode's model endpoint: the agent reaches the endpoint
#      through stepbox's own channel, so it works on a remote engine too;
#   3. starts `sh -c CMD` as the sandbox user in /workspace, in its own session, with the
#      environment the host sends (the HOME files written as that user first), relays its
#      stdout/stderr and reports its exit.
# Root and undumpable: the agent's processes (uid 1000, no capabilities) cannot ptrace,
# signal or open the fds of this process, so they cannot reach the channel to the host.
#
# Frames both ways: [1 byte type][u32 BE channel][u32 BE length][payload].
# host -> bridge: S start (JSON), D data for a connection, C close a connection, K stop the
#   agent (TERM, KILL after a grace).
# bridge -> host: R {port, pid} ready, O a new
#   connection, D data, C close, 1 stdout bytes, 2 stderr bytes, X {code, signal} the agent
#   exited, E {message} a fatal error.
import errno
import json
import os
import selectors
import shutil
import signal
import socket
import struct
import sys
import time

if 'PRELUDE' not in globals():
    # Run from its file (tests): the prelude (programs.json), which the host sends ahead of
    # this source, read from beside it into this namespace.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from prelude import load_parts
    load_parts('bridge.py', globals())

AGENT_DIR = '/opt/agent'
HASH_FILE = AGENT_DIR + '/.stepbox-files'
HEAD = struct.Struct('>cII')
MAX_FRAME = 8 * 1024 * 1024
KILL_GRACE = 2.0
BOUNDING = False


def send(kind, chan=0, payload=b''):
    data = HEAD.pack(kind, chan, len(payload)) + payload
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        view = view[n:]


def send_json(kind, obj):
    send(kind, 0, json.dumps(obj).encode())


class Frames:
    """Parses frames from stdin as they arrive."""

    def __init__(self):
        self.buf = bytearray()
        # Frames read ahead of the phase that handles them.
        self.pending = []

    def feed(self, data):
        self.buf += data
        out = []
        while len(self.buf) >= HEAD.size:
            kind, chan, n = HEAD.unpack_from(self.buf)
            if n > MAX_FRAME:
                raise ValueError('frame too large')
            if len(self.buf) < HEAD.size + n:
                break
            out.append((kind, chan, bytes(self.buf[HEAD.size:HEAD.size + n])))
            del self.buf[:HEAD.size + n]
        return out


def read_frames_until(frames, kinds):
    """Blocking read of stdin until a frame of one of `kinds`; returns the frames read."""
    got = []
    while True:
        data = os.read(0, 1 << 20)
        if not data:
            sys.exit(0)
        for f in frames.feed(data):
            got.append(f)
            if f[0] in kinds:
                return got


def safe_rel(path):
    parts = [p for p in path.split('/') if p not in ('', '.')]
    if not parts or any(p == '..' for p in parts):
        raise ValueError('bad agent file path: %r' % path)
    return '/'.join(parts)


def clear_dir(path):
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            try:
                os.unlink(full)
            except OSError:
                pass


def check_agent_files(start):
    """The agent's files are a read-only volume at /opt/agent; its hash mark says it is whole."""
    want = start.get('agent_dir_hash')
    if want is None:
        return
    try:
        with open(HASH_FILE) as f:
            have = f.read()
    except OSError:
        have = None
    if have != want:
        raise RuntimeError('the agent files at %s are incomplete (found %r, want %r)' % (AGENT_DIR, have, want))


# stepbox's runtime volume (electron/engine/sandbox/sandbox-runtime.ts): a static bash.
RUNTIME = '/opt/stepbox/runtime'
RUNTIME_BASH = RUNTIME + '/bin/bash'


def start_agent(start, port):
    """Forks `sh -c CMD` as the sandbox user in its own session; returns (pid, stdout fd, stderr fd)."""
    uid, gid = int(start['uid']), int(start['gid'])
    env = {str(k): str(v).replace('@PORT@', str(port)) for k, v in start['env'].items()}
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            # Its fds first (the bridge's stdio is the channel to the host), then the one drop
            # of prelude.py: an empty bounding set, no groups, the agent's ids.
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            null = os.open('/dev/null', os.O_RDONLY)
            os.dup2(null, 0)
            os.closerange(3, 65536)
            become(uid, gid, bounding=BOUNDING)
            home = env.get('HOME')
            if home and start.get('clear_home'):
                clear_dir(home)
            os.umask(0o022)
            for rel, content in (start.get('home_files') or {}).items():
                full = os.path.join(home, safe_rel(rel))
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, 'w') as f:
                    f.write(content.replace('@PORT@', str(port)))
            os.chdir(start.get('cwd') or '/workspace')
            # The image's /bin/sh; an image without one gets the runtime's bash (sandbox-runtime.ts).
            shell = '/bin/sh' if os.access('/bin/sh', os.X_OK) else RUNTIME_BASH
            os.execve(shell, ['sh', '-c', start['command']], env)
        except BaseException as e:  # noqa: BLE001 - the child must never return into the bridge
            try:
                os.write(2, ('stepbox bridge: cannot start the agent: %s\n' % e).encode())
            finally:
                os._exit(127)
    os.close(out_w)
    os.close(err_w)
    return pid, out_r, err_r


def listen_local(port):
    """A socket bound to 127.0.0.1:`port` (the host endpoint's port, so URLs read alike), or to
    a free port when that one is taken: on a network shared with the host (`network: host`)
    the endpoint itself holds it, and a process left on it must not make the agent fail or
    receive its requests. The agent is told the port bound (@PORT@)."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(('127.0.0.1', port))
    except OSError as e:
        if e.errno != errno.EADDRINUSE or port == 0:
            raise
        listener.close()
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(('127.0.0.1', 0))
    return listener


class Bridge:
    def __init__(self, frames, start):
        self.frames = frames
        self.sel = selectors.DefaultSelector()
        self.conns = {}
        self.next_chan = 1
        self.listener = listen_local(int(start.get('port') or 0))
        self.listener.listen(64)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.pid, out_r, err_r = start_agent(start, self.port)
        self.exit = None
        self.kill_at = None
        self.sel.register(0, selectors.EVENT_READ, ('stdin', None))
        self.sel.register(self.listener, selectors.EVENT_READ, ('accept', None))
        self.sel.register(out_r, selectors.EVENT_READ, ('out', b'1'))
        self.sel.register(err_r, selectors.EVENT_READ, ('out', b'2'))
        self.pidfd = None
        try:
            self.pidfd = os.pidfd_open(self.pid)
            self.sel.register(self.pidfd, selectors.EVENT_READ, ('exit', None))
        except (AttributeError, OSError):
            self.pidfd = None
        send_json(b'R', {'port': self.port, 'pid': self.pid})
        for kind, chan, payload in frames.pending:
            self.on_host(kind, chan, payload)
        frames.pending = []

    def signal_agent(self, sig):
        try:
            os.killpg(self.pid, sig)
        except OSError:
            pass

    def reap(self):
        if self.exit is not None:
            return
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, 0
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        self.exit = {'code': code if code >= 0 else None, 'signal': -code if code < 0 else None}
        send_json(b'X', self.exit)
        if self.pidfd is not None:
            self.sel.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = None

    def on_host(self, kind, chan, payload):
        if kind == b'D':
            sock = self.conns.get(chan)
            if sock is not None:
                try:
                    sock.setblocking(True)
                    sock.sendall(payload)
                    sock.setblocking(False)
                except OSError:
                    self.close(chan, tell=True)
        elif kind == b'C':
            self.close(chan, tell=False)
        elif kind == b'K':
            self.signal_agent(signal.SIGTERM)
            self.kill_at = time.monotonic() + KILL_GRACE

    def close(self, chan, tell):
        sock = self.conns.pop(chan, None)
        if sock is None:
            return
        try:
            self.sel.unregister(sock)
        except (KeyError, ValueError):
            pass
        sock.close()
        if tell:
            send(b'C', chan)

    def run(self):
        while True:
            timeout = None
            if self.pidfd is None and self.exit is None:
                timeout = 0.05
            if self.kill_at is not None:
                timeout = max(0.0, min(timeout or 1.0, self.kill_at - time.monotonic()))
            for key, _ in self.sel.select(timeout):
                what, arg = key.data
                if what == 'stdin':
                    data = os.read(0, 1 << 20)
                    if not data:
                        # The host is gone: the agent goes with it.
                        self.signal_agent(signal.SIGKILL)
                        return
                    for kind, chan, payload in self.frames.feed(data):
                        self.on_host(kind, chan, payload)
                elif what == 'accept':
                    try:
                        sock, _ = self.listener.accept()
                    except OSError:
                        continue
                    sock.setblocking(False)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    chan = self.next_chan
                    self.next_chan += 1
                    self.conns[chan] = sock
                    self.sel.register(sock, selectors.EVENT_READ, ('conn', chan))
                    send(b'O', chan)
                elif what == 'conn':
                    try:
                        data = key.fileobj.recv(1 << 16)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b''
                    if data:
                        send(b'D', arg, data)
                    else:
                        self.close(arg, tell=True)
                elif what == 'out':
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        send(arg, 0, data)
                    else:
                        self.sel.unregister(key.fd)
                        os.close(key.fd)
                elif what == 'exit':
                    self.reap()
            if self.pidfd is None:
                self.reap()
            if self.kill_at is not None and time.monotonic() >= self.kill_at:
                self.signal_agent(signal.SIGKILL)
                self.kill_at = None


def main():
    global BOUNDING
    # Sealed, as every root program of stepbox's in the sandbox (prelude.py); whether it may
    # empty the agent's bounding set is read once, here, not in the child.
    undumpable()
    BOUNDING = can_drop_bounding()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    frames = Frames()
    got = read_frames_until(frames, (b'S',))
    start = json.loads(got[-1][2])
    try:
        check_agent_files(start)
        bridge = Bridge(frames, start)
    except Exception as e:  # noqa: BLE001 - reported to the host, which ends the episode with it
        send_json(b'E', {'message': '%s: %s' % (type(e).__name__, e)})
        return
    bridge.run()


main()
