import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HelperClient, HelperClosed, HelperError } from '../../electron/engine/sandbox/helper-client.js';
import { HELPER_OPS, parseReply, protocolFields } from '../../electron/engine/sandbox/helper-protocol.js';

// Replies come from inside a sandbox that holds hostile code: a forged or malformed one is
// an error value with a code and a message that says what was wrong, never a crash, and the
// channel it came on is not trusted after it.

function frame(header: unknown, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(h.length, 0);
  prefix.writeUInt32BE(payload.length, 4);
  return Buffer.concat([prefix, h, payload]);
}

const HELLO = {
  event: 'hello',
  pid: 9,
  main: 7,
  oom_kills: null,
  isolated: true,
  sealed: true,
  uid: 0,
  channel: 'socket',
  channel_problem: null,
};
const HASH = 'a'.repeat(64);
const EXEC = { command: 'true', timeout_ms: 1000, fresh: false, cap: 1024 };
const EXEC_REPLY = {
  ok: true,
  exit_code: 0,
  signal: null,
  stdout_len: 2,
  stdout_total: 2,
  stderr_total: 0,
  oom: false,
  oom_counter: true,
  duration_ms: 0.4,
};

function client() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  stdin.resume();
  const c = new HelperClient(stdin, stdout);
  let reason = '';
  c.onClose = (r) => (reason = r);
  stdout.write(frame(HELLO));
  return { client: c, stdout, reason: () => reason };
}

