# stepbox helper, part: a restore into an empty workspace (a fork's pooled sandbox): each blob
# written straight to its paths as it arrives, hashed before it is written, no stage, no plan.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import hashlib
import os
import time


class Fill:
    """One fill under way: the target tree, each blob's paths and size, and what has arrived."""

    __slots__ = ('target', 'tree_hash', 'verify', 'paths', 'size', 'got', 'sha', 'made', 'written', 'started')

    def __init__(self, target, tree_hash, verify):
        self.target = target
        self.tree_hash = tree_hash
        self.verify = verify
        self.paths = {}  # hash -> paths with that content, in path order
        self.size = {}  # hash -> its size, as the target gives it
        for e in target.values():
            if e.type == 'file':
                self.paths.setdefault(e.content, []).append(e.path)
                if self.size.setdefault(e.content, e.size) != e.size:
                    raise bad_entry(e, 'has the content of another entry with another size')
        self.got = {}  # hash -> bytes of it written so far
        self.sha = {}  # hash -> its running hash, while it spans frames
        self.made = []  # directories made (closed to their modes at the end)
        self.written = 0
        self.started = time.monotonic()


class Filler:
    """Puts a tree into /workspace when it is empty and nothing but the helper runs (a pooled
    sandbox a fork just took): the tree checked as a restore checks it, its directories made,
    then each blob, as its chunks arrive (the stage's framing: [hash, offset, length] parts in
    payload order), written to every path that holds it. A blob whole in one payload is
    hashed before it is written; one spread over payloads is hashed as it is written and
    checked at its end. Anything refused leaves /workspace empty again, as it was.

    Nothing needs diffing, moving or a second look: every path is new (O_EXCL, O_NOFOLLOW)
    in directories the helper made itself, in a container where, from the first frame to the
    last, no process ran but the helper's own (Restorer.begin_staging / still_quiet; were one
    to start, the tree is rehashed from disk before its hash is answered). A restore into a
    workspace that holds anything is refused (`not_pristine`): the host restores it the usual
    way."""

    def __init__(self, restorer, scanner):
        self.restorer = restorer
        self.scanner = scanner
        self.fill = None

    def reset(self):
        self.fill = None

    def op_fill(self, req, payload):
        """The first request names the tree (`entries`, `tree_hash`, `verify`); each carries
        `parts` of blobs in its payload; the one marked `last` answers as a restore does."""
        if 'entries' in req:
            self.start(req)
        elif self.fill is None:
            raise ToolErr('invalid_arguments', 'fill: no fill under way (its first request names the tree)')
        try:
            self.write_parts(req['parts'], payload, req.get('named') is True)
            if not req.get('last'):
                return {}
            return self.finish()
        except BaseException:
            self.abandon()
            raise

    def start(self, req):
        r, sc = self.restorer, self.scanner
        self.fill = None
        if not isinstance(req.get('tree_hash'), str) or not HEX64.match(req['tree_hash']):
            raise ToolErr('invalid_arguments', 'fill: tree_hash is not a sha256 hex digest')
        target = check_manifest(req['entries'])
        # Empty, and nothing running that could put anything there (the agent's idle shells,
        # unsealed, are replaced: see begin_staging).
        if os.listdir(WORKSPACE):
            raise ToolErr('not_pristine', 'fill: /workspace is not empty; restore it instead')
        r.begin_staging()
        if not isinstance(r.stage_quiet, tuple):
            raise ToolErr('not_pristine', 'fill: a process of the agent runs; restore it instead')
        # The scanner's view of the workspace before (an empty tree), as a restore takes it.
        if sc.scan(file_cap=sc.file_cap):
            raise ToolErr('not_pristine', 'fill: /workspace is not empty; restore it instead')
        f = self.fill = Fill(target, req['tree_hash'], req.get('verify'))
        old = os.umask(0)
        try:
            # Parents first (a path's parent is listed, as a directory, before it: check_manifest),
            # open to the helper until the end; symlinks now, they need no content.
            # (Files are most of a tree and wait for their content: left out of the sort.)
            for rel in sorted((p for p, e in target.items() if e.type != 'file'), key=lambda p: p.count('/')):
                e = target[rel]
                if e.type == 'dir':
                    os.mkdir(WORKSPACE + '/' + rel, 0o700)
                    f.made.append(e)
                    f.written += 1
                elif e.type == 'symlink':
                    os.symlink(e.content, WORKSPACE + '/' + rel)
                    f.written += 1
        finally:
            os.umask(old)

    def write_parts(self, parts, payload, named=False):
        """Writes the blobs of `parts`. `named`: the host hashed every blob whole in this
        payload itself (the channel is the host's alone, so these bytes are what their names
        say; ten branches forked at once had each helper hash the same 10 MB again). A blob
        spread over payloads is hashed here either way."""
        f = self.fill
        view = memoryview(payload)
        total = len(view)
        off = 0
        target, paths_of, size_of, got = f.target, f.paths, f.size, f.got
        sha256 = hashlib.sha256
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        old = os.umask(0)
        try:
            for h, at, n in parts:
                paths = paths_of.get(h)
                if paths is None or not isinstance(at, int) or not isinstance(n, int) or n < 0:
                    raise ToolErr('invalid_arguments', 'fill: part %r is not a blob of the tree' % ([h, at, n],))
                if at != got.get(h, 0) or at + n > size_of[h] or off + n > total:
                    raise ToolErr('restore_failed', 'fill: blob %s sent out of order or past its end; the transfer was cut' % h)
                chunk = view[off:off + n]
                off += n
                if at == 0 and n == size_of[h]:
                    # Whole here: checked before anything is written (by the host, when named).
                    if not named and sha256(chunk).hexdigest() != h:
                        raise damaged_blob(h, target)
                    for rel in paths:
                        mode = target[rel].mode
                        if mode & 0o7000:
                            self.write_new(rel, mode, chunk)
                            continue
                        # write_new's usual case inline: a thousand small files per payload.
                        fd = os.open(WORKSPACE + '/' + rel, flags, mode)
                        try:
                            write_all(fd, chunk)
                        finally:
                            os.close(fd)
                        f.written += 1
                    got[h] = n
                    continue
                e = target[paths[0]]
                # Spread over payloads: its first path grows chunk by chunk, hashed as written;
                # the other paths get a copy once it checks.
                sha = f.sha.setdefault(h, hashlib.sha256())
                sha.update(chunk)
                if at == 0:
                    self.write_new(paths[0], e.mode, chunk)
                else:
                    fd = os.open(WORKSPACE + '/' + paths[0], os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
                    try:
                        if os.fstat(fd).st_size != at:
                            raise ToolErr('restore_failed', 'fill: %s changed while it was written' % paths[0])
                        write_all(fd, chunk)
                    finally:
                        os.close(fd)
                f.got[h] = at + n
                if f.got[h] == f.size[h]:
                    del f.sha[h]
                    if sha.hexdigest() != h:
                        raise damaged_blob(h, f.target)
                    for rel in paths[1:]:
                        copy_file(WORKSPACE + '/' + paths[0], WORKSPACE + '/' + rel, f.target[rel].mode)
                        f.written += 1
        finally:
            os.umask(old)
        if off != len(view):
            raise ToolErr('invalid_arguments', 'fill: the parts cover %d of the payload\'s %d bytes' % (off, len(view)))

    def write_new(self, rel, mode, data):
        fd = os.open(WORKSPACE + '/' + rel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        try:
            write_all(fd, data)
            if mode & 0o7000:
                # setuid/setgid/sticky: a creation may drop them silently; set, and seen set.
                os.fchmod(fd, mode)
                if os.fstat(fd).st_mode & 0o7777 != mode:
                    raise ToolErr('restore_failed', 'fill: %s cannot have mode %04o here' % (rel, mode))
        finally:
            os.close(fd)
        self.fill.written += 1

    def finish(self):
        f, r, sc = self.fill, self.restorer, self.scanner
        marks = [f.started, time.monotonic()]
        lacking = [h for h, n in f.size.items() if f.got.get(h, 0) != n]
        if lacking:
            raise ToolErr('restore_failed', 'fill: %d blob(s) were not sent whole (%s ...); the transfer was cut' % (len(lacking), lacking[0]))
        # Directories to their modes, deepest first (a 0555 directory was filled before).
        for e in sorted(f.made, key=lambda e: e.path.count('/'), reverse=True):
            if e.mode != 0o700:
                os.chmod(WORKSPACE + '/' + e.path, e.mode)
        marks.append(time.monotonic())
        if f.verify == 'full' or not r.still_quiet():
            # Something besides the helper ran meanwhile (or the host asks): every file read back.
            tree = dict(sc.scan(rehash_all=True, file_cap=sc.file_cap))
            reread = None
        else:
            tree = f.target
            reread = 0
        got = sc.hasher.of(tree)
        self.fill = None
        r.stage_quiet = None
        r.shells.spawned = set()
        if got != f.tree_hash:
            sc.base = sc.base_id = None
            diff = sorted(set(k for k in set(tree) | set(f.target) if tree.get(k) != f.target.get(k)))
            clear_dir(WORKSPACE)
            raise ToolErr('verify_failed', 'tree hash after restore is %s, expected %s; differing: %s' % (got, f.tree_hash, ', '.join(diff[:5])))
        for h, paths in f.paths.items():
            sc.by_hash[h] = paths[0]
        sc.set_base(f.target)
        marks.append(time.monotonic())
        return {'tree_hash': got, 'written': f.written, 'removed': 0, 'base': sc.base_id, 'reread': reread,
                'phases_ms': [round((b - a) * 1000, 2) for a, b in zip(marks, marks[1:])]}

    def abandon(self):
        """A refused or failed fill leaves /workspace as it found it: empty."""
        if self.fill is not None:
            self.fill = None
            self.restorer.stage_quiet = None
            self.scanner.base = self.scanner.base_id = None
            clear_dir(WORKSPACE)
