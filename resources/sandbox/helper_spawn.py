# stepbox helper, part: starting the agent's processes: the runtime's programs, the agent's bash,
# the drop to the agent (posix_spawn of setpriv, or fork) and the gVisor ulimit guard.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import fcntl
import os
import signal


def high_pipe():
    """A pipe whose ends are numbered 10 or more, so posix_spawn's dup2 onto fds 0-4 never
    clobbers a source it has yet to copy (or meets a source already at its target)."""
    r, w = os.pipe()  # close-on-exec, as every fd Python opens
    if r >= 10 and w >= 10:
        return r, w  # the usual case once the helper runs: no renumbering syscalls
    try:
        return fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 10), fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, 10)
    finally:
        os.close(r)
        os.close(w)


def write_file(path, data, mode=0o600):
    # A fresh file every time: whatever a command left at this name (a FIFO would block
    # the helper) is replaced, not opened.
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    try:
        if ISOLATED:
            os.fchmod(fd, mode)
        write_all(fd, data)
    finally:
        os.close(fd)


# Where root-owned programs are found: never on the agent's PATH, which an image may have
# point at directories the agent can write (a fake `bash` there would answer every call).
SYSTEM_PATH = ('/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin')


def system_program(name):
    """The absolute path of a program in the system directories (the name when none has it)."""
    for d in SYSTEM_PATH:
        p = d + '/' + name
        if os.access(p, os.X_OK):
            return p
    return name


# The agent's shell: the image's bash when it has one (in a system directory), else the
# runtime's static one, so an image without bash still gets the same session.
BASH = system_program('bash')
if not BASH.startswith('/'):
    BASH = RUNTIME + '/bin/bash'
RESET_SIGNALS = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT)


# Isolated, a shell is started by posix_spawn (a vfork: it does not copy the helper's
# memory, ~0.1 ms where os.fork of the helper costs ~1.5 ms on a loaded machine and blocks
# every request meanwhile) of setpriv, which drops to the agent's uid/gid and no
# supplementary groups before it execs bash (the runtime's setpriv: busybox's, in some images, lacks
# the option to set the real uid). Not isolated, fork.
SETPRIV = runtime_program('setpriv')
SPAWN_VIA_SETPRIV = ISOLATED and hasattr(os, 'posix_spawn') and os.access(SETPRIV[-1], os.X_OK)


# bash's ulimit option for each resource limit and its unit (KiB, or 1024-byte blocks for -c
# and -f outside POSIX mode; -q is in bytes). RLIMIT_RTTIME is
# left out (older bash has no -R; it bounds only real-time scheduling, which the agent
# cannot have without CAP_SYS_NICE).
ULIMIT_OPTIONS = (('RLIMIT_CORE', 'c', 1024), ('RLIMIT_DATA', 'd', 1024), ('RLIMIT_NICE', 'e', 1),
                  ('RLIMIT_FSIZE', 'f', 1024), ('RLIMIT_SIGPENDING', 'i', 1), ('RLIMIT_MEMLOCK', 'l', 1024),
                  ('RLIMIT_RSS', 'm', 1024), ('RLIMIT_NOFILE', 'n', 1), ('RLIMIT_MSGQUEUE', 'q', 1),
                  ('RLIMIT_RTPRIO', 'r', 1), ('RLIMIT_STACK', 's', 1024), ('RLIMIT_CPU', 't', 1),
                  ('RLIMIT_NPROC', 'u', 1), ('RLIMIT_AS', 'v', 1024), ('RLIMIT_LOCKS', 'x', 1))


