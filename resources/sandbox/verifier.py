# stepbox verifier runner: the one program of a verifier's own `docker exec`, started as
# root (the container's capabilities are only SETUID/SETGID/SETPCAP/KILL) so no process of
# the agent's can signal, ptrace or open it. Its request comes as one frame on stdin (the
# prelude's framing; fields: REQUEST below), which only the host can write. It is started isolated (the runtime's `python3 -I -S`, cwd /, a fixed root PATH
# and HOME): nothing the agent wrote (a usercustomize.py or .pth in its HOME, a module in
# /workspace, a python3 earlier on its PATH) is read by it.
#
# It first kills every process of the agent's uid itself (end_agents: stopped, then killed,
# until a look finds none), root, so nothing the agent left behind can stop or kill the killer
# nor outrun it by forking. It then runs the verifier as the agent's uid in a new bash (cwd /workspace, the
# image's environment, stdin /dev/null) with pipes only this runner holds, caps each stream,
# kills what the verifier left behind when it returns or runs out of time, writes its report
# as one frame (fields: REPORT below; the payload is the kept stdout, then the kept stderr)
# and exits with the verifier's code. The run itself (environment, bash, kill, watch) is
# verifier_run.py's, which the helper's `verify` op shares: an isolated helper runs a plain
# verifier itself over its own channel; this runner takes those with files or a reward folder,
# and every verification where the helper is not isolated.
import base64
import binascii
import errno
import os
import signal
import sys

if 'PRELUDE' not in globals():
    # Run from its file (tests): the prelude (programs.json), which the host sends ahead of
    # this source, read from beside it into this namespace.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from prelude import load_parts
    load_parts('verifier.py', globals())

LOG_NAME = 'verifier'
# Loaded before the request comes: a runner started ahead has it ready when it does.
libc_or_none()

# The runner's channel, as the host's side (electron/engine/sandbox/sandbox-channels.ts,
# VERIFIER_REQUEST and VERIFIER_REPORT) names it; a unit test compares the two. `?`: may be
# left out. `files` (relative path -> base64) are put fresh into `files_dir`, and
# `reward_dir` is emptied for the verifier's reward files: what only the verifier may see.
REQUEST = 'command timeout_ms cap uid workdir files? files_dir? reward_dir?'
REPORT = 'killed exit_code signal timeout stdout_len stdout_total stderr_total uid reward_files? staging_error?'
MAX_REQUEST = 256 * 1024 * 1024

# The request's fields (main() sets them).
command, timeout_ms, cap, uid, workdir, extra = '', 0, 0, 0, '/workspace', {}
me = os.getpid()


def become_agent():
    # The one drop of prelude.py: with CAP_SETPCAP an empty bounding set, no groups, the agent's ids.
    if os.getuid() != uid:
        become(uid, uid)


# The verifier's bash is started by posix_spawn of setpriv, as the helper starts its shells:
# no fork of this interpreter, whose child would copy its page tables and fault in every page
# Python touches before the exec (a fork, the uid change and the exec took 10-60 ms on a
# 2-core VM). setpriv
# sets what become_agent() sets (uids, gids, no groups, no bounding set) before the exec.
# Where it is missing, or this runner is not root, children are forked as before.
# setpriv is stepbox's runtime's (electron/engine/sandbox/sandbox-runtime.ts: a
# read-only volume in every sandbox), never the image's: it may have none, or busybox's
# setpriv, which cannot set the real uid. setpriv starts with the runtime's own loader and libraries.
SETPRIV = runtime_program('setpriv')
NULLS = [(os.POSIX_SPAWN_OPEN, fd, '/dev/null', flags, 0)
         for fd, flags in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY))] if hasattr(os, 'posix_spawn') else []
# Whether to spawn (set with the request's uid), and the setpriv prefix that becomes it.
SPAWN, AS_AGENT = False, []


