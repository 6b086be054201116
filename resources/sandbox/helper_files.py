# stepbox helper, part: the file tools (read_file, write_file, list_dir) and how the helper reads
# and copies a workspace file whatever its mode and its parents'.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import hashlib
import os
import stat as st


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
                b = read_some(fd)
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
                    b = read_some(fd)
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
        b = read_some(src)
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
