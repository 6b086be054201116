import { afterEach, describe, expect, it } from 'vitest';
import { SANDBOX_IMAGE } from '../../shared/constants.js';
import type { ToolError } from '../../shared/errors.js';
import type { Result } from '../../shared/result.js';
import { terminalSafe } from '../../shared/terminal-text.js';
import {
  SandboxFailure,
  type Sandbox,
  type SandboxConfig,
  type SandboxProvider,
} from '../../electron/engine/sandbox/sandbox.js';
import type { SnapshotStore } from '../../electron/engine/sandbox/snapshot-store.js';
import type { HumanCommand } from '../../electron/engine/docker/terminal.js';

/** Options of the conformance suite. */
export interface ConformanceOptions {
  /** The config every sandbox of the suite is created from. */
  readonly config?: SandboxConfig;
}

const OUTPUT_CAP = 64 * 1024;

/** The config the suite uses unless told otherwise: the default image, no network, small caps. */
export const CONFORMANCE_CONFIG: SandboxConfig = {
  image: SANDBOX_IMAGE,
  network: 'none',
  limits: {
    cpus: 1,
    memoryBytes: 512 * 1024 ** 2,
    pids: 128,
    diskBytes: 64 * 1024 ** 2,
    outputBytes: OUTPUT_CAP,
  },
};

const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

function value<T>(r: Result<T, ToolError>): T {
  if (!r.ok) throw new Error(`expected success, got ${r.error.code}: ${r.error.message}`);
  return r.value;
}

function errorCode<T>(r: Result<T, ToolError>): string {
  return r.ok ? 'ok' : r.error.code;
}

/** Bytes 0..255 twice, shuffled deterministically: binary content no text codec survives. */
function binaryBytes(salt: number): Uint8Array {
  return Uint8Array.from({ length: 512 }, (_, i) => (i * 151 + salt * 7) % 256);
}

/**
 * The one conformance suite every sandbox backend passes (Inspect AI's practice): file
 * operations and their error codes, the persistent session (cd/export) and `fresh`
 * calls, exit codes as data, timeouts, output caps, snapshots that round-trip and
 * restore into a fresh sandbox with their recorded tree hash, session state, reset and
 * destroy. Each test owns its sandboxes and destroys them.
 */