describe('helper replies are checked against their op', () => {
  it('reads a well-formed exec reply with its payload', async () => {
    const { client: c, stdout } = client();
    const p = c.request('exec', EXEC, undefined, 4096);
    stdout.write(frame({ id: 1, ...EXEC_REPLY }, Buffer.from('ok')));
    const r = await p;
    expect(r.header.exit_code).toBe(0);
    expect(r.payload.toString()).toBe('ok');
    expect(c.closed).toBe(false);
  });

  it("checks exec's usual reply by hand exactly as its schema does", () => {
    const { reply, usual } = HELPER_OPS.exec;
    if (!usual) throw new Error('exec has no hand check of its usual reply');
    const values: unknown[] = [0, 1, 137, -1, 0.5, 2 ** 53, 1e300, null, true, false, 'x', '1', {}, [], -0];
    const headers: Record<string, unknown>[] = [{ id: 3, ...EXEC_REPLY }];
    for (const key of Object.keys(EXEC_REPLY)) {
      const { [key]: _gone, ...without } = EXEC_REPLY as Record<string, unknown>;
      headers.push(without);
      for (const v of values) headers.push({ ...EXEC_REPLY, [key]: v });
    }
    headers.push(
      { ...EXEC_REPLY, exit_code: null, signal: 9 },
      { ...EXEC_REPLY, extra: 'kept out' },
      { ...EXEC_REPLY, error: { code: 'timeout', message: 'm' } },
      { ...EXEC_REPLY, error: null },
      { ...EXEC_REPLY, session: { cwd: '/w', env: { A: 'b' } } },
    );
    let recognised = 0;
    for (const h of headers) {
      const byHand = usual(h);
      const bySchema = reply.safeParse(h);
      if (byHand !== undefined) {
        recognised++;
        expect(bySchema.success, JSON.stringify(h)).toBe(true);
        expect(byHand).toEqual(bySchema.data);
      } else if (bySchema.success) {
        // Only what the hand check leaves to the schema on purpose: an error or a session.
        expect('error' in h || 'session' in h, JSON.stringify(h)).toBe(true);
      }
    }
    expect(usual({ id: 3, ...EXEC_REPLY })).toEqual(reply.parse(EXEC_REPLY));
    expect(recognised).toBeGreaterThan(10);
  });

  const forged: [string, Record<string, unknown>, Buffer, RegExp][] = [
    ['a field of the wrong type', { ...EXEC_REPLY, exit_code: 'zero' }, Buffer.from('ok'), /exit_code/],
    ['a missing field', { ...EXEC_REPLY, stdout_len: undefined }, Buffer.from('ok'), /stdout_len/],
    ['a huge number', { ...EXEC_REPLY, stdout_total: 1e300 }, Buffer.from('ok'), /stdout_total/],
    [
      'lengths beyond its payload',
      { ...EXEC_REPLY, stdout_len: 4000 },
      Buffer.from('ok'),
      /more than the 2-byte payload/,
    ],
    [
      'a session with a non-string env',
      { ...EXEC_REPLY, session: { cwd: '/', env: { A: 1 } } },
      Buffer.from('ok'),
      /session\.env\.A/,
    ],
    ['neither ok nor an error', { exit_code: 0 }, Buffer.alloc(0), /ok: expected true or false/],
    [
      'an error without a code',
      { ok: false, error: { message: 'x' } },
      Buffer.alloc(0),
      /error reply to exec.*code/,
    ],
    [
      'an error code that is not a code',
      { ok: false, error: { code: 'x y\n', message: 'm' } },
      Buffer.alloc(0),
      /code/,
    ],
  ];
  for (const [what, header, payload, why] of forged)
    it(`refuses ${what}: HelperError protocol_error, the channel closed, other requests failed`, async () => {
      const { client: c, stdout, reason } = client();
      const p = c.request('exec', EXEC, undefined, 4096);
      const other = c.request('ping', {});
      stdout.write(frame({ id: 1, ...header }, payload));
      const e: unknown = await p.catch((x: unknown) => x);
      expect(e).toBeInstanceOf(HelperError);
      expect(e).toMatchObject({ code: 'protocol_error', message: expect.stringMatching(why) });
      expect((e as Error).message).toMatch(/reinstall stepbox/);
      await expect(other).rejects.toBeInstanceOf(HelperClosed);
      expect(c.closed).toBe(true);
      expect(reason()).toMatch(/reply to exec is not the protocol/);
    });

  it('keeps an error the helper answered as an error with its code, and bounds its message', async () => {
    const { client: c, stdout } = client();
    const p = c.request('read', { path: 'x' }, undefined, 10);
    stdout.write(frame({ id: 1, ok: false, error: { code: 'not_found', message: 'm'.repeat(1_000_000) } }));
    const e: unknown = await p.catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'not_found' });
    expect((e as Error).message.length).toBeLessThan(4100);
    expect(c.closed).toBe(false);
  });

  it('refuses a hello that is not one (a field missing or of the wrong type)', async () => {
    for (const bad of [
      { event: 'hello', pid: 1 },
      { ...HELLO, isolated: 'yes' },
      { ...HELLO, channel: 'pipe' },
    ]) {
      const stdout = new PassThrough();
      const c = new HelperClient(new PassThrough(), stdout);
      stdout.write(frame(bad));
      await expect(c.hello).rejects.toThrow(/hello is not the protocol/);
      expect(c.closed).toBe(true);
    }
  });

  it('checks replies that must add up to their request and payload', () => {
    const blobs = { hashes: [HASH, HASH] };
    expect(parseReply('blobs', blobs, { ok: true, sizes: [1] }, Buffer.alloc(1))).toMatchObject({
      kind: 'violation',
      error: { code: 'protocol_error', message: expect.stringMatching(/1 sizes for 2 blobs/) },
    });
    expect(parseReply('blobs', blobs, { ok: true, sizes: [1, 1] }, Buffer.alloc(3))).toMatchObject({
      kind: 'violation',
      error: { message: expect.stringMatching(/add up to 2, the payload has 3/) },
    });
    expect(parseReply('blobs', blobs, { ok: true, sizes: [1, 2] }, Buffer.alloc(3)).kind).toBe('ok');
    const scan = { ok: true, tree_hash: HASH, skipped: [], walk: 'full', base: '1.1' };
    expect(parseReply('scan', {}, scan, Buffer.alloc(0))).toMatchObject({
      kind: 'violation',
      error: { message: expect.stringMatching(/neither entries nor a whole delta/) },
    });
    expect(
      parseReply('scan', {}, { ...scan, entries: [['a', 'file', 0o644, 1, 'not-a-hash']] }, Buffer.alloc(0)),
    ).toMatchObject({ kind: 'violation', error: { message: expect.stringMatching(/sha256/) } });
    expect(
      parseReply('scan', {}, { ...scan, entries: [], inline: [[HASH, 5]] }, Buffer.alloc(4)),
    ).toMatchObject({
      kind: 'violation',
      error: { message: expect.stringMatching(/inline blobs are more/) },
    });
    expect(parseReply('get_session', {}, { ok: true, cwd: '/w', env: {} }, Buffer.alloc(1))).toMatchObject({
      kind: 'violation',
      error: { message: expect.stringMatching(/carries a payload/) },
    });
    expect(
      parseReply('restore', { staged: [], tree_hash: HASH }, { ok: true, need: [HASH] }, Buffer.alloc(0)),
    ).toMatchObject({ kind: 'ok', response: { header: { need: [HASH] } } });
  });

  it('lists every op with its request and reply fields (what the helper table must match)', () => {
    const fields = protocolFields();
    expect(Object.keys(fields.ops)).toEqual(Object.keys(HELPER_OPS));
    expect(fields.ops.exec).toEqual({
      request: ['command', 'timeout_ms', 'fresh', 'cap'],
      reply: [
        'exit_code',
        'signal',
        'stdout_len',
        'stdout_total',
        'stderr_total',
        'oom',
        'oom_counter',
        'duration_ms',
        'error?',
        'session?',
      ],
    });
    expect(fields.ops.restore.reply).toEqual([
      'need?',
      'tree_hash?',
      'written?',
      'removed?',
      'phases_ms?',
      'base?',
      'reread?',
    ]);
    expect(fields.hello).toEqual([
      'pid',
      'main',
      'oom_kills',
      'isolated',
      'sealed',
      'uid',
      'channel',
      'channel_problem',
    ]);
  });
});
