import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeFrame, FrameDecoder, type RawFrame } from '../../electron/engine/sandbox/frames.js';
import {
  channelFields,
  parseBridgeFrame,
  parseVerifierReport,
} from '../../electron/engine/sandbox/sandbox-channels.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { REPORT } from '../support/verifier-report.js';

// One schema for the three channels between the host and the programs in the sandbox (the
// helper, the agent bridge, the verifier runner), both sides held to it here without Docker:
// the Python programs are imported (imported, they only define) and their tables printed.

const DIR = resolve(PROJECT_ROOT, 'resources/sandbox');

/** The Python side's tables, as the programs define them. */
function pythonTables(): {
  helper: { ops: Record<string, { request: string[]; reply: string[] }>; hello: string[] };
  bridge: Record<string, { sender: string; fields: string[]; payload: boolean }>;
  verifier: { request: string[]; report: string[] };
  frame: string;
} {
  const script = [
    'import importlib.util, json, sys',
    'def load(name):',
    `    spec = importlib.util.spec_from_file_location(name, ${JSON.stringify(DIR)} + '/' + name + '.py')`,
    '    m = importlib.util.module_from_spec(spec)',
    '    spec.loader.exec_module(m)',
    '    return m',
    "h, b, v = load('helper'), load('bridge'), load('verifier')",
    'print(json.dumps({',
    "  'helper': {'ops': {n: {'request': list(o.request), 'reply': list(o.reply)} for n, o in h.OPS.items()},",
    "             'hello': list(h.HELLO)},",
    "  'bridge': {k: {'sender': f.sender, 'fields': f.fields.split(), 'payload': f.payload} for k, f in b.FRAMES.items()},",
    "  'verifier': {'request': v.REQUEST.split(), 'report': v.REPORT.split()},",
    "  'frame': b.frame({'kind': 'data', 'chan': 3}, b'\\x00hi').hex(),",
    '}))',
  ].join('\n');
  const r = spawnSync('python3', ['-I', '-c', script], { encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout) as ReturnType<typeof pythonTables>;
}

describe('the three sandbox channels: one schema, both sides (sandbox-channels.ts ~ the Python tables)', () => {
  const py = pythonTables();
  const ts = channelFields();

  it("the helper's OPS and hello list the ops and fields of helper-protocol.ts", () => {
    expect(Object.keys(py.helper.ops)).toEqual(Object.keys(ts.helper.ops));
    for (const [name, fields] of Object.entries(ts.helper.ops))
      expect({ op: name, ...py.helper.ops[name] }).toEqual({ op: name, ...fields });
    expect(py.helper.hello).toEqual(ts.helper.hello);
  });

  it("the bridge's FRAMES list the kinds, senders, fields and payloads of BRIDGE_FRAMES", () => {
    expect(py.bridge).toEqual(ts.bridge);
    expect(Object.keys(ts.bridge)).toContain('exit');
  });

  it("the verifier's REQUEST and REPORT list the fields of VerifierRequest and VerifierReport", () => {
    expect(py.verifier).toEqual(ts.verifier);
  });

  it("one framing: the prelude's frame is the host's encodeFrame byte for byte, and decodes back", () => {
    const host = encodeFrame({ kind: 'data', chan: 3 }, Buffer.from('\0hi'));
    expect(py.frame).toBe(host.toString('hex'));
    const got = new FrameDecoder('test', 1024, 1024).feed(Buffer.from(py.frame, 'hex'));
    expect(got).toEqual({ frames: [{ header: { kind: 'data', chan: 3 }, payload: Buffer.from('\0hi') }] });
  });
});

const raw = (header: Record<string, unknown>, payload = Buffer.alloc(0)): RawFrame => ({ header, payload });
const REPORT_WITH_REWARDS = {
  ...REPORT,
  reward_files: [{ name: 'reward.txt', text: '1' }],
};

describe('frames from the sandbox are parsed at the edge: hostile ones are clear errors, never a crash', () => {
  it('reads a well-formed bridge frame and verifier report', () => {
    expect(parseBridgeFrame(raw({ kind: 'exit', code: 0, signal: null }))).toEqual({
      ok: true,
      frame: { kind: 'exit', code: 0, signal: null },
      payload: Buffer.alloc(0),
    });
    const r = parseVerifierReport(raw(REPORT_WITH_REWARDS, Buffer.from('okE')), 100);
    expect(r.ok && [r.stdout.toString(), r.stderr.toString(), r.report.reward_files]).toEqual([
      'ok',
      'E',
      [{ name: 'reward.txt', text: '1' }],
    ]);
  });

  const bridgeBad: [string, RawFrame, RegExp][] = [
    ['an unknown kind', raw({ kind: 'shell', cmd: 'rm -rf /' }), /kind/],
    ['a kind only the host sends', raw({ kind: 'start', uid: 0 }), /kind/],
    ['no kind', raw({ chan: 1 }), /kind/],
    ['a __proto__ kind', raw(JSON.parse('{"kind":"__proto__"}') as Record<string, unknown>), /kind/],
    ['a wrong type', raw({ kind: 'open', chan: '1' }), /chan: .*number/],
    ['a missing field', raw({ kind: 'ready', pid: 3 }), /port/],
    ['a port out of range', raw({ kind: 'ready', port: 70000, pid: 3 }), /port/],
    ['a fractional channel', raw({ kind: 'data', chan: 1.5 }), /chan/],
    ['a huge exit code', raw({ kind: 'exit', code: 1e300, signal: null }), /code/],
    ['nested garbage', raw({ kind: 'error', message: { a: [{ b: {} }] } }), /message/],
    [
      'a payload on a frame without one',
      raw({ kind: 'open', chan: 1 }, Buffer.from('x')),
      /carries a payload/,
    ],
  ];
  for (const [what, frame, why] of bridgeBad)
    it(`a bridge frame with ${what}: protocol_error naming the field`, () => {
      const r = parseBridgeFrame(frame);
      expect(r).toMatchObject({
        ok: false,
        error: { code: 'protocol_error', message: expect.stringMatching(why) },
      });
    });

  it('a prototype-polluting header changes nothing outside it', () => {
    const polluted = JSON.parse(
      '{"kind":"exit","code":0,"signal":null,"__proto__":{"polluted":true}}',
    ) as Record<string, unknown>;
    const r = parseBridgeFrame(raw(polluted));
    expect(r.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(r.ok && Object.keys(r.frame)).toEqual(['code', 'signal', 'kind']);
  });

  const reportBad: [string, RawFrame, RegExp][] = [
    ['a missing field', raw({ ...REPORT, killed: undefined }), /killed/],
    ['a string exit code', raw({ ...REPORT, exit_code: '0' }), /exit_code/],
    ['an exit code out of range', raw({ ...REPORT, exit_code: 256 }), /exit_code/],
    [
      'more kept stdout than its payload',
      raw({ ...REPORT, stdout_len: 10 }, Buffer.from('ok')),
      /stdout_len 10/,
    ],
    ['totals less than the output', raw({ ...REPORT, stdout_total: 0 }, Buffer.from('okE')), /totals/],
    [
      'output beyond the cap',
      raw({ ...REPORT, stdout_len: 200, stdout_total: 200 }, Buffer.alloc(201)),
      /cap/,
    ],
    [
      'a huge array of reward files',
      raw({
        ...REPORT,
        reward_files: Array.from({ length: 100_000 }, () => ({ name: 'reward.txt', text: '1' })),
      }),
      /reward_files/,
    ],
    [
      'a reward file of another name',
      raw({ ...REPORT, reward_files: [{ name: '../etc', text: '' }] }),
      /name/,
    ],
    ['nested garbage', raw({ ...REPORT, timeout: [[[{}]]] }), /timeout/],
  ];
  for (const [what, frame, why] of reportBad)
    it(`a verifier report with ${what}: protocol_error naming the field`, () => {
      const r = parseVerifierReport(frame, 100);
      expect(r).toMatchObject({
        ok: false,
        error: { code: 'protocol_error', message: expect.stringMatching(why) },
      });
    });

  it('bytes that are not frames end the channel with a clear fault, and it stays ended', () => {
    const d = new FrameDecoder('the agent bridge', 1024, 1024);
    const huge = Buffer.alloc(8);
    huge.writeUInt32BE(0xffffffff, 0);
    expect(d.feed(huge)).toMatchObject({
      fault: {
        code: 'protocol_error',
        message: expect.stringMatching(/agent bridge.*4294967295-byte header/),
      },
    });
    expect(d.feed(encodeFrame({ kind: 'stop' }))).toHaveProperty('fault');
    const notJson = Buffer.concat([Buffer.from([0, 0, 0, 2, 0, 0, 0, 0]), Buffer.from('{x')]);
    expect(new FrameDecoder('x', 1024, 1024).feed(notJson)).toMatchObject({
      fault: { message: expect.stringMatching(/not JSON/) },
    });
    const array = encodeFrame({}).subarray(0, 8);
    array.writeUInt32BE(2, 0);
    expect(new FrameDecoder('x', 1024, 1024).feed(Buffer.concat([array, Buffer.from('[]')]))).toMatchObject({
      fault: { message: expect.stringMatching(/not a JSON object/) },
    });
  });

  it('frames split anywhere come out whole, in order', () => {
    const bytes = Buffer.concat([
      encodeFrame({ kind: 'open', chan: 1 }),
      encodeFrame({ kind: 'data', chan: 1 }, Buffer.from('abc')),
    ]);
    const d = new FrameDecoder('x', 1024, 1024);
    const out: unknown[] = [];
    for (const b of bytes) {
      const got = d.feed(Buffer.from([b]));
      if ('frames' in got) out.push(...got.frames.map((f) => [f.header, f.payload.toString()]));
    }
    expect(out).toEqual([
      [{ kind: 'open', chan: 1 }, ''],
      [{ kind: 'data', chan: 1 }, 'abc'],
    ]);
  });
});
