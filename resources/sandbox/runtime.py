# Builds stepbox's sandbox runtime: what the helper, the verifier runner and the agent bridge
# need inside a sandbox, so that a task's image needs none of it (no python3, no bash, no
# setpriv, no user 1000). Run once per runtime version by the stepbox sandbox image's own
# python3, as root, in a throwaway container with the runtime volume mounted at its parent
# (electron/engine/docker/runtime-volume.ts); every sandbox then mounts that volume read-only.
#
# What it holds (DEST = /opt/stepbox/runtime):
#   lib/ld.so            the image's dynamic loader: dynamic programs here are started with it
#                        (`lib/ld.so --library-path lib PROGRAM`), never with the task image's
#   lib/*.so*            every shared library those programs (and python's extension modules) load
#   usr/bin/python3      the interpreter; its stdlib in usr/lib/python3.X, found from its path
#   usr/bin/setpriv, usr/bin/ipcrm   util-linux's (busybox's setpriv lacks --reuid)
#   bin/bash, bin/busybox            static (Debian's bash-static, busybox-static): the agent's
#                        shell when the image has no bash, and the container's main command
#   bin/python3          a wrapper starting usr/bin/python3 with the loader (for checks and people)
#   applets/             busybox's applets as links (the tools of stepbox's own setup scripts)
#   VERSION              written last; the whole folder is moved into place in one rename, so a
#                        reader sees either a complete runtime or none
#
# Usage: python3 -I -S runtime.py DEST VERSION
import fnmatch
import os
import shutil
import struct
import subprocess
import sys
import time

dest, version = sys.argv[1], sys.argv[2]
if os.path.isfile(os.path.join(dest, 'VERSION')):
    print('[runtime] %s is there already' % dest, file=sys.stderr)
    sys.exit(0)
parent = os.path.dirname(dest)
os.makedirs(parent, exist_ok=True)
# A fresh name per fill: fills of two processes may run at once (each container's pid is 1).
work = '%s/.building-%s' % (parent, os.urandom(6).hex())
# What a fill that was killed left (older than any fill takes).
for name in os.listdir(parent):
    try:
        if name.startswith('.building-') and time.time() - os.lstat(os.path.join(parent, name)).st_mtime > 600:
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    except OSError:
        pass


def interpreter(path):
    """The PT_INTERP of an ELF file (its dynamic loader), or None for a static one."""
    with open(path, 'rb') as f:
        head = f.read(64)
        if head[:4] != b'\x7fELF' or head[4] != 2:
            raise SystemExit('stepbox: %s is not a 64-bit ELF program' % path)
        phoff, = struct.unpack_from('<Q', head, 32)
        phentsize, phnum = struct.unpack_from('<HH', head, 54)
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            ph = f.read(phentsize)
            kind, = struct.unpack_from('<I', ph, 0)
            if kind == 3:  # PT_INTERP
                off, = struct.unpack_from('<Q', ph, 8)
                size, = struct.unpack_from('<Q', ph, 32)
                f.seek(off)
                return f.read(size).rstrip(b'\0').decode()
    return None


def program(name):
    for d in ('/usr/bin', '/bin', '/usr/sbin', '/sbin'):
        if os.access(d + '/' + name, os.X_OK):
            return os.path.realpath(d + '/' + name)
    raise SystemExit('stepbox: the stepbox image has no %s; rebuild it: npx stepbox image build' % name)


python = program('python3')
loader = interpreter(python)
if not loader:
    raise SystemExit('stepbox: %s is not dynamically linked' % python)
pyver = 'python%d.%d' % sys.version_info[:2]
stdlib = os.path.dirname(os.__file__)  # /usr/lib/python3.X

dynamic = {'python3': python, 'setpriv': program('setpriv'), 'ipcrm': program('ipcrm')}
static = {'bash': program('bash-static'), 'busybox': program('busybox')}
for name, path in static.items():
    if interpreter(path):
        raise SystemExit('stepbox: %s (%s) is not static' % (name, path))


def needs(path):
    """The shared libraries the loader resolves for `path` (`ld.so --list`)."""
    r = subprocess.run([loader, '--list', path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise SystemExit('stepbox: cannot list the libraries of %s: %s' % (path, r.stderr.decode().strip()))
    libs = set()
    for line in r.stdout.decode().splitlines():
        parts = line.split()
        if '=>' in parts:
            target = parts[parts.index('=>') + 1]
            if target.startswith('/'):
                libs.add(target)
            elif target == 'not':
                raise SystemExit('stepbox: %s needs %s, which the stepbox image lacks' % (path, parts[0]))
    return libs


# Parts of the stdlib no program here imports (the static libpython and GUI toolkit above all).
SKIPPED = ('test', 'idlelib', 'tkinter', 'turtledemo', 'ensurepip', 'lib2to3', 'pydoc_data', 'distutils',
           'config-*', '_tkinter*', 'site-packages', 'dist-packages')
os.makedirs(work + '/lib')
os.makedirs(work + '/usr/bin')
os.makedirs(work + '/bin')
libs = set()
for path in dynamic.values():
    libs |= needs(path)
dynload = os.path.join(stdlib, 'lib-dynload')
for name in os.listdir(dynload):
    if name.endswith('.so') and not fnmatch.fnmatch(name, '_tkinter*'):
        libs |= needs(os.path.join(dynload, name))
for lib in sorted(libs):
    shutil.copy2(lib, os.path.join(work, 'lib', os.path.basename(lib)))
shutil.copy2(loader, work + '/lib/ld.so')
for name, path in dynamic.items():
    shutil.copy2(path, work + '/usr/bin/' + name)
for name, path in static.items():
    shutil.copy2(path, work + '/bin/' + name)
# The stdlib with its compiled files (their recorded mtimes kept by copy2), without what no
# program here imports; symlinks (Debian's sitecustomize points into /etc) are not followed.
shutil.copytree(stdlib, work + '/usr/lib/' + pyver, symlinks=True,
                ignore=shutil.ignore_patterns(*SKIPPED))
with open(work + '/bin/python3', 'w') as f:
    f.write('#!%(d)s/bin/bash\nexec %(d)s/lib/ld.so --inhibit-cache --library-path %(d)s/lib %(d)s/usr/bin/python3 "$@"\n'
            % {'d': dest})
os.chmod(work + '/bin/python3', 0o755)
# busybox's applets as links, for the PATH of stepbox's own setup scripts (after the image's directories).
os.makedirs(work + '/applets')
applets = subprocess.run([static['busybox'], '--list'], stdout=subprocess.PIPE, check=True).stdout.decode().split()
for name in applets:
    if name != 'busybox':
        os.symlink('../bin/busybox', work + '/applets/' + name)
for root, dirs, files in os.walk(work):
    for n in dirs:
        os.chmod(os.path.join(root, n), 0o755)
os.chmod(work, 0o755)
with open(work + '/VERSION', 'w') as f:
    f.write(version + '\n')
try:
    os.rename(work, dest)
except OSError:
    # Another fill finished first: its runtime is as good as this one.
    shutil.rmtree(work, ignore_errors=True)
    if not os.path.isfile(os.path.join(dest, 'VERSION')):
        raise
print('[runtime] %s: python %s, %d libraries' % (dest, sys.version.split()[0], len(libs)), file=sys.stderr)
