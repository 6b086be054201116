import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import { diffEntries, treeHashOf } from '../../electron/engine/sandbox/manifest.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import { SandboxFailure } from '../../electron/engine/sandbox/sandbox.js';
import { useTestProvider, describeDocker } from '../support/docker.js';

/** A listing of /workspace that sees everything a snapshot must keep (types, modes, links, contents). */
const LISTING =
  'cd /workspace && find . -mindepth 1 -printf "%y %m %p %s %l\\n" | sort && find . -type f -print0 | sort -z | xargs -0r sha256sum';

/** Runs a program as root in the container, outside the helper (the test's own hand). */
function asRoot(sb: DockerSandbox, cmd: string[]): string {
  return execFileSync('docker', ['exec', '-u', '0:0', '-w', '/', sb.id, ...cmd], { encoding: 'utf8' }).trim();
}

/**
 * Runs a program as root with CAP_SYS_PTRACE (which nothing in the sandbox has: not the
 * agent, not the helper) in the sandbox's pid namespace: a container of the same image that
 * shares it and is gone when the program ends.
 */
function withPtrace(sb: DockerSandbox, [program, ...args]: string[]): string {
  return execFileSync(
    'docker',
    ['run', '--rm', '--pid', `container:${sb.id}`, '--cap-add', 'SYS_PTRACE', '--network', 'none'].concat(
      ['-u', '0:0', '--entrypoint', program!, SANDBOX_IMAGE],
      args,
    ),
    { encoding: 'utf8' },
  ).trim();
}

/**
 * Gives process argv[1] (waiting in a syscall) one more thread, parked in pause(), by
 * ptrace: it injects a clone(CLONE_THREAD) at the syscall instruction, points the new
 * thread at pause() and puts the process back into the syscall it was in. Prints the tid.
 */
const ADD_THREAD = String.raw`import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in (
        'r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss '
        'fs_base gs_base ds es fs gs').split()]
def pt(req, pid, addr=0, data=0):
    r = libc.ptrace(req, pid, addr, data)
    if r == -1 and ctypes.get_errno():
        raise OSError(ctypes.get_errno(), 'ptrace %d' % req)
    return r
def regs(pid):
    r = Regs(); pt(12, pid, 0, ctypes.addressof(r)); return r
def wait(pid):
    _, status = os.waitpid(pid, 0x40000000)  # __WALL
    return status
pid = int(sys.argv[1])
pt(16, pid)  # ATTACH
wait(pid)
pt(0x4200, pid, 0, 0x8)  # SETOPTIONS: TRACECLONE
saved = regs(pid)
sc = saved.rip - 2
ctypes.set_errno(0)
word = pt(1, pid, sc) & 0xffff  # PEEKTEXT
assert word == 0x050f, hex(word)  # stopped in a syscall (bash waiting on its read)
stack = (saved.rsp - 0x10000) & ~0xf
r = Regs.from_buffer_copy(saved)
r.rax, r.orig_rax, r.rip = 56, 2**64 - 1, sc  # clone(...)
r.rdi, r.rsi, r.rdx, r.r10, r.r8 = 0x50f00, stack, 0, 0, 0
pt(13, pid, 0, ctypes.addressof(r))
pt(7, pid)  # CONT to the clone event
wait(pid)
msg = ctypes.c_ulong()
pt(0x4201, pid, 0, ctypes.addressof(msg))  # GETEVENTMSG: the new thread's id
tid = msg.value
wait(tid)
c = regs(tid)
c.rax, c.orig_rax, c.rip, c.rsp = 34, 2**64 - 1, sc, stack  # pause(): it waits, doing nothing
pt(13, tid, 0, ctypes.addressof(c))
pt(17, tid)  # DETACH the thread
pt(24, pid)  # SYSCALL: to the clone's exit
wait(pid)
back = Regs.from_buffer_copy(saved)
back.rip, back.rax = sc, saved.orig_rax  # the read again, as it was
pt(13, pid, 0, ctypes.addressof(back))
pt(17, pid)
print(tid)
`;

