import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HelperClient } from '../../electron/engine/sandbox/helper-client.js';
import {
  coreToSpare,
  machineIdle,
  MAX_SPIN_SKIPS,
  SpinBackoff,
  socketSpin,
  spinBudgetMs,
  type ReplySpin,
} from '../../electron/engine/sandbox/reply-spin.js';

function frame(header: object, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(h.length, 0);
  prefix.writeUInt32BE(payload.length, 4);
  return Buffer.concat([prefix, h, payload]);
}

const HELLO = {
  event: 'hello',
  pid: 1,
  main: 7,
  oom_kills: 0,
  isolated: true,
  sealed: true,
  uid: 0,
  channel: 'socket',
  channel_problem: null,
};

/** An exec reply with `out` as its stdout. */
function execReply(id: number, out: string): Buffer {
  const payload = Buffer.from(out);
  return frame(
    {
      id,
      ok: true,
      exit_code: 0,
      signal: null,
      stdout_len: payload.length,
      stdout_total: payload.length,
      stderr_total: 0,
      oom: false,
      oom_counter: true,
      duration_ms: 1,
    },
    payload,
  );
}

const EXEC = { command: 'true', timeout_ms: 1000, fresh: false, cap: 1000 };

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Both ends of a real unix socket: `host` as the engine gets it, `helper` as the sandbox's side. */
async function socketPair(): Promise<{ host: Socket; helper: Socket }> {
  const dir = mkdtempSync(join(tmpdir(), 'stepbox-spin-'));
  dirs.push(dir);
  const path = join(dir, 's');
  const accepted = new Promise<Socket>((resolve) => {
    const server = createServer((s) => {
      server.close();
      resolve(s);
    });
    server.listen(path);
  });
  await new Promise((r) => setTimeout(r, 0));
  const helper = connect(path);
  await new Promise((resolve) => helper.once('connect', resolve));
  return { host: await accepted, helper };
}

describe('reply spin', () => {
  it('reads the socket without blocking: null while nothing is there, the bytes once they are', async () => {
    const { host, helper } = await socketPair();
    host.pause();
    const spin = socketSpin(host, 3)!;
    expect(spin).toBeDefined();
    const into = Buffer.alloc(64);
    expect(spin.read(into)).toBeNull();
    helper.write('abc');
    let n: number | null = null;
    const until = Date.now() + 5_000;
    while (n === null && Date.now() < until) n = spin.read(into);
    expect(into.toString('utf8', 0, n ?? 0)).toBe('abc');
    host.destroy();
    helper.destroy();
  });

  it("catches a reply already on the socket within the call, before the stream's 'data' sees it", async () => {
    const { host, helper } = await socketPair();
    // Allowed whatever the machine's load (the real spin asks machineIdle()).
    const client = new HelperClient(host, host, { ...socketSpin(host, 50)!, allowed: () => true });
    helper.write(frame(HELLO));
    await client.hello;
    let streamed = 0;
    host.on('data', () => streamed++);
    // The reply is in the socket before the request leaves (ids count from 1): the spin reads
    // it in the request's own call, so the stream never delivers it.
    helper.write(execReply(1, 'spun'));
    const r = await client.request('exec', EXEC, undefined, 2000);
    expect(r.payload.toString()).toBe('spun');
    expect(streamed).toBe(0);
    host.destroy();
    helper.destroy();
  });

  it('loses and reorders nothing when a reply is read part by the spin and part by the stream', async () => {
    const { host, helper } = await socketPair();
    // A spin that reads the socket for real but only the first 20 bytes it finds, then stops:
    // the rest of the frame arrives through the stream's 'data', as after a spin that ran out
    // mid-frame.
    const real = socketSpin(host, 50)!;
    let taken = 0;
    const spin: ReplySpin = {
      budgetMs: 50,
      allowed: () => true,
      read(into) {
        if (taken >= 20) return 0;
        const n = real.read(into.subarray(0, 20 - taken));
        if (n) taken += n;
        return n;
      },
    };
    const client = new HelperClient(host, host, spin);
    helper.write(frame(HELLO));
    await client.hello;
    const answered: string[] = [];
    for (let id = 1; id <= 3; id++) {
      helper.write(execReply(id, `out-${id}-${'x'.repeat(200)}`));
      const r = await client.request('exec', EXEC, undefined, 2000);
      answered.push(r.payload.toString().slice(0, 6));
    }
    expect(answered).toEqual(['out-1-', 'out-2-', 'out-3-']);
    expect(taken).toBe(20);
    host.destroy();
    helper.destroy();
  });

  it('takes its budget from STEPBOX_HELPER_SPIN_MS: 0 turns it off, nonsense keeps the default', () => {
    expect(spinBudgetMs({})).toBe(5);
    expect(spinBudgetMs({ STEPBOX_HELPER_SPIN_MS: '0' })).toBe(0);
    expect(spinBudgetMs({ STEPBOX_HELPER_SPIN_MS: 'fast' })).toBe(5);
    expect(spinBudgetMs({ STEPBOX_HELPER_SPIN_MS: '1.5' })).toBe(1.5);
  });
});

