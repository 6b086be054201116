import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHANNEL_DIR, CHANNEL_ROOT } from '../../electron/engine/docker/container-spec.js';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import type { HelperSocket } from '../../electron/engine/sandbox/helper-socket.js';
import { HELPER_SOCKET_PATH } from '../../electron/engine/sandbox/helper-socket.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { describeDocker, useTestProvider } from '../support/docker.js';

// The helper's socket channel (helper-socket.ts, helper-channel.ts) as an attacker sees it:
// the agent's code trying to reach, read, swap or fill the socket and its folder; root in the
// container (a helper gone bad) trying to plant something the host would follow; a host
// process knocking without the token; a helper restart; a socket that cannot be reached.

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' }).trim();
}

/** A shell as root in the container, outside the helper (the test's own hand). */
function asRoot(sb: DockerSandbox, script: string): string {
  return docker('exec', '-u', '0:0', '-w', '/', sb.id, '/bin/sh', '-c', `{ ${script}; } 2>&1; true`);
}

/** The sandbox's host end of its socket. */
function hostSocket(sb: DockerSandbox): HelperSocket {
  return (sb as unknown as { offer: { socket: HelperSocket } }).offer.socket;
}

function helperPid(sb: DockerSandbox): number {
  return (sb as unknown as { connection: { hello: { pid: number } } }).connection.hello.pid;
}

/**
 * What the agent's code tries against the channel, every way it has: list and enter the
 * folders, connect to the socket (many times: exhaust it), through the helper's /proc root
 * too, rename, replace or chmod the folder, create files and links in it. Prints what worked.
 */
const AGENT_ATTACK = `python3 - <<'PY'
import json, os, socket
reached = []
def attempt(what, fn):
    try:
        fn()
        reached.append(what)
    except OSError:
        pass
def connect(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.sendall(b'x' * 64)
    finally:
        s.close()
for d in ('${CHANNEL_ROOT}', '${CHANNEL_DIR}'):
    attempt('listed ' + d, lambda: os.listdir(d))
    attempt('chmod ' + d, lambda: os.chmod(d, 0o777))
for i in range(50):
    attempt('connected to the socket', lambda: connect('${HELPER_SOCKET_PATH}'))
for p in os.listdir('/proc'):
    if p.isdigit():
        attempt('connected through /proc/%s/root' % p, lambda: connect('/proc/%s/root${HELPER_SOCKET_PATH}' % p))
attempt('renamed the folder', lambda: os.rename('${CHANNEL_ROOT}', '/tmp/moved'))
attempt('replaced the folder by a link', lambda: (os.rmdir('${CHANNEL_DIR}'), os.symlink('/tmp', '${CHANNEL_DIR}')))
attempt('created a file in the folder', lambda: open('${CHANNEL_DIR}/planted', 'w').close())
attempt('created a link in the folder', lambda: os.symlink('/', '${CHANNEL_DIR}/link'))
attempt('created a file beside the folder', lambda: open('${CHANNEL_ROOT}/planted', 'w').close())
print(json.dumps(reached))
PY`;

