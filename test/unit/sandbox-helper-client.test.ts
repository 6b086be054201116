import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { HelperClient, HelperClosed, HelperError } from '../../electron/engine/sandbox/helper-client.js';

function frame(header: object, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(h.length, 0);
  prefix.writeUInt32BE(payload.length, 4);
  return Buffer.concat([prefix, h, payload]);
}

/** A client wired to in-memory streams, plus the requests it wrote (decoded). */
function harness() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const client = new HelperClient(stdin, stdout);
  const sent: { header: Record<string, unknown>; payload: Buffer }[] = [];
  let buf = Buffer.alloc(0);
  stdin.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    while (buf.length >= 8) {
      const total = 8 + buf.readUInt32BE(0) + buf.readUInt32BE(4);
      if (buf.length < total) break;
      const hlen = buf.readUInt32BE(0);
      sent.push({
        header: JSON.parse(buf.toString('utf8', 8, 8 + hlen)),
        payload: buf.subarray(8 + hlen, total),
      });
      buf = buf.subarray(total);
    }
  });
  return { client, stdout, sent };
}

const tick = () => new Promise((r) => setImmediate(r));

/** The hello of a helper with pid `pid` (every field the protocol names). */
function hello(pid = 1): object {
  return {
    event: 'hello',
    pid,
    main: 7,
    oom_kills: 0,
    isolated: true,
    sealed: true,
    uid: 0,
    channel: 'exec',
    channel_problem: null,
  };
}

