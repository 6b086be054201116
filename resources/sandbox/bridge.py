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
# Frames both ways are the prelude's (a JSON header, a raw payload); each header names its
# `kind`, and FRAMES below lists every kind with its sender and fields.
import collections
import errno
import os
import selectors
import signal
import socket
import sys
import time

if 'PRELUDE' not in globals():
    # Run from its file (tests): the prelude (programs.json), which the host sends ahead of
    # this source, read from beside it into this namespace.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from prelude import load_parts
    load_parts('bridge.py', globals())

LOG_NAME = 'bridge'
AGENT_DIR = '/opt/agent'
HASH_FILE = AGENT_DIR + '/.stepbox-files'
# Frames larger than these are not the host's (a connection's chunk is 64 KiB).
MAX_HEADER = 1024 * 1024
MAX_PAYLOAD = 8 * 1024 * 1024
KILL_GRACE = 2.0
BOUNDING = False

# Every frame of the bridge's channel: who sends it ('host', 'bridge' or 'both'), its header fields
# besides `kind` (`?`: may be left out), whether a payload rides with it, and what it says.
# The host's side of the same table is electron/engine/sandbox/sandbox-channels.ts
# (BRIDGE_FRAMES); a unit test compares the two.
Frame = collections.namedtuple('Frame', 'sender fields payload doc')
FRAMES = {
    'start': Frame('host', 'uid gid cwd command env home_files clear_home agent_dir_hash port', False,
                   'Checks the agent files, listens on 127.0.0.1:port and starts `sh -c command` as uid.'),
    'data': Frame('both', 'chan', True, "Bytes on connection chan (the agent's, or the model endpoint's answer)."),
    'close': Frame('both', 'chan', False, 'Connection chan closed (by the agent, or by the endpoint).'),
    'stop': Frame('host', '', False, 'Stops the agent: TERM, KILL after a grace.'),
    'ready': Frame('bridge', 'port pid', False, 'The agent started; it reaches the model at 127.0.0.1:port.'),
    'open': Frame('bridge', 'chan', False, 'The agent opened connection chan.'),
    'stdout': Frame('bridge', '', True, "The agent's stdout bytes."),
    'stderr': Frame('bridge', '', True, "The agent's stderr bytes."),
    'exit': Frame('bridge', 'code signal', False, 'The agent exited (code, or the signal that killed it).'),
    'error': Frame('bridge', 'message', False, 'The bridge could not start the agent.'),
}


def send(kind, payload=b'', **fields):
    fields['kind'] = kind
    write_all(1, frame(fields, payload))


def read_start(frames):
    """Blocking read of stdin until the host's start frame: its header, and the frames that
    came after it in the same read (the host may send data right behind it)."""
    while True:
        data = read_some(0)
        if not data:
            sys.exit(0)
        got = frames.feed(data)
        for i, (header, _) in enumerate(got):
            if header.get('kind') == 'start':
                return header, got[i + 1:]


def safe_rel(path):
    parts = [p for p in path.split('/') if p not in ('', '.')]
    if not parts or any(p == '..' for p in parts):
        raise ValueError('bad agent file path: %r' % path)
    return '/'.join(parts)


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
    def __init__(self, frames, start, pending):
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
        self.sel.register(out_r, selectors.EVENT_READ, ('out', 'stdout'))
        self.sel.register(err_r, selectors.EVENT_READ, ('out', 'stderr'))
        self.pidfd = None
        try:
            self.pidfd = os.pidfd_open(self.pid)
            self.sel.register(self.pidfd, selectors.EVENT_READ, ('exit', None))
        except (AttributeError, OSError):
            self.pidfd = None
        send('ready', port=self.port, pid=self.pid)
        for header, payload in pending:
            self.on_host(header, payload)

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
        send('exit', **self.exit)
        if self.pidfd is not None:
            self.sel.unregister(self.pidfd)
            os.close(self.pidfd)
            self.pidfd = None

    def on_host(self, header, payload):
        kind, chan = header.get('kind'), header.get('chan')
        if kind == 'data':
            sock = self.conns.get(chan)
            if sock is not None:
                try:
                    sock.setblocking(True)
                    sock.sendall(payload)
                    sock.setblocking(False)
                except OSError:
                    self.close(chan, tell=True)
        elif kind == 'close':
            self.close(chan, tell=False)
        elif kind == 'stop':
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
            send('close', chan=chan)

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
                    data = read_some(0)
                    if not data:
                        # The host is gone: the agent goes with it.
                        self.signal_agent(signal.SIGKILL)
                        return
                    for header, payload in self.frames.feed(data):
                        self.on_host(header, payload)
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
                    send('open', chan=chan)
                elif what == 'conn':
                    try:
                        data = key.fileobj.recv(1 << 16)
                    except BlockingIOError:
                        continue
                    except OSError:
                        data = b''
                    if data:
                        send('data', data, chan=arg)
                    else:
                        self.close(arg, tell=True)
                elif what == 'out':
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        send(arg, data)
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
    frames = FrameReader(MAX_HEADER, MAX_PAYLOAD)
    start, pending = read_start(frames)
    try:
        check_agent_files(start)
        bridge = Bridge(frames, start, pending)
    except Exception as e:  # noqa: BLE001 - reported to the host, which ends the episode with it
        send('error', message='%s: %s' % (type(e).__name__, e))
        return
    bridge.run()


# Run by the host (`python3 -c`, so __main__); imported, it only defines (the channels' test
# reads FRAMES this way).
if __name__ == '__main__':
    main()