def spawn_setup():
    global SPAWN, AS_AGENT
    SPAWN = (hasattr(os, 'posix_spawn') and os.getuid() == 0 and uid != 0
             and os.access(SETPRIV[-1], os.X_OK))
    if SPAWN:
        AS_AGENT = setpriv_prefix(SETPRIV, uid, uid)


def agents():
    """Processes of the agent's uid but this runner."""
    return agents_of(uid, me)


def kill_all():
    """Every process of the agent's uid gone (end_agents); True once none is left."""
    return end_agents(uid, me)


def agent_env_as_agent(base):
    """agent_env() computed here, with this runner's effective ids the agent's for the while
    (its access checks and its HOME are the agent's, as in a child that became the agent)."""
    with effective_ids(uid, uid):
        return agent_env(base)


def start_verifier(out_w, err_w):
    """Starts the verifier's bash as the agent (new session, cwd /workspace, stdin /dev/null,
    stdout and stderr to the pipes); returns its pid, or None when it could not start (its
    status then is exit 127, as a child that failed before its exec)."""
    argv = ['bash', '--norc', '--noprofile', '-c', command]
    if SPAWN:
        try:
            os.chdir(workdir)
            env = agent_env_as_agent(container_env())
            return os.posix_spawn(
                SETPRIV[0], AS_AGENT + [bash_on(env)] + argv[1:], env,
                file_actions=[NULLS[0], (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)],
                setsid=True, setsigdef=(signal.SIGPIPE, signal.SIGXFSZ), setsigmask=[])
        except OSError:
            return None
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            null = os.open('/dev/null', os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.chdir(workdir)
            base = container_env()
            become_agent()
            env = agent_env(base)
            for sig in (signal.SIGPIPE, signal.SIGXFSZ):
                signal.signal(sig, signal.SIG_DFL)
            # bash from a PATH the agent cannot write; no startup file (--norc, --noprofile, and
            # no BASH_ENV) runs before the command.
            os.execve(bash_on(env), argv, env)
        finally:
            os._exit(127)
    return pid


# The verifier's own folders (Harbor's /tests and /logs/verifier): tmpfs mounts root owns, on
# a read-only root, so nothing of the agent's could write them; they are still emptied here,
# never following a link, after every process of the agent's is gone, and again after.
REWARD_FILES = ('reward.json', 'reward.txt')
REWARD_READ_CAP = 64 * 1024


def own_dir(path):
    """The verifier's folder `path`, checked: a real directory (not a link), emptied."""
    import stat as st_mod
    if not st_mod.S_ISDIR(os.lstat(path).st_mode):
        raise OSError('%s is not a folder of the verifier (it is a link or a file)' % path)
    failed = clear_dir(path)
    if failed:
        raise OSError('cannot empty %s: %s' % (path, failed[0]))


def stage():
    """Puts the verifier's files in place and hands it its reward folder; an error's text, or None."""
    try:
        files_dir, files = extra.get('files_dir'), extra.get('files') or {}
        if files_dir:
            own_dir(files_dir)
            root = os.path.realpath(files_dir)
            for rel, b64 in sorted(files.items()):
                target = os.path.realpath(os.path.join(root, rel))
                if not target.startswith(root + '/'):
                    raise OSError('verifier file %r leaves %s' % (rel, files_dir))
                parent = os.path.dirname(target)
                os.makedirs(parent, 0o755, exist_ok=True)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755)
                try:
                    os.write(fd, base64.b64decode(b64))
                finally:
                    os.close(fd)
        reward_dir = extra.get('reward_dir')
        if reward_dir:
            # What an earlier verification left there (its uid's) goes as that uid first.
            empty_as_agent(reward_dir)
            own_dir(reward_dir)
            # Open to the verifier (no CAP_CHOWN to give it away): nothing else of the agent's
            # uid runs now, and it is closed and emptied again right after (unstage).
            os.chmod(reward_dir, 0o777)
    except (OSError, ValueError, TypeError, binascii.Error) as e:
        return str(e)
    return None


