# stepbox helper, part: the channel to the host: frames in and out (the framing itself is the
# prelude's), the host's socket, and the errors an operation answers with.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import collections
import errno
import json
import os
import select
import selectors


# ---------------------------------------------------------------- framing



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




def send(header, payload=b''):
    h = encode_header(header).encode('ascii')
    head = FRAME_HEAD.pack(len(h), len(payload)) + h
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
