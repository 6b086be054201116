// Closing a terminal whose container stopped (the episode ended) is normal: the hangup exec
// gets Docker's 404/409, and close resolves quietly instead of failing `terminal.close`.
import { PassThrough } from 'node:stream';
import type Docker from 'dockerode';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openTerminal } from '../../electron/engine/docker/terminal.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { createClient, createMemoryTransport } from '../../shared/contract/index.js';
import { fakePorts } from '../support/contract-fakes.js';
import { value } from '../support/contract.js';

const hook = (key: string, pid: number) =>
  `\u001b]6973;${key};${pid};0;${Buffer.from('/workspace').toString('base64')};;\u0007`;

function stoppedDocker(status: number) {
  const stream = new PassThrough();
  let execs = 0;
  const opened: { key?: string } = {};
  const container = {
    exec: async (options: { Env?: string[] }) => {
      execs += 1;
      // The terminal's key, as its shell has it (in the hook).
      opened.key ??= /6973;([0-9a-f]+);/.exec(options.Env?.join('\n') ?? '')?.[1];
      if (execs > 1) {
        throw Object.assign(new Error(`(HTTP code ${status}) container stopped/paused`), {
          statusCode: status,
        });
      }
      return {
        start: async () => stream,
        resize: async () => undefined,
        inspect: async () => ({ ExitCode: null }),
      };
    },
  };
  return { docker: { getContainer: () => container } as unknown as Docker, stream, opened };
}

describe('closing a terminal of a stopped container', () => {
  afterEach(() => vi.restoreAllMocks());

  for (const status of [404, 409]) {
    it(`treats HTTP ${status} on the hangup as closed: no error, nothing logged`, async () => {
      const { docker, stream, opened } = stoppedDocker(status);
      const written: string[] = [];
      vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
        written.push(String(s));
        return true;
      });
      const terminal = await openTerminal('c0ffee', { docker, cols: 80, rows: 24 });
      const pidSeen = new Promise<void>((resolve) => stream.once('data', () => setImmediate(resolve)));
      expect(opened.key).toMatch(/^[0-9a-f]{32}$/);
      stream.write(hook(opened.key ?? 'none', 42));
      await pidSeen;
      await expect(terminal.close()).resolves.toBeUndefined();
      expect(written.join('')).not.toMatch(/hangup|HTTP code/);
    });
  }
});

describe("the services' error log", () => {
  afterEach(() => vi.restoreAllMocks());

  it('says an unexpected error as a sentence, never its stack', async () => {
    const { ports } = fakePorts();
    ports.harness.candidates = async () => {
      throw new Error('(HTTP code 409) container stopped/paused');
    };
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
      written.push(String(s));
      return true;
    });
    const client = createClient(createMemoryTransport(createAppServices(ports)));
    const started = value(
      await client.episode.start({ task: { kind: 'sample', id: 'hello' }, agent: 'manual' }),
    );
    const failed = await client.episode.candidates({
      id: started.branch,
      step: 0,
      actions: [{ content: 'x' }],
    });
    expect(failed).toMatchObject({ ok: false, error: { code: 'internal' } });
    const log = written.join('');
    expect(log).toContain('[services] error: episode.candidates: (HTTP code 409) container stopped/paused');
    expect(log).not.toMatch(/\n\s+at /);
  });
});