describeDocker('docker sandbox snapshots', () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;
  let dir: string;
  const sh = async (command: string) => {
    const r = await sb.exec({ command, timeoutMs: 20_000 });
    expect(r.error).toBeUndefined();
    expect(r.exit_code).toBe(0);
    return r.stdout!;
  };

  beforeAll(async () => {
    sb = await provider().create(defaultSandboxConfig());
    dir = await mkdtemp(join(tmpdir(), 'stepbox-snap-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  // Every way a write reaches a file without an inotify event at the time.
  // A small python program maps mapped.bin shared and writes b'<tag>' at <offset> when
  // /tmp/go-<tag> appears, then touches /tmp/done-<tag>; what it holds and how long it lives
  // vary. Each is recorded by the next snapshot, pruned or not.
  const mapper = (tag: string, body: string) =>
    [
      `cat > /tmp/${tag}.py <<'PY'`,
      'import mmap, os, sys, time',
      'def wait(name):',
      "    while not os.path.exists('/tmp/' + name):",
      '        time.sleep(0.005)',
      'def mark(name):',
      "    open('/tmp/' + name, 'w').close()",
      body,
      'PY',
      `setsid nohup python3 /tmp/${tag}.py >/dev/null 2>&1 &`,
      `until [ -e /tmp/ready-${tag} ]; do sleep 0.005; done`,
    ].join('\n');
  const content = async (path: string) => (await sh(`od -An -c -N 8 ${path} | tr -d ' \n'`)).trim();

  // inotify reports no write made through a shared mapping: a process of the agent's that
  // outlives a scan can change a file the next scan would not look at, while the file's
  // own mtime does move. Every later snapshot must still record what is really there.
  it('records a change written through a mapping by a process that outlived the last scan', async () => {
    const store = new DiskSnapshotStore(join(dir, 'mmap'));
    await sb.reset();
    await sh('head -c 4096 /dev/zero > mapped.bin && rm -f /tmp/go-* /tmp/done-* /tmp/ready-*');
    await sb.snapshot(store);
    // Opened, mapped and closed now (its close is seen by this step's scan); written later.
    await sh(
      mapper(
        'outlives',
        [
          "fd = os.open('/workspace/mapped.bin', os.O_RDWR)",
          'm = mmap.mmap(fd, 4096)',
          'os.close(fd)',
          "mark('ready-outlives')",
          "wait('go-outlives')",
          "m[0:5] = b'FORGE'",
          'm.flush()',
          "mark('done-outlives')",
          'time.sleep(60)',
        ].join('\n'),
      ),
    );
    const opened = await sb.snapshot(store);
    await sh('touch /tmp/go-outlives; until [ -e /tmp/done-outlives ]; do sleep 0.005; done');
    const after = await sb.snapshot(store);
    expect(after.treeHash).not.toBe(opened.treeHash);
    expect(after.changed.map((c) => c.path)).toContain('mapped.bin');
    await sb.killStrays();
  });

  it('records writes through a mapping whoever holds it and however it ends', async () => {
    const store = new DiskSnapshotStore(join(dir, 'mmap-class'));
    await sb.reset();
    await sh('head -c 8192 /dev/zero > mapped.bin && rm -f /tmp/go-* /tmp/done-* /tmp/ready-*');
    await sb.snapshot(store);
    // 1. Writes after the scan, then exits: its last reference goes, so a close event comes.
    await sh(
      mapper(
        'exits',
        [
          "fd = os.open('/workspace/mapped.bin', os.O_RDWR)",
          'm = mmap.mmap(fd, 8192)',
          'os.close(fd)',
          "mark('ready-exits')",
          "wait('go-exits')",
          "m[0:5] = b'EXITS'",
          'm.flush()',
          "mark('done-exits')",
        ].join('\n'),
      ),
    );
    await sb.snapshot(store);
    await sh(
      'touch /tmp/go-exits; until [ -e /tmp/done-exits ]; do sleep 0.005; done; while pgrep -f exits.py >/dev/null; do sleep 0.005; done',
    );
    let snap = await sb.snapshot(store);
    expect(snap.changed.map((c) => c.path)).toContain('mapped.bin');
    expect(await content('mapped.bin')).toBe('EXITS\\0\\0\\0');
    // 2. A child maps and writes, then exits; the parent keeps the file open (no close event yet).
    await sh(
      mapper(
        'child',
        [
          "fd = os.open('/workspace/mapped.bin', os.O_RDWR)",
          'if os.fork() == 0:',
          '    m = mmap.mmap(fd, 8192)',
          "    mark('ready-child')",
          "    wait('go-child')",
          "    m[0:5] = b'CHILD'",
          '    m.flush()',
          "    mark('done-child')",
          '    os._exit(0)',
          'os.wait()',
          'time.sleep(60)',
        ].join('\n'),
      ),
    );
    await sb.snapshot(store);
    await sh('touch /tmp/go-child; until [ -e /tmp/done-child ]; do sleep 0.005; done');
    snap = await sb.snapshot(store);
    expect(snap.changed.map((c) => c.path)).toContain('mapped.bin');
    await sb.killStrays();
    // 3. Still mapped and already written: a second write to the same dirty page moves no mtime.
    await sh(
      mapper(
        'again',
        [
          "fd = os.open('/workspace/mapped.bin', os.O_RDWR)",
          'm = mmap.mmap(fd, 8192)',
          'os.close(fd)',
          "m[0:5] = b'FIRST'",
          "mark('ready-again')",
          "wait('go-again')",
          "m[0:5] = b'AGAIN'",
          "mark('done-again')",
          'time.sleep(60)',
        ].join('\n'),
      ),
    );
    const first = await sb.snapshot(store);
    expect(await content('mapped.bin')).toBe('FIRST\\0\\0\\0');
    await sh('touch /tmp/go-again; until [ -e /tmp/done-again ]; do sleep 0.005; done');
    snap = await sb.snapshot(store);
    expect(snap.treeHash).not.toBe(first.treeHash);
    expect(snap.changed.map((c) => c.path)).toContain('mapped.bin');
    await sb.killStrays();
  });

  it('records a write through a mapping by a thread that outlived the first thread of its process', async () => {
    const store = new DiskSnapshotStore(join(dir, 'mmap-thread'));
    await sb.reset();
    await sh('head -c 8192 /dev/zero > mapped.bin && rm -f /tmp/go-* /tmp/done-* /tmp/ready-*');
    await sb.snapshot(store);
    // The first thread exits alone (the process shows as a zombie); the other one writes later.
    await sh(
      mapper(
        'leader',
        [
          'import ctypes, threading',
          "fd = os.open('/workspace/mapped.bin', os.O_RDWR)",
          'm = mmap.mmap(fd, 8192)',
          'os.close(fd)',
          'def later():',
          "    wait('go-leader')",
          "    m[0:6] = b'LEADER'",
          '    m.flush()',
          "    mark('done-leader')",
          '    time.sleep(60)',
          'threading.Thread(target=later).start()',
          "open('/tmp/pid-leader', 'w').write(str(os.getpid()))",
          "mark('ready-leader')",
          'ctypes.CDLL(None).syscall(60, 0)',
        ].join('\n'),
      ),
    );
    await sh("until grep -q '^State:.*Z' /proc/$(cat /tmp/pid-leader)/status; do sleep 0.005; done");
    const before = await sb.snapshot(store);
    await sh('touch /tmp/go-leader; until [ -e /tmp/done-leader ]; do sleep 0.005; done');
    const after = await sb.snapshot(store);
    expect(after.treeHash).not.toBe(before.treeHash);
    expect(after.changed.map((c) => c.path)).toContain('mapped.bin');
    expect(sb.lastScanWalk).toBe('full');
    await sb.killStrays();
  });

  it('stats only what changed when nothing of the agent is left running, and walks everything while something is', async () => {
    const store = new DiskSnapshotStore(join(dir, 'pruned'));
    await sb.reset();
    await sh('mkdir -p a/b && for i in $(seq 1 50); do echo $i > a/b/f$i; done');
    const before = await sb.snapshot(store);
    await sh('echo changed > a/b/f7 && rm a/b/f8 && mkdir -p c && echo new > c/n && echo 1 > a/b/f1');
    let snap = await sb.snapshot(store);
    expect(sb.lastScanWalk).toBe('pruned');
    // Read off the helper's delta: what each path became, and a file rewritten as it was (f1) is no change.
    expect(snap.changed).toEqual([
      { path: 'a/b/f7', change: 'modified' },
      { path: 'a/b/f8', change: 'deleted' },
      { path: 'c', change: 'added' },
      { path: 'c/n', change: 'added' },
    ]);
    expect(snap.changed).toEqual(
      diffEntries(
        (await store.getManifest(before.manifest)).entries,
        (await store.getManifest(snap.manifest)).entries,
      ),
    );
    await sh(
      "rm -f /tmp/up; setsid nohup sh -c 'touch /tmp/up; exec sleep 60' >/dev/null 2>&1 & until [ -e /tmp/up ]; do sleep 0.005; done",
    );
    await sh('echo again > a/b/f9');
    snap = await sb.snapshot(store);
    expect(sb.lastScanWalk).toBe('full');
    expect(snap.changed.map((c) => c.path)).toEqual(['a/b/f9']);
    await sb.killStrays();
    await sh('echo third > a/b/f10');
    snap = await sb.snapshot(store);
    expect(sb.lastScanWalk).toBe('pruned');
    expect(snap.changed.map((c) => c.path)).toEqual(['a/b/f10']);
    // The whole tree as a fresh full scan sees it.
    const again = await sb.snapshot(store, {});
    expect(again.treeHash).toBe(snap.treeHash);
  });

  // After a small change only the changed files' blobs are looked for in the store: one too
  // large to come inline with the scan (over 4 MiB) must still be fetched and stored.
  it('stores every blob a snapshot names, a changed file too large to come inline included', async () => {
    const path = join(dir, 'every-blob');
    const store = new DiskSnapshotStore(path);
    await sb.reset();
    await sh('echo small > a.txt');
    await sb.snapshot(store);
    await sh('head -c 6000000 /dev/urandom > big.bin && echo changed > a.txt');
    const snap = await sb.snapshot(store);
    expect(snap.changed.map((c) => c.path).sort()).toEqual(['a.txt', 'big.bin']);
    // A store opened afresh on the same folder: what is on disk, not what the first one remembers.
    const reread = new DiskSnapshotStore(path);
    const manifest = await reread.getManifest(snap.manifest);
    for (const e of manifest.entries.filter((x) => x.type === 'file'))
      expect(await reread.hasBlob(e.hash!), e.path).toBe(true);
  });

  it('round-trips sed -i, mv, chmod, rm -r, symlinks, empty dirs and binary files', async () => {
    const store = new DiskSnapshotStore(join(dir, 'round-trip'));
    await sb.reset();
    await sh(
      'mkdir -p src/lib tree/a/b empty && printf "x = 1\\n" > src/main.py && printf "keep\\n" > src/lib/util.py && ' +
        'head -c 4096 /dev/urandom > blob.bin && printf "\\0\\377\\0" > bin2 && ln -s src/main.py link && ' +
        'echo t > tree/a/b/f && chmod 600 src/lib/util.py && mkdir ro && echo r > ro/f && chmod 555 ro',
    );
    const before = await sh(LISTING);
    const snap = await sb.snapshot(store);
    expect(snap.changed.map((c) => c.change)).toEqual(Array(snap.changed.length).fill('added'));
    expect(snap.bytes).toBeGreaterThan(4096);

    await sh(
      'sed -i s/1/2/ src/main.py && mv src/lib/util.py moved.py && chmod 755 blob.bin && rm -r tree && ' +
        'rm link && ln -s moved.py link && rmdir empty && mkdir new-empty && printf "\\1\\2" > bin2 && chmod 755 ro && echo n > ro/g',
    );
    const changed = await sb.snapshot(store);
    expect(changed.treeHash).not.toBe(snap.treeHash);
    expect(changed.bytes).toBeLessThan(100);
    expect(changed.changed).toEqual(
      expect.arrayContaining([
        { path: 'src/main.py', change: 'modified' },
        { path: 'src/lib/util.py', change: 'deleted' },
        { path: 'moved.py', change: 'added' },
        { path: 'tree/a/b/f', change: 'deleted' },
        { path: 'empty', change: 'deleted' },
        { path: 'new-empty', change: 'added' },
        { path: 'blob.bin', change: 'modified' },
        { path: 'link', change: 'modified' },
      ]),
    );

    const info = await sb.restore(store, await store.getManifest(snap.manifest), 'full');
    expect(info.treeHash).toBe(snap.treeHash);
    expect(await sh(LISTING)).toBe(before);
    expect(info.written).toBeGreaterThan(0);
    expect(info.removed).toBeGreaterThan(0);

    // And forward again, to the second snapshot.
    const forward = await sb.restore(store, await store.getManifest(changed.manifest));
    expect(forward.treeHash).toBe(changed.treeHash);
  });

  it('computes the same tree hash as the host (shared/tree-hash.ts)', async () => {
    await sb.reset();
    await sh(
      'mkdir -p "odd dir/ü" && printf a > "odd dir/ü/😀" && printf b > "odd dir/é" && printf c > Z && printf d > "a\\\\b"',
    );
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store);
    const manifest = await store.getManifest(snap.manifest);
    expect(treeHashOf(manifest.entries)).toBe(snap.treeHash);
    expect(manifest.treeHash).toBe(snap.treeHash);
  });

  it('snapshots and restores files and directories the agent made unreadable (chmod 000)', async () => {
    await sb.reset();
    await sh(
      'printf secret > locked && chmod 000 locked && mkdir closed && printf x > closed/f && chmod 000 closed',
    );
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store);
    const m = await store.getManifest(snap.manifest);
    expect(m.entries.map((e) => [e.path, e.mode])).toEqual([
      ['closed', 0],
      ['closed/f', 0o644],
      ['locked', 0],
    ]);
    expect(await sh('stat -c "%a %n" closed locked')).toBe('0 closed\n0 locked\n');
    await sh('chmod 700 closed && rm -r closed && chmod 600 locked && printf other > locked');
    const info = await sb.restore(store, m);
    expect(info.treeHash).toBe(snap.treeHash);
    await sh('printf changed > other');
    expect((await sb.restore(store, m, 'full')).treeHash).toBe(snap.treeHash);
    expect(await sh('stat -c "%a %n" closed locked && chmod 400 locked && cat locked')).toBe(
      '0 closed\n0 locked\nsecret',
    );
  });

  it('restores across type changes: file, directory and symlink swapped', async () => {
    await sb.reset();
    await sh('printf f > a && mkdir -p b/c && printf x > b/c/x && ln -s b c && mkdir d');
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store);
    await sh(
      'rm a && mkdir -p a/deep && printf y > a/deep/y && rm -r b && printf b > b && rm c && mkdir -p c/in && rmdir d && ln -s /etc d',
    );
    const info = await sb.restore(store, await store.getManifest(snap.manifest));
    expect(info.treeHash).toBe(snap.treeHash);
    expect(await sh('cat a b/c/x c/c/x; readlink c; test -d d && ! test -L d && echo dir')).toBe(
      'fxx' + 'b\ndir\n',
    );
  });

  it('restores only what changed, verified: tampered files back, new ones gone, modes and links kept', async () => {
    await sb.reset();
    await sh(
      'cd /workspace && for i in $(seq 0 29); do mkdir -p d$((i % 3)) && echo "file $i" > d$((i % 3))/f$i.txt; done && ' +
        'printf "#!/bin/sh\\n" > tool.sh && chmod 750 tool.sh && ln -s d0/f0.txt link && mkdir -p empty/inner && chmod 500 d2',
    );
    const store = new MemorySnapshotStore();
    const s1 = await sb.snapshot(store);
    // Nothing changed: the next snapshot is the same tree.
    expect((await sb.snapshot(store)).changed).toEqual([]);
    await sh(
      // Same size and mtime as before (touch -r): only the content of d1/f1.txt differs.
      'cd /workspace && cp -p d1/f1.txt /tmp/ref && printf "FILE 1\\n" > d1/f1.txt && touch -r /tmp/ref d1/f1.txt && ' +
        'echo new > d0/new.txt && mkdir d1/sub && echo deep > d1/sub/x && chmod 600 tool.sh && rm link && ln -s d1/f4.txt link && ' +
        // Written through a hard link made in another directory: seen under both names.
        'chmod 700 d2 && echo more >> d2/f2.txt && ln d0/f3.txt d1/hard && echo linked > d1/hard && rm -r empty',
    );
    const s2 = await sb.snapshot(store);
    expect(s2.changed).toEqual(
      expect.arrayContaining([
        { path: 'd0/f3.txt', change: 'modified' },
        { path: 'd1/f1.txt', change: 'modified' },
        { path: 'd1/hard', change: 'added' },
        { path: 'd0/new.txt', change: 'added' },
        { path: 'empty', change: 'deleted' },
        { path: 'tool.sh', change: 'modified' },
        { path: 'link', change: 'modified' },
      ]),
    );
    const back = await sb.restore(store, await store.getManifest(s1.manifest));
    expect(back.treeHash).toBe(s1.treeHash);
    expect(
      await sh(
        'cd /workspace && cat d1/f1.txt d0/f3.txt link d2/f2.txt && stat -c "%a %n" tool.sh d2 empty/inner && ' +
          'ls d0/new.txt d1/sub d1/hard 2>&1 | wc -l',
      ),
    ).toBe('file 1\nfile 3\nfile 0\nfile 2\n750 tool.sh\n500 d2\n755 empty/inner\n3\n');
    // A whole walk and rehash of what is there agrees with the restore's own verify.
    expect((await sb.restore(store, await store.getManifest(s1.manifest), 'full')).treeHash).toBe(
      s1.treeHash,
    );
    expect((await sb.snapshot(store)).treeHash).toBe(s1.treeHash);
    // Forward again, then back with a stored blob damaged: the verify refuses it ...
    expect((await sb.restore(store, await store.getManifest(s2.manifest))).treeHash).toBe(s2.treeHash);
    const damaged = new MemorySnapshotStore();
    const m1 = await store.getManifest(s1.manifest);
    for (const e of m1.entries)
      if (e.type === 'file') await damaged.putBlob(e.hash!, await store.getBlob(e.hash!));
    const genuine = damaged.getBlob.bind(damaged);
    damaged.getBlob = async (h) => {
      const real = Uint8Array.from(await genuine(h));
      real[0] ^= 0xff;
      return real;
    };
    const failure = await sb.restore(damaged, m1).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(SandboxFailure);
    expect((failure as SandboxFailure).code).toBe('verify_failed');
    // ... and a restore after it still reaches the snapshot exactly.
    expect((await sb.restore(store, m1)).treeHash).toBe(s1.treeHash);
    expect(await sh('cat /workspace/d1/f1.txt')).toBe('file 1\n');
  });

  it('snapshots and restores a file name that is not UTF-8', async () => {
    await sb.reset();
    await sh("printf x > $'bad\\xff' && ls | od -c | head -1");
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store);
    await sh('rm -f /workspace/*');
    const info = await sb.restore(store, await store.getManifest(snap.manifest), 'full');
    expect(info.treeHash).toBe(snap.treeHash);
    expect(await sh('ls | od -An -tx1 | tr -d " \\n"')).toBe('626164ff0a');
  });

  it('sees a file rewritten with the same size within one timestamp tick', async () => {
    await sb.reset();
    const store = new MemorySnapshotStore();
    for (let i = 0; i < 5; i++) {
      await sh(`printf aaaa${i} > f`);
      const first = await sb.snapshot(store);
      await sh(`printf bbbb${i} > f`);
      const second = await sb.snapshot(store);
      expect(second.treeHash).not.toBe(first.treeHash);
      expect(second.changed).toEqual([{ path: 'f', change: 'modified' }]);
      const m = await store.getManifest(second.manifest);
      expect(new TextDecoder().decode(await store.getBlob(m.entries[0].hash!))).toBe(`bbbb${i}`);
    }
    // Same size, same mtime (forced), different content: only ctime and the racy rule can tell.
    await sh('printf cccc > g && touch -d @1000000000 g');
    const a = await sb.snapshot(store);
    await sh('printf dddd > g && touch -d @1000000000 g');
    const b = await sb.snapshot(store);
    expect(b.changed).toEqual([{ path: 'g', change: 'modified' }]);
    expect(b.treeHash).not.toBe(a.treeHash);
  });

  it('restores into a fresh sandbox with the recorded hash, sending only what it needs', async () => {
    await sb.reset();
    await sh(
      'mkdir -p d/e && seq 1 1000 > d/e/n && ln -s d/e/n l && printf same > s1 && printf same > s2 && chmod 700 s2',
    );
    const store = new DiskSnapshotStore(join(dir, 'fresh'));
    const snap = await sb.snapshot(store);
    const other = await provider().create(defaultSandboxConfig());
    try {
      const info = await other.restore(store, await store.getManifest(snap.manifest), 'full');
      expect(info.treeHash).toBe(snap.treeHash);
      const again = await other.snapshot(new MemorySnapshotStore());
      expect(again.treeHash).toBe(snap.treeHash);
    } finally {
      await other.destroy();
    }
  });

  it('fails verification when a stored blob was tampered with', async () => {
    await sb.reset();
    await sh('printf original > victim && printf other > bystander');
    const store = new DiskSnapshotStore(join(dir, 'tamper'));
    const snap = await sb.snapshot(store);
    const manifest = await store.getManifest(snap.manifest);
    const victim = manifest.entries.find((e) => e.path === 'victim')!;
    await writeFile(store.blobPath(victim.hash!), 'tampered');
    await sh('rm victim');
    const failure = await sb.restore(store, manifest).then(
      () => null,
      (e: unknown) => e,
    );
    expect(failure).toBeInstanceOf(SandboxFailure);
    expect(failure).toMatchObject({ code: 'verify_failed' });
    expect((failure as Error).message).toContain('victim');
  });

  it('keeps blobs and manifests content-addressed on disk', async () => {
    const store = new DiskSnapshotStore(join(dir, 'layout'));
    await sb.reset();
    await sh('printf hello > h');
    const snap = await sb.snapshot(store);
    expect(await readdir(join(dir, 'layout', 'manifests'))).toEqual([`${snap.manifest}.json`]);
    const hash = '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824';
    expect(await readdir(join(dir, 'layout', 'blobs', hash.slice(0, 2)))).toEqual([hash.slice(2)]);
    // A second snapshot of the same tree sends nothing.
    expect((await sb.snapshot(store)).bytes).toBe(0);
  });

  // A restore stages blobs with the helper's idle shells alive. Sealed (see SEALED in
  // helper.py) and still one thread each, nothing of the agent's can have shaped them to
  // write later, so they are kept: killing them and waiting for new ones was most of a
  // restore's time. One that is not as it started is replaced before anything is staged.
  const idleShells = () =>
    asRoot(sb, ['pgrep', '-u', '1000', '-f', '# zygote']).split('\n').filter(Boolean).sort();
  // As helper.py decides SEALED: an isolated helper on a host that keeps the seal.
  const sealed = () => sb.isolated && asRoot(sb, ['cat', '/proc/sys/fs/suid_dumpable']) !== '1';
  const stagedRestore = async () => {
    await sh('echo one > /workspace/reuse.txt');
    const store = new MemorySnapshotStore();
    const snap = await sb.snapshot(store);
    // The restore must stage a blob (the old content) after a call ran.
    await sh('echo two > /workspace/reuse.txt');
    return async () => {
      const info = await sb.restore(store, await store.getManifest(snap.manifest));
      expect(info.treeHash).toBe(snap.treeHash);
      expect(info.written).toBeGreaterThan(0);
    };
  };

  it('a restore keeps the sealed idle shells it found (same pids before and after)', async () => {
    const restore = await stagedRestore();
    const before = idleShells();
    expect(before.length).toBeGreaterThan(0);
    await restore();
    const after = idleShells();
    if (sealed()) {
      // The pool may have been refilled meanwhile (a shell more); none it had is gone.
      expect(after).toEqual(expect.arrayContaining(before));
    } else {
      // Where the host voids the seal (fs.suid_dumpable = 1) they are still replaced.
      expect(after.filter((pid) => before.includes(pid))).toEqual([]);
    }
  });

  // ADD_THREAD speaks x86-64's registers and syscall numbers: skipped elsewhere on a laptop,
  // but under CI an untested attack must fail the run, not pass it quietly.
  it.skipIf(process.arch !== 'x64' && !process.env.CI)(
    'a restore replaces the idle shells when one is no longer one thread (the attacker side)',
    async () => {
      const restore = await stagedRestore();
      const before = idleShells();
      expect(before.length).toBeGreaterThan(0);
      // The test's own hand (root with CAP_SYS_PTRACE, which nothing in the sandbox has)
      // gives one idle shell a second thread, parked in pause(): what a shell shaped to
      // write later would look like. The restore must trust none of them.
      const tid = withPtrace(sb, ['python3', '-I', '-S', '-c', ADD_THREAD, before[0]!]);
      expect(asRoot(sb, ['ls', `/proc/${before[0]}/task`]).split('\n')).toContain(tid);
      await restore();
      const after = idleShells();
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((pid) => before.includes(pid))).toEqual([]);
    },
  );
});