def read_rewards():
    """The reward files the verifier left (regular files only, never through a link), capped."""
    out = []
    reward_dir = extra.get('reward_dir')
    if not reward_dir:
        return out
    for name in REWARD_FILES:
        try:
            fd = os.open(os.path.join(reward_dir, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as e:
            # A link is there but never followed: said as such, not as a reward never written.
            if e.errno == errno.ELOOP:
                out.append({'name': name, 'text': '(a symbolic link, not followed)'})
            continue
        try:
            import stat as st_mod
            if not st_mod.S_ISREG(os.fstat(fd).st_mode):
                out.append({'name': name, 'text': '(not a regular file)'})
                continue
            data = os.read(fd, REWARD_READ_CAP)
        finally:
            os.close(fd)
        out.append({'name': name, 'text': data.decode('utf-8', 'replace')})
    return out


def unstage():
    """Empties the verifier's folders again (a rolled-back sandbox never shows them to the agent)."""
    files_dir, reward_dir = extra.get('files_dir'), extra.get('reward_dir')
    if files_dir:
        try:
            own_dir(files_dir)
        except OSError:
            pass
    if reward_dir:
        empty_as_agent(reward_dir)
        try:
            os.chmod(reward_dir, 0o755)
        except OSError:
            pass


def empty_as_agent(path):
    """Empties the reward folder with the agent's uid (what the verifier made there is that
    uid's, its folders too, which root without CAP_DAC_OVERRIDE cannot empty); best effort."""
    try:
        with effective_ids(uid, uid):
            clear_dir(path)
    except OSError:
        pass


def report(fields, out=b'', err=b''):
    """The runner's one frame to the host: REPORT's fields, the kept output as its payload."""
    fields.update(uid=uid, stdout_len=len(out))
    write_all(1, frame(fields, out + err))


def read_request():
    """The host's request (one frame on stdin): sets the module's fields; False when the
    host let this runner go unused (stdin closed: the sandbox was destroyed or kept)."""
    global command, timeout_ms, cap, uid, workdir, extra
    frames = FrameReader(MAX_REQUEST, 0)
    while True:
        data = read_some(0)
        if not data:
            return False
        got = frames.feed(data)
        if got:
            break
    req = got[0][0]
    command, timeout_ms, cap, uid = req['command'], int(req['timeout_ms']), int(req['cap']), int(req['uid'])
    workdir = req.get('workdir') or '/workspace'
    extra = {k: req[k] for k in ('files', 'files_dir', 'reward_dir') if req.get(k) is not None}
    return True


def main():
    if not read_request():
        sys.exit(0)
    spawn_setup()
    killed = len(agents())
    if not kill_all():
        # Never run the verifier beside what could kill or forge it.
        sys.stderr.write('stepbox: the processes of the agent could not be killed\n')
        sys.exit(125)
    staging_error = stage() if extra else None
    if staging_error is not None:
        unstage()
        report({'killed': killed, 'exit_code': 125, 'signal': None, 'timeout': False, 'stdout_total': 0,
                'stderr_total': 0, 'staging_error': staging_error})
        os._exit(125)
    code, sig, timed_out, out, err, total_out, total_err = run_verifier()
    reward_files = read_rewards() if extra else []
    if extra:
        unstage()
    report({'killed': killed, 'exit_code': code if code is not None else 128 + sig, 'signal': sig,
            'timeout': timed_out, 'stdout_total': total_out, 'stderr_total': total_err,
            'reward_files': reward_files}, out, err)
    # Straight out: nothing is left to clean up, and the engine's exit code is what counts.
    os._exit(code if code is not None else 128 + sig)


def run_verifier():
    """Runs the verifier: (exit code, signal, timed out, kept stdout, kept stderr, totals)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = start_verifier(out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    return watch_verifier(pid, out_r, err_r, timeout_ms, cap, kill_all, agents)


# Run by the host (`python3 -c`, so __main__); imported, it only defines (the channels' test
# reads REQUEST and REPORT this way).
if __name__ == '__main__':
    main()