def ulimit_guard():
    """The first line of each call's script where the kernel has no /proc/PID/limits
    (gVisor), in place of limits_intact: a command of the agent's may lower an idle shell's
    limits (prlimit needs only the same uid), and the helper cannot read them (prlimit on
    another user's process needs CAP_SYS_RESOURCE). So the shell, before it says it took
    the command, sets its hard limits to the helper's (a no-op when they are intact; raising
    a lowered one fails without CAP_SYS_RESOURCE) and its soft limits back to the helper's
    (allowed under those). If the hard limits were lowered it says `L` on fd 3 and exits:
    the call runs again in another shell (Call.finish), nothing of it having run. Builtins
    only, no fork."""
    import resource
    hard, soft = [], []
    for name, flag, unit in ULIMIT_OPTIONS:
        res = getattr(resource, name, None)
        if res is None:
            continue
        try:
            cur, top = resource.getrlimit(res)
            # A limit the kernel lets no one set (gVisor: nice, sigpending, msgqueue, rtprio)
            # cannot be lowered either: nothing to check.
            resource.setrlimit(res, (cur, top))
        except (OSError, ValueError):
            continue
        words = ['unlimited' if v == resource.RLIM_INFINITY else '%d' % (v // unit) if v % unit == 0 else None
                 for v in (top, cur)]
        if None in words:
            log('%s (%d/%d) is not a whole number of KiB; bash cannot set it back' % (name, cur, top))
            continue
        hard.append('-%s %s' % (flag, words[0]))
        soft.append('-%s %s' % (flag, words[1]))
    return ('builtin ulimit -H %s 2>/dev/null && builtin ulimit -S %s 2>/dev/null '
            '|| { builtin printf L >&3; builtin exit 0; }\n' % (' '.join(hard), ' '.join(soft)))


def spawn_as_agent(argv, env, fds, seal=True):
    """Starts argv (argv[0] an absolute path) in a new session as the agent (uid/gid
    AGENT_UID, no supplementary groups, an empty bounding set, sealed unless `seal` is False:
    see SEALED) with fds[i] as its fd i (/dev/null for None). Python opens
    every other fd close-on-exec, so nothing of the helper's (its exec's stdin/stdout
    above all) is inherited."""
    seal_gid = SEAL_GID if SEALED and seal else None
    if FS_IDS or not ISOLATED:
        return _spawn_as_agent(argv, env, fds, seal_gid)
    # The agent's identity is the effective one here (see FS_IDS): the child must start as
    # root, with the capabilities it needs to drop to the agent's ids and bounding set.
    with as_helper():
        return _spawn_as_agent(argv, env, fds, seal_gid)


def _spawn_as_agent(argv, env, fds, seal_gid):
    if SPAWN_VIA_SETPRIV:
        actions = []
        for target, fd in enumerate(fds):
            if fd is None:
                actions.append((os.POSIX_SPAWN_OPEN, target, '/dev/null', os.O_RDONLY, 0))
            else:
                actions.append((os.POSIX_SPAWN_DUP2, fd, target))
        as_agent = setpriv_prefix(SETPRIV, AGENT_UID, AGENT_UID, seal_gid, DROP_BOUNDING)
        # argv[0] by its absolute path: the agent's PATH may list directories it can write.
        return os.posix_spawn(
            SETPRIV[0], as_agent + argv, env,
            file_actions=actions, setsid=True, setsigdef=RESET_SIGNALS, setsigmask=[])
    pid = os.fork()
    if pid:
        return pid
    try:
        os.setsid()
        for target, fd in enumerate(fds):
            if fd is None:
                fd = os.open('/dev/null', os.O_RDONLY)
                if fd != target:
                    os.dup2(fd, target)
                    os.close(fd)
            else:
                os.dup2(fd, target)
        if ISOLATED:
            become(AGENT_UID, AGENT_UID, seal_gid, DROP_BOUNDING)
        # Python ignores SIGPIPE; the command must get the default back.
        for sig in RESET_SIGNALS:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        os.execve(argv[0], argv, env)
    except BaseException as e:  # never return into the helper's loop in the child
        try:
            os.write(2, ('[helper] cannot start %s: %s\n' % (argv[0], e)).encode())
        finally:
            os._exit(127)
