# stepbox helper, part: putting /workspace back to a tree: staged blobs, the plan, its application
# and its verification; the checks of a manifest's entries.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import hashlib
import os
import re
import selectors
import stat as st
import time


# ---------------------------------------------------------------- restoring

class StagedBlob:
    """A blob being staged for a restore, hashed as its bytes are written; or, when the host
    hashed them itself from its own reads (`sha` None: a folder import's), named by it."""

    __slots__ = ('sha', 'size')

    def __init__(self, named=False):
        self.sha = None if named else hashlib.sha256()
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
        in payload order, each blob hashed as its bytes are written. `named`: the host hashed
        these bytes itself as it read them (a folder import, never the store's): the channel
        is the host's alone, so they are what their names say, and hashing them again here
        cost an import of 100 MB a core's ~200 ms. (What a process here could do to a staged
        file afterwards is the restore's verification's, as for any staged blob.)"""
        self.begin_staging()
        self.ensure_stage()
        named = req.get('named') is True
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
                    state = self.stage_hashes[h] = StagedBlob(named)
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
                    if state.sha is not None:
                        state.sha.update(chunk)
                    elif not named:
                        # Begun as the host's own bytes, continued with others (the store's):
                        # no hash stands for the whole; the restore refuses it as cut.
                        state = None
                        self.stage_hashes.pop(h, None)
                    if state is not None:
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
            if state.sha is not None and state.sha.hexdigest() != h:
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
