import type { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import type { DockerSandboxProvider } from '../../electron/engine/sandbox/docker-provider.js';
import { HelperError } from '../../electron/engine/sandbox/helper-client.js';
import { protocolFields, type HelperCall } from '../../electron/engine/sandbox/helper-protocol.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { closeTestProvider, describeDocker, testProvider } from '../support/docker.js';

// One protocol, two sides: the helper's table (resources/sandbox/helper.py `OPS`, as its
// `describe` op answers it) and the host's (helper-protocol.ts) list the same operations with
// the same request and reply fields, optional ones alike.

// Both channels (the host's socket and the exec, helper-channel.ts) carry the same protocol.
for (const channel of ['socket', 'exec'] as const)
  describeDocker(
    `helper protocol over the ${channel}: both sides list the same operations and fields`,
    () => {
      let provider: DockerSandboxProvider;
      let sb: DockerSandbox;
      let call: HelperCall;

      beforeAll(async () => {
        provider = await testProvider(channel === 'exec' ? 'exec' : 'auto');
        sb = await provider.create(defaultSandboxConfig());
        expect(sb.channel.kind).toBe(channel);
        // The sandbox's private channel: what the engine itself sends, nothing wider.
        call = (sb as unknown as { call: HelperCall }).call.bind(sb);
      });

      afterAll(async () => {
        expect(await closeTestProvider(provider)).toEqual([]);
      });

      it('the helper describes every op the host knows, with the same fields, and a line of what it does', async () => {
        const { header } = await call('describe', {});
        const host = protocolFields();
        expect(Object.keys(header.ops).sort()).toEqual(Object.keys(host.ops).sort());
        for (const [name, fields] of Object.entries(host.ops)) {
          expect({ op: name, request: header.ops[name].request }).toEqual({
            op: name,
            request: fields.request,
          });
          expect({ op: name, reply: header.ops[name].reply }).toEqual({ op: name, reply: fields.reply });
          expect(header.ops[name].doc.length).toBeGreaterThan(10);
        }
        expect(header.hello).toEqual(host.hello);
      });

      it('refuses a request without a field the op requires before it runs, and an unknown op', async () => {
        const loose = call as unknown as (op: string, args: object) => Promise<unknown>;
        await expect(loose('exec', { command: 'touch /workspace/ran' })).rejects.toEqual(
          new HelperError('invalid_arguments', 'exec: missing timeout_ms, fresh, cap'),
        );
        await expect(loose('chmod_everything', {})).rejects.toMatchObject({
          code: 'invalid_arguments',
          message: "unknown op 'chmod_everything'",
        });
        const r = await sb.exec({ command: 'ls /workspace', timeoutMs: 10_000 });
        expect(r.stdout).toBe('');
      });

      it('a forged reply on the channel is a clear tool error, never a crash; the helper restarts and the sandbox goes on', async () => {
        // As if something wrote a frame into the helper's channel: an answer to the pending exec
        // whose fields do not add up (more kept output than its payload holds).
        const inner = sb as unknown as {
          connection: { output: Readable };
          helper: { nextId: number; pending: Map<number, unknown> };
        };
        const pending = sb.exec({ command: 'sleep 30', timeoutMs: 60_000 });
        await vi.waitFor(() => expect(inner.helper.pending.size).toBe(1));
        const header = Buffer.from(
          JSON.stringify({
            id: inner.helper.nextId - 1,
            ok: true,
            exit_code: 0,
            signal: null,
            stdout_len: 1e9,
            stdout_total: 1e9,
            stderr_total: 0,
            oom: false,
            oom_counter: true,
            duration_ms: 1,
          }),
        );
        const prefix = Buffer.alloc(8);
        prefix.writeUInt32BE(header.length, 0);
        inner.connection.output.emit('data', Buffer.concat([prefix, header]));
        const r = await pending;
        expect(r).toMatchObject({
          ok: false,
          error: {
            code: 'tool_failed',
            message: expect.stringMatching(/reply to exec is not the protocol \(stdout_len/),
          },
        });
        // The channel was not trusted after it: the next call finds a new helper.
        const next = await sb.exec({ command: 'echo hi', timeoutMs: 10_000 });
        expect(next.error?.code ?? 'ok').toMatch(/ok|session_restarted/);
        const after = await sb.exec({ command: 'echo hi', timeoutMs: 10_000 });
        expect(after).toMatchObject({ ok: true, exit_code: 0, stdout: 'hi\n' });
        // The restarted helper is back on the same channel.
        expect(sb.channel.kind).toBe(channel);
      });
    },
  );
