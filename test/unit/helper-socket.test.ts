import {
  mkdirSync,
  readdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { HelperSocket, HelperSockets } from '../../electron/engine/sandbox/helper-socket.js';

// The host's end of the helper's socket (helper-socket.ts): only a connection presenting the
// token of the helper being started is handed on; nothing else gets an ack or a byte of the
// protocol, and removing the folders never follows what lies in them.

const root = mkdtempSync(join(tmpdir(), 'stepbox-hs-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => HelperSocket.open(join(root, `s${n++}`));

/** Connects to the folder's socket and writes `bytes`; resolves with the first bytes back, or once it closed (or after `timeoutMs`). */
function knock(dir: string, bytes: Buffer, timeoutMs = 10_000): Promise<{ got: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const c = createConnection(join(dir, 'helper.sock'));
    let got = Buffer.alloc(0);
    const done = (closed: boolean) => {
      clearTimeout(timer);
      c.destroy();
      resolve({ got, closed });
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    c.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      done(false); // the ack: nothing else ever comes before the helper speaks
    });
    c.on('close', () => done(true));
    c.on('error', () => done(true));
    c.on('connect', () => c.write(bytes));
  });
}

describe('helper socket (host side)', () => {
  it('hands on the connection that presents the token (in pieces too), acks it once, and keeps what follows', async () => {
    const s = await fresh();
    try {
      expect(statSync(join(s.hostDir, 'helper.sock')).mode & 0o777).toBe(0o666);
      expect(statSync(s.hostDir).mode & 0o777).toBe(0o711);
      const wait = s.expect();
      const c = createConnection(join(s.hostDir, 'helper.sock'));
      const acked = new Promise<Buffer>((r) => c.once('data', r));
      c.write(wait.token.subarray(0, 5));
      setTimeout(() => c.write(Buffer.concat([wait.token.subarray(5), Buffer.from('after')])), 20);
      const conn: Socket = await wait.connection;
      expect(await acked).toEqual(Buffer.from([1]));
      const rest = await new Promise<Buffer>((r) => {
        conn.once('data', r);
        conn.resume();
      });
      expect(rest.toString()).toBe('after');
      conn.destroy();
      c.destroy();
    } finally {
      await s.close();
    }
  });

  it('refuses a wrong token, a connection when no helper is starting, a cancelled wait, and a stale token', async () => {
    const s = await fresh();
    try {
      // No helper starting: closed at once, nothing sent.
      expect(await knock(s.hostDir, Buffer.alloc(32, 1))).toEqual({ got: Buffer.alloc(0), closed: true });
      const first = s.expect();
      // A wrong token: closed, no ack; the wait goes on.
      expect(await knock(s.hostDir, Buffer.alloc(32, 7))).toEqual({ got: Buffer.alloc(0), closed: true });
      // A new start (a helper restart) makes the earlier token stale.
      const second = s.expect();
      expect(await knock(s.hostDir, first.token)).toEqual({ got: Buffer.alloc(0), closed: true });
      second.cancel();
      expect(await knock(s.hostDir, second.token)).toEqual({ got: Buffer.alloc(0), closed: true });
      // The right token of a live wait still gets its ack after all that.
      const third = s.expect();
      const ok = knock(s.hostDir, third.token);
      const conn = await third.connection;
      expect((await ok).got).toEqual(Buffer.from([1]));
      conn.destroy();
    } finally {
      await s.close();
    }
  });

  it('bounds connections that present nothing, and the helper still gets in once they are gone', async () => {
    const s = await fresh();
    try {
      const wait = s.expect();
      const idle = await Promise.all(
        Array.from(
          { length: 8 },
          () =>
            new Promise<Socket>((r) => {
              const c = createConnection(join(s.hostDir, 'helper.sock'));
              c.on('error', () => undefined);
              c.on('connect', () => r(c));
            }),
        ),
      );
      // Four are held (awaiting a token), the rest closed by the host at once.
      const closed = new Set<Socket>();
      for (const c of idle) c.once('close', () => closed.add(c));
      await vi.waitFor(() => expect(closed.size).toBe(4), { timeout: 10_000 });
      expect(idle.filter((c) => !closed.has(c) && !c.destroyed)).toHaveLength(4);
      for (const c of idle) c.destroy();
      const held = (s as unknown as { unauthenticated: Set<Socket> }).unauthenticated;
      await vi.waitFor(() => expect(held.size).toBe(0), { timeout: 10_000 });
      const ok = knock(s.hostDir, wait.token);
      (await wait.connection).destroy();
      expect((await ok).got).toEqual(Buffer.from([1]));
    } finally {
      await s.close();
    }
  });

  it('removes its folder on close without following links planted in it', async () => {
    const outside = join(root, 'outside');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'keep.txt'), 'mine');
    const s = await fresh();
    symlinkSync(outside, join(s.hostDir, 'dir-link'));
    symlinkSync(join(outside, 'keep.txt'), join(s.hostDir, 'file-link'));
    await s.close();
    expect(existsSync(s.hostDir)).toBe(false);
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('mine');
  });

  it('refuses a socket path longer than a unix socket can have, naming the fix', async () => {
    await expect(HelperSocket.open(join(root, 'x'.repeat(120)))).rejects.toThrow(/STEPBOX_HOME to a shorter/);
  });
});

describe('helper socket folders', () => {
  it("sweeps the folders of processes that are gone, never a live one's, never through a link", async () => {
    const runDir = join(root, 'run');
    const helpers = join(runDir, 'helpers');
    mkdirSync(helpers, { recursive: true });
    const outside = join(root, 'outside2');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'keep.txt'), 'mine');
    // A gone process's folder (no such pid), holding a link out; and one of a live pid that
    // started at another time (a reused pid).
    const dead = join(helpers, '999999-deadbeef');
    mkdirSync(join(dead, 'abcd0123'), { recursive: true });
    symlinkSync(outside, join(dead, 'abcd0123', 'link'));
    const reused = join(helpers, `${process.pid}-00000000`);
    mkdirSync(reused);
    // A link named like a process folder, pointing out; and a folder not named like one.
    symlinkSync(outside, join(helpers, '999998-deadbeef'));
    mkdirSync(join(helpers, 'notes'));
    const sockets = new HelperSockets(runDir);
    const live = await sockets.open();
    try {
      expect(await sockets.sweep()).toBe(2);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(reused)).toBe(false);
      expect(existsSync(live.hostDir)).toBe(true);
      expect(existsSync(join(helpers, 'notes'))).toBe(true);
      expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('mine');
    } finally {
      await live.close();
      await sockets.close();
    }
    // Closed with no sandbox left: this process's folder is gone too.
    expect(readdirSync(helpers).sort()).toEqual(['999998-deadbeef', 'notes']);
  });
});