describe('reply spin after misses', () => {
  /** Which of `calls` calls spin, each spin's outcome given by `caught(i)`. */
  function spinning(calls: number, caught: (i: number) => boolean): number[] {
    const b = new SpinBackoff();
    const spun: number[] = [];
    for (let i = 0; i < calls; i++) {
      if (!b.take()) continue;
      spun.push(i);
      b.spun(caught(i));
    }
    return spun;
  }

  it('one longer command between short ones costs the next call its spin, not the next eight', () => {
    // Call 0 misses (a python3 start), every later one is caught.
    expect(spinning(6, (i) => i !== 0)).toEqual([0, 2, 3, 4, 5]);
  });

  it("is the client's: after one miss the next call sleeps and the one after spins again", async () => {
    const { host, helper } = await socketPair();
    const asked: number[] = [];
    let call = 0;
    // A 1 ms budget: the first reply is written only after the spin gave up (a miss).
    const client = new HelperClient(host, host, {
      ...socketSpin(host, 1)!,
      allowed: () => (asked.push(call), true),
    });
    helper.write(frame(HELLO));
    await client.hello;
    for (call = 1; call <= 4; call++) {
      // Later replies are on the socket before their request leaves (caught by a spin).
      if (call > 1) helper.write(execReply(call, 'x'));
      else setTimeout(() => helper.write(execReply(1, 'late')), 20);
      await client.request('exec', EXEC, undefined, 2000);
    }
    // Calls 1 (missed), 3 and 4 spin; call 2 skips. (A flat 8 skipped calls 2 to 9.)
    expect(asked).toEqual([1, 3, 4]);
    host.destroy();
    helper.destroy();
  });

  it('misses in a row back off to one spin in MAX_SPIN_SKIPS + 1 calls, and a caught reply starts over', () => {
    // Every reply outlasts the budget (a test suite called again and again).
    const allMiss = spinning(60, () => false);
    expect(allMiss.slice(0, 6)).toEqual([0, 2, 5, 10, 19, 28]);
    expect(allMiss.slice(4).every((c, k, a) => k === 0 || c - a[k - 1] === MAX_SPIN_SKIPS + 1)).toBe(true);
    // Misses up to call 10, then short commands again: one call skipped is all it takes.
    expect(spinning(25, (i) => i > 10)).toEqual([0, 2, 5, 10, 19, 20, 21, 22, 23, 24]);
  });
});

describe('reply spin gate', () => {
  it("counts other processes' CPU time, never this process's own (its spinning core is its own)", () => {
    // This process spinning 45% of a 2-core machine's time, others 15%: a core is idle.
    expect(coreToSpare({ cores: 2, busyShare: 0.6, selfShare: 0.45 })).toBe(true);
    // The same busy machine with the time someone else's: no core to spare.
    expect(coreToSpare({ cores: 2, busyShare: 0.6, selfShare: 0 })).toBe(false);
    expect(coreToSpare({ cores: 2, busyShare: 0.95, selfShare: 0.05 })).toBe(false);
    expect(coreToSpare({ cores: 4, busyShare: 0.7, selfShare: 0.1 })).toBe(true);
    expect(coreToSpare({ cores: 4, busyShare: 0.9, selfShare: 0.1 })).toBe(false);
    // One core: spinning would take the only one.
    expect(coreToSpare({ cores: 1, busyShare: 0.5, selfShare: 0.5 })).toBe(false);
  });

  it('stays off while other processes keep every core busy', async () => {
    // One busy loop per core, in processes of their own (other work on the machine).
    const loops: ChildProcess[] = [];
    try {
      const running = Array.from({ length: availableParallelism() }, () => {
        const child = spawn(process.execPath, ['-e', 'process.stdout.write("go"); for (;;) {}'], {
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        loops.push(child);
        return new Promise((resolve) => child.stdout!.once('data', resolve));
      });
      await Promise.all(running);
      machineIdle(); // opens a window…
      // …closed a little over LOAD_CHECK_MS later (the window is the measurement, not a wait for an event).
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect(machineIdle()).toBe(false);
    } finally {
      for (const child of loops) child.kill('SIGKILL');
    }
  });
});
