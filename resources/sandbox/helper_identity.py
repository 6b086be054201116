# stepbox helper, part: who the helper is and where it works: the workspace, its uid and
# filesystem identity (isolated, sealed), its private directory, the limits of what it takes.
# One of the helper's parts (programs.json): sent to the sandbox as one source with the prelude,
# the other parts and helper.py, and read in one namespace, so it uses their names as its own.
import binascii
import errno
import json
import os
import stat as st


# The working directory (the task's `sandbox.workdir`, a tmpfs the host mounted there): from
# the boot configuration the host hands over after the source (see BOOT), /workspace unless
# it names another absolute path.
_workdir = json.loads(globals().get('STEPBOX_BOOT') or b'{}').get('workdir')
WORKSPACE = _workdir if isinstance(_workdir, str) and _workdir.startswith('/') and '\0' not in _workdir else '/workspace'
WORKSPACE_B = os.fsencode(WORKSPACE) + b'/'
# The agent's uid and gid: every command runs as them, every file operation is done with
# them as the filesystem identity (setfsuid), so what the kernel refuses the agent it
# refuses the helper too.
# Isolated mode (the helper's exec runs as root, the container's capabilities cut to
# SETUID/SETGID/KILL): the helper is another user than every command, so no command can
# open /proc/<helper>/fd/*, ptrace or signal it. Without it (an exec as the agent, an old
# container) the helper works as before but commands can reach its channel.
# (AGENT_UID, SEAL_GID and the privilege drop itself: prelude.py, shared with bridge.py and verifier.py.)
_libc = libc_or_none() if os.getuid() == 0 else None
ISOLATED = _libc is not None


def _has_fs_ids():
    """Whether the kernel has setfsuid (gVisor has not: ENOSYS). setfsuid(-1) changes nothing
    and answers the current fsuid, or -1 where the call does not exist."""
    if _libc is None:
        return False
    import ctypes  # present: libc_or_none() found it
    ctypes.set_errno(0)
    return not (_libc.setfsuid(-1) == -1 and ctypes.get_errno() == errno.ENOSYS)


# Without setfsuid (gVisor) the agent's identity is taken as the effective uid/gid instead,
# the real and saved ids staying root's: the kernel checks files against the effective ids
# there (the fs ids follow them), and a process of the agent's can still not signal, ptrace
# or open the fds of a process whose real and saved uid are root's. The effective
# capabilities go with an effective uid other than 0 and come back with it, so whatever
# needs them (starting the agent's shells, killing root's processes) runs as_helper.
FS_IDS = _has_fs_ids()


def set_fs_ids(uid):
    """The filesystem uid/gid of this process (the helper's file operations)."""
    if _libc is None:
        return
    if FS_IDS:
        _libc.setfsgid(uid)
        _libc.setfsuid(uid)
    elif uid == 0:
        os.seteuid(0)
        os.setegid(0)
    else:
        os.setegid(uid)
        os.seteuid(uid)


class as_helper:
    """Files of the helper's own (its private directory) are root's, out of the agent's reach."""

    def __enter__(self):
        set_fs_ids(0)

    def __exit__(self, *_):
        set_fs_ids(AGENT_UID)


# With CAP_SETPCAP (the container grants it to root's execs only) the agent's shells start
# with an empty bounding set: nothing they run can ever hold a capability, even the
# helper's own SETUID/SETGID/KILL.
DROP_BOUNDING = ISOLATED and can_drop_bounding()
# Sealed shells: an idle shell (see ZYGOTES) is started with an effective gid other than its
# real one (SEAL_GID, which owns nothing), so the kernel makes it non-dumpable at exec; bash
# then drops back to the agent's gid, which keeps it non-dumpable until its next exec. No
# process of the agent's can then ptrace it, read or write its memory (/proc/PID/mem,
# process_vm_*) or open its fds through /proc: the shell that runs the next call cannot be
# shaped beforehand. What a call's command execs is dumpable as usual (an agent debugging its
# own programs still can). Only where the host lets credential changes keep a process
# dumpable (fs.suid_dumpable = 1) is the seal void; the selftest's `ptrace` check says so.
SEALED = ISOLATED and suid_dumpable() != b'1'
# Variables the C library (and bash, in its privileged-start mode) drops from the
# environment of a sealed shell (an exec with real and effective gid apart is "secure"):
# the helper exports them to each call again rather than assume the shell kept them.
SECURE_EXEC_DROPS = ('GCONV_PATH', 'GETCONF_DIR', 'HOSTALIASES', 'LOCALDOMAIN', 'LOCPATH', 'NIS_PATH',
                     'NLSPATH', 'RESOLV_HOST_CONF', 'RES_OPTIONS', 'TMPDIR', 'TZDIR', 'SHELLOPTS',
                     'BASHOPTS', 'CDPATH', 'GLOBIGNORE', 'GLIBC_TUNABLES')


def secure_exec_drops(name):
    return name in SECURE_EXEC_DROPS or name.startswith(('LD_', 'MALLOC_'))




# Isolated, the private directory is root's (0711, files 0644: shells read their scripts,
# nothing of the agent's can replace them); a fresh name per helper, so nothing a command
# left at a known path is ever opened. Not isolated, the old fixed name (same user anyway).
PRIV = '/dev/shm/.stepbox-helper' + ('-' + binascii.hexlify(os.urandom(6)).decode() if ISOLATED else '')
CLOCK = PRIV + '/clock'
# Files staged by a restore (blobs sent in chunks) before they are moved into place: on the
# workspace's own filesystem so a move is a rename; hidden from scans. Each blob is hashed
# as it is written and refused (verify_failed) before anything in /workspace changes when
# it does not hash to its name; the restore's verification then takes those hashes rather
# than reading the files back, but only when no process other than the helper's own idle
# shells existed or came into being from the first staged byte to the verification (see
# Helper.begin_staging): then nothing else can have written them. Otherwise it rereads.
STAGE_NAME = '.stepbox-stage'
STAGE = WORKSPACE + '/' + STAGE_NAME
# Frames the helper accepts from the host; anything larger is not the host.
MAX_HEADER = 64 * 1024 * 1024
MAX_PAYLOAD = 256 * 1024 * 1024
# Every process a call starts inherits STEPBOX_CALL=<n>, so a timeout finds even processes
# that left the call's session. For session calls n is kept in the session's environment
# (it is rolled back with it), so `env` prints the same thing when an episode is replayed.
MARKER = 'STEPBOX_CALL'
HIDDEN_ENV = ('PWD', 'OLDPWD', 'SHLVL', '_', 'BASH_ENV', '__stepbox_c')
ENOSPC_TEXT = b'No space left on device'
# read_file returns whole files; larger ones are for commands (head, grep).
MAX_READ = 64 * 1024 * 1024


# Its lines on stderr read `[helper] …` (prelude.py log).
LOG_NAME = 'helper'


def ensure_priv():
    if ISOLATED:
        # Root's, in the sticky /dev/shm: no command can remove or change it.
        if not os.path.isdir(PRIV):
            with as_helper():
                os.mkdir(PRIV, 0o711)
        return
    # Commands run as the same user and may remove or close this directory.
    try:
        mode = os.lstat(PRIV).st_mode
    except FileNotFoundError:
        os.makedirs(PRIV, mode=0o700, exist_ok=True)
        return
    if not st.S_ISDIR(mode):
        os.unlink(PRIV)
        os.makedirs(PRIV, mode=0o700, exist_ok=True)
    elif mode & 0o700 != 0o700:
        os.chmod(PRIV, 0o700)