export function sandboxConformance(
  name: string,
  makeProvider: () => SandboxProvider | Promise<SandboxProvider>,
  makeStore: () => SnapshotStore | Promise<SnapshotStore>,
  options: ConformanceOptions = {},
): void {
  const config = options.config ?? CONFORMANCE_CONFIG;

  describe(`sandbox conformance: ${name}`, () => {
    const owned: Sandbox[] = [];
    afterEach(async () => {
      await Promise.all(owned.splice(0).map((s) => s.destroy()));
    });

    async function sandbox(): Promise<Sandbox> {
      const s = await (await makeProvider()).create(config);
      owned.push(s);
      return s;
    }

    const run = (s: Sandbox, command: string, fresh = false, timeoutMs = 10_000) =>
      s.exec({ command, timeoutMs, fresh });

    it('runs a command and returns its output and exit code', async () => {
      const s = await sandbox();
      const r = await run(s, 'echo hello');
      expect(r).toMatchObject({ ok: true, exit_code: 0, stdout: 'hello\n' });
      expect(r.error).toBeUndefined();
      expect(r.bytes).toBeGreaterThanOrEqual(6);
    });

    it('reports a non-zero exit as ok with its exit_code, and a missing command as 127', async () => {
      const s = await sandbox();
      expect(await run(s, 'false')).toMatchObject({ ok: true, exit_code: 1 });
      expect(await run(s, 'exit 3')).toMatchObject({ ok: true, exit_code: 3 });
      const missing = await run(s, 'ls /no-such-dir-here');
      expect(missing.ok).toBe(true);
      expect(missing.exit_code).not.toBe(0);
      expect(missing.stderr).toContain('no-such-dir-here');
      const unknown = await run(s, 'no-such-command-xyz');
      expect(unknown).toMatchObject({ ok: true, exit_code: 127 });
      expect(unknown.stderr).toContain('not found');
    });

    it('gives commands /dev/null as stdin, so a reader ends at once', async () => {
      const s = await sandbox();
      expect(await run(s, 'cat', false, 5_000)).toMatchObject({ ok: true, exit_code: 0, stdout: '' });
    });

    it('keeps cd and exported variables across calls, like a terminal', async () => {
      const s = await sandbox();
      expect((await run(s, 'mkdir -p /workspace/sub && cd /workspace/sub')).exit_code).toBe(0);
      await run(s, 'export STEPBOX_CONF=bar');
      expect((await run(s, 'pwd')).stdout).toBe('/workspace/sub\n');
      expect((await run(s, 'echo "$STEPBOX_CONF"')).stdout).toBe('bar\n');
      const state = await s.sessionState();
      expect(state.cwd).toBe('/workspace/sub');
      expect(state.env.STEPBOX_CONF).toBe('bar');
    });

    // The shell forms the harness tests script on the memory backend: Docker's bash runs
    // them too, so the memory shell cannot drift from what a real shell prints.
    it('sequences with ; && || and expands $? and variables, quoted and not', async () => {
      const s = await sandbox();
      expect((await run(s, 'false || echo rescued; true && echo yes')).stdout).toBe('rescued\nyes\n');
      expect((await run(s, 'false; echo $?')).stdout).toBe('1\n');
      expect((await run(s, "A='x y'; echo \"[$A]\" '[$A]' ${A}")).stdout).toBe('[x y] [$A] x y\n');
    });

    it('redirects to files, appends, and discards stderr to /dev/null', async () => {
      const s = await sandbox();
      const r = await run(s, 'echo one > f.txt; echo two >> f.txt; cat nope 2>/dev/null');
      expect(r.stderr).toBe('');
      expect((await run(s, 'cat f.txt')).stdout).toBe('one\ntwo\n');
    });

    it('formats with printf %s and %d, reusing the format for extra arguments', async () => {
      const s = await sandbox();
      expect((await run(s, "printf '%s=%d\\n' a 1 b 2")).stdout).toBe('a=1\nb=2\n');
    });

    it('tests files and strings, greps, moves and copies', async () => {
      const s = await sandbox();
      const sh = async (command: string) => (await run(s, command)).stdout;
      await sh('echo "ok: 3 passed" > out.txt && mkdir d');
      expect(await sh('test -f out.txt && echo f; [ -d d ] && echo d; [ ! -e nope ] && echo none')).toBe(
        'f\nd\nnone\n',
      );
      expect(await sh('[ "a" = "b" ] || echo differ; test -z "" && echo empty')).toBe('differ\nempty\n');
      expect(
        await sh(
          'grep -q "3 passed" out.txt && echo found; grep -c ok out.txt; grep nothing out.txt; echo $?',
        ),
      ).toBe('found\n1\n1\n');
      // Checked with test, not ls: coreutils 9's ls fails on gVisor 2022 (statx with
      // AT_NO_AUTOMOUNT is EINVAL there), and listing is not what this test is about.
      expect(
        await sh(
          'cp out.txt d && mv out.txt moved.txt && test -f d/out.txt && test -f moved.txt && test ! -e out.txt && echo moved; cat d/out.txt moved.txt',
        ),
      ).toBe('moved\nok: 3 passed\nok: 3 passed\n');
      expect((await run(s, 'mv d d/inner')).exit_code).toBe(1);
    });

    it('runs a fresh call in /workspace with the clean environment, leaving the session alone', async () => {
      const s = await sandbox();
      await run(s, 'cd /tmp && export STEPBOX_CONF=bar');
      expect((await run(s, 'pwd', true)).stdout).toBe('/workspace\n');
      expect((await run(s, 'echo "[$STEPBOX_CONF]"', true)).stdout).toBe('[]\n');
      expect((await run(s, 'pwd')).stdout).toBe('/tmp\n');
      expect((await run(s, 'echo "$STEPBOX_CONF"')).stdout).toBe('bar\n');
    });

    it('replaces the session state (rollback of cwd and env)', async () => {
      const s = await sandbox();
      const before = await s.sessionState();
      expect(before.cwd).toBe('/workspace');
      await s.setSessionState({ cwd: '/tmp', env: { ...before.env, STEPBOX_ZED: 'z 1' } });
      expect((await run(s, 'pwd')).stdout).toBe('/tmp\n');
      expect((await run(s, 'echo "$STEPBOX_ZED"')).stdout).toBe('z 1\n');
      await s.setSessionState(before);
      expect((await run(s, 'pwd')).stdout).toBe('/workspace\n');
      expect((await run(s, 'echo "[$STEPBOX_ZED]"')).stdout).toBe('[]\n');
    });

    it('times a command out with `timeout` and stays usable', async () => {
      const s = await sandbox();
      const started = Date.now();
      const r = await run(s, 'echo before; sleep 30', false, 400);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe('timeout');
      expect(r.stdout).toBe('before\n');
      expect(await run(s, 'echo after')).toMatchObject({ ok: true, stdout: 'after\n' });
    });

    it('caps output per stream and counts what was discarded', async () => {
      const s = await sandbox();
      value(await s.writeFile('big.txt', text('a'.repeat(OUTPUT_CAP * 3))));
      const r = await run(s, 'cat big.txt');
      expect(r.ok).toBe(true);
      expect(r.truncated).toEqual({ stdout: true, stderr: false });
      expect(r.stdout?.length).toBeLessThanOrEqual(OUTPUT_CAP);
      expect(r.stdout?.length).toBeGreaterThan(0);
      expect(r.bytes).toBeGreaterThanOrEqual(OUTPUT_CAP * 3);
    });

    it('returns non-UTF-8 output as text with U+FFFD plus base64', async () => {
      const s = await sandbox();
      const bytes = Uint8Array.from([0x66, 0xff, 0x67]);
      value(await s.writeFile('raw.bin', bytes));
      const r = await run(s, 'cat raw.bin');
      expect(r.stdout).toBe('f\uFFFDg');
      expect(r.stdout_b64).toBe(Buffer.from(bytes).toString('base64'));
    });

    it('reads, writes and lists files with relative paths against /workspace', async () => {
      const s = await sandbox();
      expect(value(await s.writeFile('a/b/c.txt', text('hi there')))).toEqual({ bytes: 8 });
      expect(decode(value(await s.readFile('/workspace/a/b/c.txt')))).toBe('hi there');
      expect(value(await s.listDir('a/b'))).toEqual([{ name: 'c.txt', type: 'file', size: 8 }]);
      const bin = binaryBytes(1);
      value(await s.writeFile('/workspace/bin.dat', bin));
      expect(Buffer.from(value(await s.readFile('bin.dat'))).equals(Buffer.from(bin))).toBe(true);
      // The shell and the file operations see one filesystem.
      expect((await run(s, 'cat a/b/c.txt')).stdout).toBe('hi there');
      await run(s, 'echo from-shell > shell.txt && ln -s shell.txt link');
      expect(decode(value(await s.readFile('shell.txt')))).toBe('from-shell\n');
      expect(decode(value(await s.readFile('link')))).toBe('from-shell\n');
      const names = value(await s.listDir('/workspace')).map((e) => `${e.name}:${e.type}`);
      expect(names.sort()).toEqual(['a:dir', 'bin.dat:file', 'link:symlink', 'shell.txt:file']);
    });

    it('returns file errors as codes: not_found, is_directory, not_a_directory, permission_denied', async () => {
      const s = await sandbox();
      value(await s.writeFile('f.txt', text('x')));
      value(await s.writeFile('d/inner.txt', text('y')));
      expect(errorCode(await s.readFile('missing.txt'))).toBe('not_found');
      expect(errorCode(await s.readFile('d'))).toBe('is_directory');
      expect(errorCode(await s.listDir('f.txt'))).toBe('not_a_directory');
      expect(errorCode(await s.listDir('no-dir'))).toBe('not_found');
      expect(errorCode(await s.writeFile('d', text('z')))).toBe('is_directory');
      expect(errorCode(await s.writeFile('/etc/stepbox-conformance', text('z')))).toBe('permission_denied');
    });

    it('round-trips a snapshot: added, modified, deleted files, modes, symlinks, empty dirs, binary', async () => {
      const s = await sandbox();
      const store = await makeStore();
      value(await s.writeFile('same.txt', text('unchanged')));
      value(await s.writeFile('mod.txt', text('v1')));
      value(await s.writeFile('del.txt', text('bye')));
      value(await s.writeFile('keep.sh', text('#!/bin/sh\n')));
      value(await s.writeFile('bin.dat', binaryBytes(1)));
      value(await s.writeFile('tomove.txt', text('moving')));
      await run(s, 'cd /workspace && ln -s same.txt link && mkdir -p emptydir/inner');
      const s1 = await s.snapshot(store);
      expect(s1.treeHash).toMatch(/^[0-9a-f]{64}$/);
      expect(s1.changed).toContainEqual({ path: 'mod.txt', change: 'added' });
      expect(s1.changed).toContainEqual({ path: 'link', change: 'added' });

      value(await s.writeFile('mod.txt', text('v2, longer')));
      value(await s.writeFile('new.txt', text('new')));
      value(await s.writeFile('bin.dat', binaryBytes(2)));
      const shell = await run(
        s,
        'cd /workspace && rm del.txt && chmod 755 keep.sh && rm link && ln -s mod.txt link && rm -r emptydir && mkdir newempty && mv tomove.txt moved.txt',
      );
      expect(shell.exit_code).toBe(0);
      const s2 = await s.snapshot(store);
      expect(s2.treeHash).not.toBe(s1.treeHash);
      expect(s2.changed).toEqual(
        expect.arrayContaining([
          { path: 'mod.txt', change: 'modified' },
          { path: 'new.txt', change: 'added' },
          { path: 'del.txt', change: 'deleted' },
          { path: 'keep.sh', change: 'modified' },
          { path: 'bin.dat', change: 'modified' },
          { path: 'tomove.txt', change: 'deleted' },
          { path: 'moved.txt', change: 'added' },
        ]),
      );
      expect(s2.changed.map((c) => c.path)).not.toContain('same.txt');

      const back = await s.restore(store, await store.getManifest(s1.manifest), 'full');
      expect(back.treeHash).toBe(s1.treeHash);
      expect(decode(value(await s.readFile('mod.txt')))).toBe('v1');
      expect(decode(value(await s.readFile('del.txt')))).toBe('bye');
      expect(decode(value(await s.readFile('tomove.txt')))).toBe('moving');
      expect(errorCode(await s.readFile('moved.txt'))).toBe('not_found');
      expect(decode(value(await s.readFile('link')))).toBe('unchanged');
      expect(errorCode(await s.readFile('new.txt'))).toBe('not_found');
      expect(Buffer.from(value(await s.readFile('bin.dat'))).equals(Buffer.from(binaryBytes(1)))).toBe(true);
      const top = value(await s.listDir('.')).map((e) => `${e.name}:${e.type}`);
      expect(top).toContain('emptydir:dir');
      expect(top).not.toContain('newempty:dir');
      expect(value(await s.listDir('emptydir'))).toEqual([
        { name: 'inner', type: 'dir', size: expect.any(Number) },
      ]);
      // Modes are part of the tree hash: a fresh snapshot of the restored tree matches s1.
      expect((await s.snapshot(store)).treeHash).toBe(s1.treeHash);

      const forward = await s.restore(store, await store.getManifest(s2.manifest), 'full');
      expect(forward.treeHash).toBe(s2.treeHash);
      expect(decode(value(await s.readFile('link')))).toBe('v2, longer');
    });

    it('says when a snapshot has read the workspace (onTaken): a file written after it is in the next snapshot, not this one', async () => {
      const s = await sandbox();
      const store = await makeStore();
      value(await s.writeFile('before.txt', text('before')));
      let written: ReturnType<Sandbox['writeFile']> | null = null;
      const snap = await s.snapshot(store, {
        // What a person's terminal command does while the snapshot stores what it read.
        onTaken: () => void (written ??= s.writeFile('after.txt', text('after'))),
      });
      expect(written).not.toBeNull();
      value(await written!);
      expect(snap.changed).toContainEqual({ path: 'before.txt', change: 'added' });
      expect(snap.changed.map((c) => c.path)).not.toContain('after.txt');
      expect((await s.snapshot(store)).changed).toEqual([{ path: 'after.txt', change: 'added' }]);
    });

    it('restores a snapshot into a fresh sandbox with its recorded tree hash', async () => {
      const store = await makeStore();
      const a = await sandbox();
      value(await a.writeFile('src/main.py', text('print("ok")\n')));
      value(await a.writeFile('data.bin', binaryBytes(3), 0o600));
      await run(a, 'cd /workspace && mkdir -p empty && ln -s src/main.py entry && chmod 750 src');
      const snap = await a.snapshot(store);
      const b = await sandbox();
      const info = await b.restore(store, await store.getManifest(snap.manifest), 'full');
      expect(info.treeHash).toBe(snap.treeHash);
      expect(decode(value(await b.readFile('entry')))).toBe('print("ok")\n');
      expect((await b.snapshot(store)).treeHash).toBe(snap.treeHash);
    });

    it('refuses a restore whose blob was tampered with', async () => {
      const store = await makeStore();
      const a = await sandbox();
      value(await a.writeFile('x.txt', text('genuine content')));
      const snap = await a.snapshot(store);
      const tampered: SnapshotStore = {
        hasBlob: (h) => store.hasBlob(h),
        putBlob: (h, c) => store.putBlob(h, c),
        getBlob: async (h) => {
          const real = Uint8Array.from(await store.getBlob(h));
          real[0] ^= 0xff;
          return real;
        },
        putManifest: (m) => store.putManifest(m),
        getManifest: (id) => store.getManifest(id),
        listBlobs: () => store.listBlobs(),
        removeBlob: (h) => store.removeBlob(h),
        listManifests: () => store.listManifests(),
      };
      const b = await sandbox();
      const failure = await b.restore(tampered, await store.getManifest(snap.manifest), 'full').then(
        () => null,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(SandboxFailure);
      expect(['verify_failed', 'restore_failed']).toContain((failure as SandboxFailure).code);
    });

    it('kills strays by clearing /tmp and $HOME and keeps the workspace', async () => {
      const s = await sandbox();
      await run(s, 'echo t > /tmp/scratch && echo w > /workspace/kept');
      value(await s.writeFile('/home/agent/planted', text('h')));
      await s.killStrays();
      expect(errorCode(await s.readFile('/tmp/scratch'))).toBe('not_found');
      expect(errorCode(await s.readFile('/home/agent/planted'))).toBe('not_found');
      expect(decode(value(await s.readFile('kept')))).toBe('w\n');
    });

    it('resets to a clean sandbox: empty workspace, fresh session', async () => {
      const s = await sandbox();
      value(await s.writeFile('junk/file.txt', text('junk')));
      await run(s, 'cd /tmp && export STEPBOX_CONF=1');
      await s.reset();
      expect(value(await s.listDir('/workspace'))).toEqual([]);
      expect((await run(s, 'pwd')).stdout).toBe('/workspace\n');
      expect((await run(s, 'echo "[$STEPBOX_CONF]"')).stdout).toBe('[]\n');
    });

    it("opens a person's terminal (where the backend has one) as the agent's user, its pty root's, reporting each command", async () => {
      const provider = await makeProvider();
      if (!provider.terminal) return;
      const s = await sandbox();
      const term = await provider.terminal(s.id, { cols: 100, rows: 30 });
      try {
        let output = '';
        const commands: { command: string; exit_code: number }[] = [];
        const ticks = new Set<() => void>();
        const tick = () => ticks.forEach((t) => t());
        term.onData((d) => ((output += d), tick()));
        term.onCommand((c) => (commands.push(c), tick()));
        const until = (check: () => boolean, what: string) =>
          new Promise<void>((resolve, reject) => {
            const done = () => check() && (ticks.delete(done), clearTimeout(timer), resolve());
            const timer = setTimeout(
              () => (ticks.delete(done), reject(new Error(`timed out waiting for ${what}`))),
              30_000,
            );
            ticks.add(done);
            done();
          });
        await until(() => /\$ $/.test(output), 'the first prompt');
        const from = output.length;
        term.write(
          'echo "who=$(id -u):$(id -g) home=$HOME tty=$(tty) pty=$(stat -c %u:%a "$(tty)") in=$PWD"\r',
        );
        await until(
          () => commands.length === 1 && /\$ $/.test(output.slice(from)),
          'the command to be reported',
        );
        expect(commands[0]!.exit_code).toBe(0);
        // Root's pty, writable by its group (tty) alone: no process of the agent's opens it. On
        // gVisor the pty lives in its kernel with no path in the sandbox (\`tty\` answers "not a
        // tty"), so nothing can open it by name either.
        const seen = /who=(\S*) home=(\S*) tty=(.*) pty=(\S*) in=(\S*)/.exec(output.slice(from));
        expect(seen?.slice(1, 3)).toEqual(['1000:1000', '/home/agent']);
        expect(seen?.[5]).toBe('/workspace');
        if (seen?.[3] !== 'not a tty') expect(seen?.[4]).toBe('0:620');
        // The prompt says who and where the person is (a non-interactive launcher once dropped
        // it: `bash-5.2$`; an image without a passwd entry for uid 1000 read `I have no name!@`).
        // The prompt's line as a person reads it (readline's bracketed-paste mode switch dropped).
        expect(terminalSafe(output.slice(from)).split('\n').at(-1)).toBe('agent@sandbox:/workspace$ ');
      } finally {
        await term.close();
      }
    });

    it("names the agent's processes left running beside a person's terminal command, and none of the person's own", async () => {
      const provider = await makeProvider();
      if (!provider.terminal) return;
      const s = await sandbox();
      if (!s.writers) return;
      const term = await provider.terminal(s.id, { cols: 100, rows: 30, writers: (x) => s.writers!(x) });
      try {
        const commands: HumanCommand[] = [];
        const ticks = new Set<() => void>();
        const tick = () => ticks.forEach((t) => t());
        term.onData(() => tick());
        term.onCommand((c) => (commands.push(c), tick()));
        const type = (line: string) =>
          new Promise<HumanCommand>((resolve, reject) => {
            const before = commands.length;
            const done = () =>
              commands.length > before &&
              (ticks.delete(done), clearTimeout(timer), resolve(commands[before]!));
            const timer = setTimeout(
              () => (ticks.delete(done), reject(new Error(`timed out waiting for "${line}"`))),
              30_000,
            );
            ticks.add(done);
            term.write(`${line}\r`);
          });
        // The person's own job is theirs; the agent's process (its own session, past its call) is named.
        expect((await type('sleep 60 & true')).others).toBeUndefined();
        // Its own session, so it outlives its call (util-linux's setsid forks with -f; busybox's
        // always does); the call waits until it is there (its pid written from the new session).
        const leave =
          "(setsid -f sh -c 'echo $$ > /tmp/left; exec sleep 60' || setsid sh -c 'echo $$ > /tmp/left; exec sleep 60' &) >/dev/null 2>&1 </dev/null; " +
          'while [ ! -s /tmp/left ]; do sleep 0.01; done';
        expect((await s.exec({ command: leave, timeoutMs: 10_000 })).exit_code).toBe(0);
        const beside = await type('true');
        expect(beside.others?.processes.map((p) => p.name)).toContain('sleep');
        await s.killStrays();
        expect((await type('true')).others).toBeUndefined();
      } finally {
        await term.close();
      }
    });

    it('rejects operations on a destroyed sandbox with sandbox_lost', async () => {
      const s = await sandbox();
      await s.destroy();
      const failure = await run(s, 'true').then(
        () => null,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(SandboxFailure);
      expect((failure as SandboxFailure).code).toBe('sandbox_lost');
    });

    it('refuses a network the engine does not have with network_unavailable', async () => {
      const provider = await makeProvider();
      const failure = await provider.create({ ...config, network: 'stepbox-no-such-network' }).then(
        (s) => {
          owned.push(s);
          return null;
        },
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(SandboxFailure);
      expect((failure as SandboxFailure).code).toBe('network_unavailable');
    });
  });
}