describe('helper client framing', () => {
  it('matches responses to requests by id, in any order, with payloads split across chunks', async () => {
    const { client, stdout, sent } = harness();
    stdout.write(frame(hello()));
    const a = client.request('read', { path: 'a' }, undefined, 4_000_000);
    const b = client.request('write', { path: 'b' }, Buffer.from('data'));
    await tick();
    expect(sent.map((s) => [s.header.op, s.header.id, s.payload.toString()])).toEqual([
      ['read', 1, ''],
      ['write', 2, 'data'],
    ]);
    const big = Buffer.alloc(3_000_000, 7);
    const bytes = Buffer.concat([frame({ id: 2, ok: true, bytes: 4 }), frame({ id: 1, ok: true }, big)]);
    for (let i = 0; i < bytes.length; i += 65_536) stdout.write(bytes.subarray(i, i + 65_536));
    expect((await b).header.bytes).toBe(4);
    const ra = await a;
    expect(ra.payload.length).toBe(big.length);
    expect(ra.payload.every((x) => x === 7)).toBe(true);
  });

  it('resolves hello, turns error responses into HelperError with the code', async () => {
    const { client, stdout } = harness();
    stdout.write(frame(hello(42)));
    expect(await client.hello).toMatchObject({ pid: 42 });
    const p = client.request('read', { path: 'x' });
    stdout.write(frame({ id: 1, ok: false, error: { code: 'not_found', message: 'x: gone' } }));
    await expect(p).rejects.toEqual(new HelperError('not_found', 'x: gone'));
  });

  it('fails pending and later requests when the helper goes away or its stream is corrupted', async () => {
    const { client, stdout } = harness();
    let reason = '';
    client.onClose = (r) => (reason = r);
    stdout.write(frame(hello()));
    const p = client.request('read', { path: 'x' });
    const h = Buffer.from('not json');
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32BE(h.length, 0);
    stdout.write(Buffer.concat([prefix, h]));
    await expect(p).rejects.toBeInstanceOf(HelperClosed);
    expect(reason).toMatch(/not the protocol/);
    expect(client.closed).toBe(true);
    await expect(client.request('ping', {})).rejects.toBeInstanceOf(HelperClosed);
  });

  it('closes a helper that does not answer a request in its time, and only then', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    try {
      const { client, stdout } = harness();
      let reason = '';
      client.onClose = (r) => (reason = r);
      stdout.write(frame(hello()));
      const first = client.request('ping', {}, undefined, 0, 1_000);
      await vi.advanceTimersByTimeAsync(500);
      const second = client.request('ping', {}, undefined, 0, 1_000);
      second.catch(() => undefined);
      // Answered in time; the one timer, armed for the first, then waits for the second's deadline.
      stdout.write(frame({ id: 1, ok: true, pid: 5 }));
      expect((await first).header.pid).toBe(5);
      await vi.advanceTimersByTimeAsync(999);
      expect(client.closed).toBe(false);
      await vi.advanceTimersByTimeAsync(2);
      expect(client.closed).toBe(true);
      expect(reason).toBe('the helper did not answer within 1000 ms');
      await expect(second).rejects.toBeInstanceOf(HelperClosed);
    } finally {
      vi.useRealTimers();
    }
  });

  describe('refuses every frame it did not ask for, before buffering it', () => {
    /** A client past its hello with one pending request allowed `max` payload bytes. */
    function pendingClient(max = 1024) {
      const h = harness();
      h.stdout.write(frame(hello()));
      let reason = '';
      h.client.onClose = (r) => (reason = r);
      const pending = h.client.request('read', { path: 'x' }, undefined, max);
      pending.catch(() => undefined);
      return { ...h, pending, reason: () => reason };
    }
    const buffered = (c: HelperClient) => (c as unknown as { buffered: number }).buffered;
    const prefixOnly = (hlen: number, plen: number) => {
      const b = Buffer.alloc(8);
      b.writeUInt32BE(hlen, 0);
      b.writeUInt32BE(plen, 4);
      return b;
    };

    const cases: [string, (max: number) => Buffer, RegExp][] = [
      [
        'an answer to an id never sent',
        () => frame({ id: 99, ok: true }),
        /request 99, which is not pending/,
      ],
      ['an answer without an id', () => frame({ ok: true, exit_code: 0 }), /request null/],
      ['a second hello', () => frame(hello(2)), /not pending/],
      ['a header that is not an object', () => frame([1, 2] as unknown as object), /not a JSON object/],
      [
        "a payload over the request's cap",
        (max) => frame({ id: 1, ok: true }, Buffer.alloc(max + 1)),
        /payload for a request allowed 1024/,
      ],
      ['a 4 GiB header', () => prefixOnly(0xffffffff, 0), /4294967295-byte header/],
    ];
    for (const [what, bytes, why] of cases)
      it(`closes on ${what}, failing the pending request`, async () => {
        const { client, stdout, pending, reason } = pendingClient();
        stdout.write(bytes(1024));
        await expect(pending).rejects.toBeInstanceOf(HelperClosed);
        expect(client.closed).toBe(true);
        expect(reason()).toMatch(why);
        expect(buffered(client)).toBe(0);
      });

    it('closes on a 4 GiB payload as soon as its header arrives, and keeps nothing of what follows', async () => {
      const { client, stdout, pending } = pendingClient();
      const h = Buffer.from(JSON.stringify({ id: 1, ok: true }));
      const prefix = prefixOnly(h.length, 0xffffffff);
      stdout.write(Buffer.concat([prefix, h]));
      await expect(pending).rejects.toThrow(/4294967295-byte payload/);
      for (let i = 0; i < 64; i++) stdout.write(Buffer.alloc(1 << 20));
      await tick();
      expect(buffered(client)).toBe(0);
    });

    it('refuses a frame before the hello', async () => {
      const { client, stdout } = harness();
      stdout.write(frame({ id: 1, ok: true }));
      await expect(client.hello).rejects.toThrow(/first frame is not the hello/);
    });

    it('closes when a request is answered twice', async () => {
      const { client, stdout, pending, reason } = pendingClient();
      stdout.write(frame({ id: 1, ok: true }));
      await expect(pending).resolves.toMatchObject({ header: {} });
      stdout.write(frame({ id: 1, ok: true, exit_code: 0 }));
      await tick();
      expect(client.closed).toBe(true);
      expect(reason()).toMatch(/request 1, which is not pending/);
    });
  });
});

describe('output that is not the protocol', () => {
  it("says the engine's text when the exec could not start its program, not a frame length", async () => {
    const { client, stdout } = harness();
    const hello = client.hello.catch((e: Error) => e);
    // What an engine writes on the exec's stream when its program cannot run ('OCI ' read
    // as a length would be 1,329,809,696 bytes).
    stdout.write(
      'OCI runtime exec failed: exec failed: unable to start container process: exec: "python3": executable file not found in $PATH: unknown\r\n',
    );
    const e = await hello;
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).message).toContain('its output is text, not the protocol');
    expect((e as Error).message).toContain('executable file not found in $PATH');
    expect((e as Error).message).not.toMatch(/announced/);
  });

  it('still gives the length for binary garbage', async () => {
    const { client, stdout } = harness();
    const hello = client.hello.catch((e: Error) => e);
    stdout.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 2]));
    expect(((await hello) as Error).message).toMatch(/announced a 4294967295-byte header/);
  });
});
