# stepbox helper, part: scanning /workspace for a snapshot: the tree and its hash, the stat cache,
# the walk, inotify's account of what changed.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import codecs
import collections
import errno
import hashlib
import os
import stat as st
import struct
import time


# ---------------------------------------------------------------- named records

# One entry of a tree, as the host and the helper exchange it (a JSON list on the wire):
# content is a file's sha256, a symlink's target, None for a directory. Types other than
# file/dir/symlink ('unexpected') only ever appear in a restore's verification.
Entry = collections.namedtuple('Entry', 'path type mode size content')
# What a scan knew of a file: its stat, and the hash it had then.
Cached = collections.namedtuple('Cached', 'ino size mtime_ns ctime_ns mode hash')


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
