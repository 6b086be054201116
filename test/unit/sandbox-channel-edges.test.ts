import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { DockerEngine, ExecStreams } from '../../electron/engine/docker/client.js';
import { runVerifierExec } from '../../electron/engine/sandbox/docker-verifier.js';
import { encodeFrame, FrameDecoder } from '../../electron/engine/sandbox/frames.js';
import { startInsideAgent } from '../../electron/engine/sandbox/inside-agent-bridge.js';
import type { InsideAgentRequest } from '../../electron/engine/sandbox/sandbox.js';
import { REPORT } from '../support/verifier-report.js';

// The bridge's frames and the verifier runner's report cross from the sandbox into the engine:
// forged ones (code in the sandbox can be anything) are clear errors where they enter, never
// a crash, and the next agent or verification on the same engine goes on as usual. The
// sandbox side is played here by the test (no Docker): what it writes is what a hostile
// program there could write.

/** An engine whose every exec is played by `program` (its stdin frames in, its stdout out). */
function engine(program: (stdin: PassThrough, stdout: PassThrough) => void): DockerEngine {
  const fake = {
    exec(): Promise<ExecStreams> {
      const stdin = new PassThrough();
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      // The exec ends when its program's stdout does.
      stdout.on('finish', () => stderr.end());
      program(stdin, stdout);
      return Promise.resolve({
        stdin,
        stdout,
        stderr,
        close: () => {
          stdout.end();
          stderr.end();
        },
        exitCode: () => Promise.resolve(0),
      });
    },
    isRunning: () => Promise.resolve(true),
  };
  return fake as unknown as DockerEngine;
}

/** Calls `then` with each frame the host sends on `stdin`. */
function onFrames(stdin: PassThrough, then: (header: Record<string, unknown>) => void): void {
  const d = new FrameDecoder('host', 1 << 20, 1 << 20);
  stdin.on('data', (c: Buffer) => {
    const got = d.feed(c);
    if ('frames' in got) for (const f of got.frames) then(f.header);
  });
}

const AGENT: InsideAgentRequest = {
  command: 'agent',
  env: {},
  homeFiles: {},
  clearHome: false,
  agentFilesHash: null,
  port: 0,
  connect: () => new PassThrough(),
  onOutput: () => undefined,
};

/** A bridge that answers the start with `reply` (raw bytes: a frame or not), and a stop with the agent's exit. */
const bridge = (reply: Buffer) =>
  engine((stdin, stdout) =>
    onFrames(stdin, (h) => {
      if (h.kind === 'start') stdout.write(reply);
      if (h.kind === 'stop') stdout.write(encodeFrame({ kind: 'exit', code: 0, signal: null }));
    }),
  );

/** A frame whose header is `json` as written (a key JSON.stringify would not write). */
function rawFrame(json: string): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(Buffer.byteLength(json), 0);
  return Buffer.concat([head, Buffer.from(json)]);
}

describe('the agent bridge: its frames are parsed where they enter the engine', () => {
  const hostile: [string, Buffer, RegExp][] = [
    [
      'a ready frame with a port of the wrong type',
      encodeFrame({ kind: 'ready', port: '80', pid: 1 }),
      /port/,
    ],
    ['a frame of a kind only the host sends', encodeFrame({ kind: 'start', uid: 0 }), /kind/],
    ['a __proto__ kind', rawFrame('{"kind":"__proto__","__proto__":{"polluted":1}}'), /kind/],
    ['nested garbage', encodeFrame({ kind: 'error', message: [[{ a: {} }]] }), /message/],
    ['lengths no frame has', Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]), /4294967295-byte header/],
    ['text where frames belong', Buffer.from('OCI runtime exec failed: no such file\n'), /header/],
  ];
  for (const [what, reply, why] of hostile)
    it(`${what}: the start fails naming what was wrong; the next agent starts`, async () => {
      const e = await startInsideAgent(bridge(reply), 'c0ffee', AGENT).catch((x: unknown) => x);
      expect(e).toMatchObject({
        code: 'sandbox_failed',
        message: expect.stringMatching(/cannot start the agent inside the sandbox.*not the protocol/s),
      });
      expect((e as Error).message).toMatch(why);
      const ok = await startInsideAgent(
        bridge(encodeFrame({ kind: 'ready', port: 4000, pid: 7 })),
        'c0ffee',
        AGENT,
      );
      expect(ok.port).toBe(4000);
      await ok.stop();
    });

  it('a forged frame after the start stops the agent (its exit is a kill), nothing thrown', async () => {
    const run = await startInsideAgent(
      engine((stdin, stdout) =>
        onFrames(stdin, (h) => {
          if (h.kind !== 'start') return;
          stdout.write(encodeFrame({ kind: 'ready', port: 4001, pid: 7 }));
          stdout.write(encodeFrame({ kind: 'exit', code: 'zero', signal: null }));
        }),
      ),
      'c0ffee',
      AGENT,
    );
    await expect(run.exited).resolves.toEqual({ code: null, signal: 'SIGKILL' });
  });
});

/** A verifier runner that reports `reply` once it has its request. */
const runner = (reply: Buffer) =>
  engine((stdin, stdout) =>
    onFrames(stdin, (h) => {
      expect(h).toMatchObject({ command: 'true', timeout_ms: 1000, cap: 100, uid: 1000 });
      stdout.end(reply);
    }),
  );

describe('the verifier runner: its report is parsed where it enters the engine', () => {
  const hostile: [string, Buffer, RegExp][] = [
    [
      'a missing field',
      encodeFrame({ ...REPORT, killed: undefined }, Buffer.from('ok')),
      /not the protocol.*killed/,
    ],
    ['a field of the wrong type', encodeFrame({ ...REPORT, timeout: 'no' }, Buffer.from('ok')), /timeout/],
    [
      'more kept output than it carries',
      encodeFrame({ ...REPORT, stdout_len: 50 }, Buffer.from('ok')),
      /stdout_len 50/,
    ],
    [
      'output beyond the cap',
      encodeFrame({ ...REPORT, stdout_len: 101, stdout_total: 101 }, Buffer.alloc(101)),
      /cap|101-byte/,
    ],
    [
      'a huge array',
      encodeFrame(
        { ...REPORT, reward_files: Array(1000).fill({ name: 'reward.txt', text: '1' }) },
        Buffer.from('ok'),
      ),
      /reward_files/,
    ],
    [
      'the old JSON line',
      Buffer.from(JSON.stringify({ ...REPORT, stdout: 'b2s=' }) + '\n'),
      /did not report/,
    ],
  ];
  for (const [what, reply, why] of hostile)
    it(`${what}: a clear sandbox_failed; the next verification reads its report`, async () => {
      const e = await runVerifierExec(
        runner(reply),
        'c0ffee',
        { command: 'true', timeoutMs: 1000 },
        100,
      ).catch((x: unknown) => x);
      expect(e).toMatchObject({ code: 'sandbox_failed', message: expect.stringMatching(why) });
      const ok = await runVerifierExec(
        runner(encodeFrame(REPORT, Buffer.from('okE'))),
        'c0ffee',
        { command: 'true', timeoutMs: 1000 },
        100,
      );
      expect(ok).toMatchObject({ exitCode: 0, stdout: 'ok', stderr: 'E', uid: 1000, killed: 0 });
    });
});