describeDocker("helper socket channel: out of the agent's reach, and the host never led astray", () => {
  const provider = useTestProvider();
  let sb: DockerSandbox;

  beforeAll(async () => {
    sb = await provider().create(defaultSandboxConfig());
  }, 60_000);

  afterAll(async () => {
    await sb?.destroy();
  });

  it('speaks over the host socket here, its folder mounted read-only inside a folder only root may enter', () => {
    expect(sb.channel).toEqual({ kind: 'socket' });
    expect(asRoot(sb, `stat -c '%a %U' ${CHANNEL_ROOT}`)).toBe('700 root');
    const mount = asRoot(sb, `grep ' ${CHANNEL_DIR} ' /proc/self/mountinfo`);
    expect(mount.split(' ')[5]).toMatch(/^ro(,|$)/);
    expect(readdirSync(hostSocket(sb).hostDir)).toEqual(['helper.sock']);
  });

  it('the agent cannot list, enter, connect to (or exhaust), rename, replace or fill the channel (the class)', async () => {
    const r = await sb.exec({ command: AGENT_ATTACK, timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout!.trim())).toEqual([]);
    // Nothing changed on the host, and the channel carries on.
    expect(readdirSync(hostSocket(sb).hostDir)).toEqual(['helper.sock']);
    expect(await sb.exec({ command: 'echo next', timeoutMs: 10_000 })).toMatchObject({
      ok: true,
      stdout: 'next\n',
    });
    expect(sb.channel).toEqual({ kind: 'socket' });
  });

  it("the helper's boot token is nowhere the agent can read: not in any command line or environment it sees", async () => {
    const r = await sb.exec({
      command: `for p in /proc/[0-9]*; do cat $p/cmdline $p/environ 2>/dev/null | tr '\\0' '\\n'; done | grep -Eo '[0-9a-f]{64}' | head -3; echo done`,
      timeoutMs: 30_000,
    });
    expect(r.stdout).toBe('done\n');
  });

  it('root in the container (a helper gone bad) cannot plant anything in the host folder: the mount is read-only', () => {
    const out = asRoot(
      sb,
      `touch ${CHANNEL_DIR}/planted; ln -s / ${CHANNEL_DIR}/link; mkdir ${CHANNEL_DIR}/d; rm -f ${CHANNEL_DIR}/helper.sock; mv ${CHANNEL_DIR}/helper.sock ${CHANNEL_DIR}/x`,
    );
    expect(out.match(/Read-only file system/g)?.length).toBe(5);
    expect(readdirSync(hostSocket(sb).hostDir)).toEqual(['helper.sock']);
  });

  it('a host process without the token gets nothing; a restarted helper gets in again with a new one', async () => {
    const knock = (bytes: Buffer) =>
      new Promise<Buffer>((resolve) => {
        const c = createConnection(join(hostSocket(sb).hostDir, 'helper.sock'));
        let got = Buffer.alloc(0);
        c.on('data', (d: Buffer) => (got = Buffer.concat([got, d])));
        c.on('connect', () => c.write(bytes));
        c.on('error', () => undefined);
        c.on('close', () => resolve(got));
      });
    // No helper is starting: closed at once.
    expect(await knock(Buffer.alloc(32, 9))).toEqual(Buffer.alloc(0));
    const before = helperPid(sb);
    asRoot(sb, `kill -9 ${before}`);
    const next = await sb.exec({ command: 'echo hi', timeoutMs: 10_000 });
    expect(next.error?.code ?? 'ok').toMatch(/ok|session_restarted/);
    expect(await sb.exec({ command: 'echo hi', timeoutMs: 10_000 })).toMatchObject({
      ok: true,
      stdout: 'hi\n',
    });
    expect(helperPid(sb)).not.toBe(before);
    expect(sb.channel).toEqual({ kind: 'socket' });
    expect(await knock(Buffer.alloc(32, 9))).toEqual(Buffer.alloc(0));
  });

  it('a helper that cannot reach the socket stays on its exec, says why, and works', async () => {
    const other = await provider().create(defaultSandboxConfig());
    try {
      // The host's end goes away (as where a socket cannot cross: a VM, SELinux): the
      // restarted helper's connect fails and it says hello on its exec instead.
      await hostSocket(other).close();
      asRoot(other, `kill -9 ${helperPid(other)}`);
      await other.exec({ command: 'true', timeoutMs: 10_000 });
      expect(await other.exec({ command: 'echo hi', timeoutMs: 10_000 })).toMatchObject({
        ok: true,
        stdout: 'hi\n',
      });
      expect(other.channel).toMatchObject({
        kind: 'exec',
        reason: expect.stringMatching(/could not use the host's socket: .*helper\.sock/),
      });
    } finally {
      await other.destroy();
    }
  });

  it('removes the folder on destroy without following a link planted in it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'stepbox-outside-'));
    try {
      mkdirSync(join(outside, 'd'));
      writeFileSync(join(outside, 'd', 'keep.txt'), 'mine');
      const other = await provider().create(defaultSandboxConfig());
      const dir = hostSocket(other).hostDir;
      // What a writable mount would let the container leave behind.
      symlinkSync(join(outside, 'd'), join(dir, 'dir-link'));
      symlinkSync(join(outside, 'd', 'keep.txt'), join(dir, 'file-link'));
      await other.destroy();
      expect(existsSync(dir)).toBe(false);
      expect(readFileSync(join(outside, 'd', 'keep.txt'), 'utf8')).toBe('mine');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });
});
