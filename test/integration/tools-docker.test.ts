import { beforeAll, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import type { Sandbox } from '../../electron/engine/sandbox/sandbox.js';
import { createMemory } from '../../electron/engine/tools/memory.js';
import { createToolRegistry } from '../../electron/engine/tools/registry.js';
import type { ToolContext } from '../../electron/engine/tools/tool-call.js';
import { useTestProvider, describeDocker } from '../support/docker.js';
import { testTask } from '../support/tools-fixtures.js';

const task = testTask({
  tools: [
    'execute_shell',
    'read_file',
    'write_file',
    'list_dir',
    {
      name: 'echo_arg',
      command: "printf '%s' {text}",
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    },
    {
      name: 'weather',
      command: `python3 -c 'import json,sys; print(json.dumps({"result": {"city": sys.argv[1], "temp": 21}}))' {city}`,
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      writes_memory: { city: '/result/city', temp: '/result/temp' },
    },
  ],
  timeouts: { tools: { default: 30, execute_shell: 60 } },
});

// The tools on a real container: bash, not the memory sandbox's shell subset.
describeDocker('tools on a docker sandbox', () => {
  const provider = useTestProvider();
  let sandbox: Sandbox;
  let ctx: ToolContext;
  const tools = createToolRegistry(task);

  beforeAll(async () => {
    sandbox = await provider().create(defaultSandboxConfig());
    ctx = { sandbox, memory: createMemory(), task, hardTimeoutMs: 60_000, step: 1, callIndex: 0 };
  });

  it('passes custom-tool arguments to bash literally: quotes, spaces, $(), backticks, newlines', async () => {
    for (const text of ['it\'s "q"', '$(touch /workspace/pwned) `id` ; false', 'a\nb', '*', '~', '$HOME']) {
      const out = await tools.call('echo_arg', JSON.stringify({ text }), ctx);
      expect(out.result).toMatchObject({ ok: true, exit_code: 0, stdout: text });
    }
    const ls = await tools.call('list_dir', { path: '.' }, ctx);
    expect((ls.result.data as { entries: { name: string }[] }).entries.map((e) => e.name)).not.toContain(
      'pwned',
    );
  });

  it('writes memory from a custom tool’s JSON stdout', async () => {
    const out = await tools.call('weather', { city: "Bei'jing" }, ctx);
    expect(out.result.exit_code).toBe(0);
    expect(out.memoryWrites).toEqual([
      { key: 'city', before: null, after: "Bei'jing", writer: 'weather' },
      { key: 'temp', before: null, after: 21, writer: 'weather' },
    ]);
  });

  it('reads text, refuses binary without base64, lists entries, all against /workspace', async () => {
    await tools.call('write_file', { path: 'd/t.txt', content: 'hello\n' }, ctx);
    await tools.call(
      'write_file',
      { path: 'd/b.bin', content: Buffer.from([0, 255, 1]).toString('base64'), encoding: 'base64' },
      ctx,
    );
    expect((await tools.call('read_file', { path: 'd/t.txt' }, ctx)).result.stdout).toBe('hello\n');
    const bin = await tools.call('read_file', { path: '/workspace/d/b.bin' }, ctx);
    expect(bin.result.error?.code).toBe('binary_file');
    const b64 = await tools.call('read_file', { path: 'd/b.bin', encoding: 'base64' }, ctx);
    expect(b64.result.stdout).toBe('AP8B');
    const ls = await tools.call('list_dir', { path: 'd' }, ctx);
    expect((ls.result.data as { entries: unknown[] }).entries).toEqual([
      { name: 'b.bin', type: 'file', size: 3 },
      { name: 't.txt', type: 'file', size: 6 },
    ]);
    expect((await tools.call('read_file', { path: 'nope' }, ctx)).result.error?.code).toBe('not_found');
  });

  it('times execute_shell out at the call’s own timeout', async () => {
    const started = Date.now();
    const out = await tools.call('execute_shell', { command: 'sleep 30', timeout: 0.5 }, ctx);
    expect(out.result.error?.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  // Its cost is measured by the bench (tool_call_ms, harness_tool_ms), not timed here:
  // what would make it slow is more than one round trip into the container per call.
  it('makes one sandbox round trip per call, whatever the tool', async () => {
    const calls: string[] = [];
    const counted: Sandbox = new Proxy(sandbox, {
      get(target, key, receiver) {
        const v = Reflect.get(target, key, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          calls.push(String(key));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const counting = { ...ctx, sandbox: counted };
    for (const [name, args] of [
      ['execute_shell', '{"command":"true"}'],
      ['write_file', '{"path":"rt.txt","content":"x"}'],
      ['read_file', '{"path":"rt.txt"}'],
      ['list_dir', '{"path":"."}'],
      ['echo_arg', '{"text":"hi"}'],
    ] as const) {
      calls.length = 0;
      const out = await tools.call(name, args, counting);
      expect(out.result.ok, `${name}: ${JSON.stringify(out.result.error)}`).toBe(true);
      expect(calls, name).toHaveLength(1);
    }
  });
});
