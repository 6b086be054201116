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
#
# The helper is split by concept into parts, sent ahead of this file as one source with the
# prelude (programs.json lists them in order): helper_identity (its uid, isolation, seal,
# private directory), helper_wire (the channel, errors), helper_proc (/proc readers),
# helper_spawn (starting the agent's processes), helper_shells (the session's shells),
# helper_calls (one call's run), helper_files (file tools), helper_scan (snapshots' scans),
# helper_restore (restores), helper_fill (a restore into an empty workspace), verifier_run
# and helper_verify (the task's verifier, with verifier.py). This file holds the operations
# table and the loop.
import collections
import fcntl
import os
import select
import selectors
import sys
import time

if 'PRELUDE' not in globals():
    # Run from its file (tests): the prelude and the helper's parts (programs.json), which the
    # host sends ahead of this source, read from beside it into this namespace.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from prelude import load_parts
    load_parts('helper.py', globals())

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
    'stage': op('restorer', 'op_stage', 'parts named?', '', 'Appends chunks to blobs staged for a restore.',
                payload='request'),
    'restore': op('restorer', 'op_restore', 'entries? base? changed? removed? staged inline? tree_hash verify?',
                  'need? tree_hash? written? removed? phases_ms? base? reread?',
                  'Puts /workspace back to a tree, verified by its hash inside.', payload='request'),
    'fill': op('filler', 'op_fill', 'parts entries? tree_hash? verify? last? named?',
               'tree_hash? written? removed? phases_ms? base? reread?',
               'Writes a tree into an empty /workspace, blobs straight into place as they arrive.',
               payload='request'),
    'ping': op('helper', 'op_ping', '', 'pid', "The helper's pid (a round trip)."),
    'writers': op('helper', 'op_writers', 'exclude?', 'changes running more',
                  "Processes of the agent's alive now (not its idle shells, nor `exclude` and its children) "
                  'and how many ops have changed files for it: who else could write while a person\'s command ran.'),
    'describe': op('helper', 'op_describe', '', 'ops hello', 'This table: every op with its fields.'),
    'verify': op('verifier', 'op_verify', 'command timeout_ms cap uid workdir',
                 'killed exit_code signal timeout stdout_len stdout_total stderr_total uid',
                 "Runs the task's verifier after killing every process of the agent's; stdout then stderr in the payload.",
                 payload='reply'),
}

# Ops that change files on the agent's or the engine's behalf: counted, so a person's terminal
# command that ran beside one of them is not credited alone with the files it found changed.
CHANGING_OPS = frozenset(('exec', 'write', 'restore', 'fill', 'reset'))
# The most processes `writers` names (the rest are counted).
WRITERS_NAMED = 12

