import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DockerSandbox } from '../../electron/engine/sandbox/docker-sandbox.js';
import type { DockerSandboxProvider } from '../../electron/engine/sandbox/docker-provider.js';
import { HelperError } from '../../electron/engine/sandbox/helper-client.js';
import { protocolFields, type HelperCall } from '../../electron/engine/sandbox/helper-protocol.js';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { closeTestProvider, describeDocker, testProvider } from '../support/docker.js';

// One protocol, two sides: the helper's table (resources/sandbox/helper.py `OPS`, as its
// `describe` op answers it) and the host's (helper-protocol.ts) list the same operations with
// the same request and reply fields, optional ones alike.

describeDocker('helper protocol: both sides list the same operations and fields', () => {
  let provider: DockerSandboxProvider;
  let sb: DockerSandbox;
  let call: HelperCall;

  beforeAll(async () => {
    provider = await testProvider();
    sb = await provider.create(defaultSandboxConfig());
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
      expect({ op: name, request: header.ops[name].request }).toEqual({ op: name, request: fields.request });
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
});