# The helper's first frame (`event: hello`): its fields, as helper-protocol.ts HelperHello names them.
HELLO = ('pid', 'main', 'oom_kills', 'isolated', 'sealed', 'uid', 'channel', 'channel_problem')


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
        # The host's frames (prelude.py framing); anything larger than these is not the host.
        self.frames = FrameReader(MAX_HEADER, MAX_PAYLOAD)
        self.pid = os.getpid()
        self.active = 0.0  # when the host's last request was handled
        self.call_ended = False  # a call ended since then (see REFILL_AFTER_CALL)
        self.protected, self.main = find_protected(self.pid)
        self.files = Files()
        self.shells = Shells(self)
        self.scanner = Scanner(self.shells)
        self.restorer = Restorer(self.shells, self.scanner)
        self.filler = Filler(self.restorer, self.scanner)
        self.verifier = Verifier(self.shells)
        # Each op's method, bound once (a table entry that names no method fails here, at start).
        self.handlers = {name: getattr(self if o.job == 'helper' else getattr(self, o.job), o.method)
                         for name, o in OPS.items()}
        # Which channel the frames use (see open_socket), and why not the socket when one was offered.
        self.channel = 'exec'
        self.channel_problem = None
        self.changes = 0  # CHANGING_OPS handled (see op_writers)

    def op_reset(self, _req):
        """Back to the clean state: no strays, empty /workspace and /tmp, fresh session, no trees."""
        self.shells.kill_strays()
        self.restorer.reset()
        self.filler.reset()
        clear_dir(WORKSPACE)
        self.shells.reset()
        self.scanner.reset()
        return {}

    def op_ping(self, _req):
        return {'pid': self.pid}

    def op_writers(self, req):
        """Who besides a person's terminal command could write files now: every process of the
        agent's but the idle shells the helper started (sealed, holding nothing), the engine's
        root execs, and `exclude` (the person's shell, its pid in this namespace) with its
        descendants; with the count of file-changing ops so far. The host asks before the
        person's line runs and once it is reported: a writer alive at either end, or an op
        counted between them, may have written what the command is credited with. A process
        made by one alive at the start is that one's doing; one started from nothing alive is
        the helper's (counted). Names are the kernel's `comm` (the process may set it); each
        comes with its parent's pid, so the host can leave out the children of a shell whose pid
        it learnt only later."""
        exclude = req.get('exclude')
        idle = {z.pid for z in self.shells.zygotes}
        stats = {}
        for pid in all_pids():
            if pid == self.pid or pid in self.protected:
                continue
            s = proc_stat(pid)
            if s is not None:
                stats[pid] = s
        mine = set()
        if isinstance(exclude, int) and not isinstance(exclude, bool) and exclude in stats:
            children = collections.defaultdict(list)
            for pid, s in stats.items():
                children[s.ppid].append(pid)
            todo = [exclude]
            while todo:
                pid = todo.pop()
                if pid not in mine:
                    mine.add(pid)
                    todo.extend(children.get(pid, ()))
        running = []
        shells, calls = self.shells.started, self.shells.calls
        for pid in sorted(stats):
            s = stats[pid]
            if pid in mine or engine_root_exec(pid, s) or (pid in idle and len(task_ids(pid)) == 1):
                continue
            if s.ppid == self.pid and pid in shells and pid not in calls:
                # A shell of the helper's own done with its call, still exiting (what its call
                # started is its session's, killed at the call's end, or counted apart).
                continue
            if s.state == b'Z' and all((proc_stat(t) or ZOMBIE).state == b'Z' for t in task_ids(pid)):
                continue  # a zombie whose threads all ended holds nothing
            running.append(pid)
        named = []
        for pid in running[:WRITERS_NAMED]:
            try:
                with open('/proc/%d/comm' % pid, 'rb') as f:
                    name = f.read(64).strip().decode('utf-8', 'replace')
            except OSError:
                name = '?'
            named.append([pid, name, stats[pid].ppid])
        return {'changes': self.changes, 'running': named, 'more': max(0, len(running) - WRITERS_NAMED)}

    def op_describe(self, _req):
        """The operations table as data (see helper-protocol.ts)."""
        ops = {name: {'request': list(o.request), 'reply': list(o.reply), 'doc': o.doc} for name, o in OPS.items()}
        return {'ops': ops, 'hello': list(HELLO)}

    def hello(self):
        # main: the container's main command, None when it is gone (a `kill -9 -1` killed it
        # and init is about to stop the container; the host then reports the sandbox lost).
        values = (self.pid, self.main, self.shells.oom.read(), ISOLATED, SEALED, os.getuid(), self.channel,
                  self.channel_problem)
        hello = dict(zip(HELLO, values))
        hello['event'] = 'hello'
        return hello

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
            if name in CHANGING_OPS:
                self.changes += 1
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
            frames = self.frames.read(channel_in)
        except BlockingIOError:
            return
        except FrameError as e:
            log('%s; exiting' % e)
            self.shutdown()
        except OSError:
            frames = None  # the host's end of the socket went away (ECONNRESET)
        if frames is None:
            self.shutdown()
        for header, payload in frames:
            self.dispatch(header, payload)
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
            if not self.frames.pending and not shells.lost_idle and (
                    not shells.zygotes or (refill_at is not None and now >= refill_at and not calls)):
                self.refill()



# Run by the engine's bootstrap (`python3 -c`, so __main__); imported, it only defines (a
# unit test reads the state-dump parser this way).
if __name__ == '__main__':
    sys.stdout = sys.stderr
    set_fs_ids(AGENT_UID)
    Helper().run()
