import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '../../electron/engine/tools/registry.js';
import { SandboxFailure, type ExecRequest, type Sandbox } from '../../electron/engine/sandbox/sandbox.js';
import { memoryContext, testTask } from '../support/tools-fixtures.js';

describe('tool registry: built-ins', () => {
  it('lists the enabled tools in OpenAI format, in the task order', () => {
    const task = testTask({
      tools: ['read_file', 'execute_shell', { name: 'lookup', command: 'echo {q}', description: 'Look up' }],
    });
    const defs = createToolRegistry(task).definitions();
    expect(defs.map((d) => d.function.name)).toEqual(['read_file', 'execute_shell', 'lookup']);
    expect(defs[1]).toMatchObject({
      type: 'function',
      function: { name: 'execute_shell', parameters: { type: 'object', required: ['command'] } },
    });
    expect(defs[2].function.description).toBe('Look up');
  });

  it('runs execute_shell with arguments given as a JSON string, keeping the session', async () => {
    const task = testTask();
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    await tools.call('execute_shell', '{"command": "mkdir -p d && cd d"}', ctx);
    const out = await tools.call('execute_shell', JSON.stringify({ command: 'pwd' }), ctx);
    expect(out.result).toMatchObject({ ok: true, exit_code: 0, stdout: '/workspace/d\n' });
    expect(out.faults).toEqual([]);
    expect(out.memoryWrites).toEqual([]);
  });

  it('names the field and what was expected for invalid arguments', async () => {
    const task = testTask();
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    const wrongType = await tools.call('execute_shell', { command: 3 }, ctx);
    expect(wrongType.result.ok).toBe(false);
    expect(wrongType.result.error?.code).toBe('invalid_arguments');
    expect(wrongType.result.error?.message).toContain('"command" must be a string, not a number');
    const typo = await tools.call('execute_shell', { comand: 'ls' }, ctx);
    expect(typo.result.error?.message).toContain('"command" is missing: give it a string');
    expect(typo.result.error?.message).toContain('"comand" is not an argument — did you mean "command"?');
    const badJson = await tools.call('execute_shell', '{"command": ', ctx);
    expect(badJson.result.error?.code).toBe('invalid_arguments');
    expect(badJson.result.error?.message).toContain('not valid JSON');
    const notObject = await tools.call('read_file', '"x.py"', ctx);
    expect(notObject.result.error?.message).toContain('expected a JSON object, got a string');
    const badEnum = await tools.call('read_file', { path: 'x', encoding: 'latin1' }, ctx);
    expect(badEnum.result.error?.message).toContain('"encoding" must be one of "utf8", "base64"');
    const noValue = await tools.call('memory_write', { key: 'k' }, ctx);
    expect(noValue.result.error?.message).toContain('"value" is missing');
  });

  it('answers an unknown tool with the enabled tools and a did-you-mean', async () => {
    const task = testTask({ tools: ['execute_shell', 'read_file'] });
    const out = await createToolRegistry(task).call('exec_shell', {}, await memoryContext(task));
    expect(out.result.error?.code).toBe('unknown_tool');
    expect(out.result.error?.message).toContain('did you mean "execute_shell"?');
    expect(out.result.error?.message).toContain('enabled tools: execute_shell, read_file');
    expect(createToolRegistry(task).has('write_file')).toBe(false);
  });

  it('uses the smallest of the call timeout, the per-tool setting and the hard step timeout', async () => {
    const seen: number[] = [];
    const task = testTask({ timeouts: { tools: { default: 30, execute_shell: 20 } } });
    const ctx = await memoryContext(task);
    const recording: Sandbox = Object.assign(Object.create(ctx.sandbox), {
      exec: (req: ExecRequest) => {
        seen.push(req.timeoutMs);
        return ctx.sandbox.exec(req);
      },
    });
    const tools = createToolRegistry(task);
    await tools.call('execute_shell', { command: 'true' }, { ...ctx, sandbox: recording });
    await tools.call('execute_shell', { command: 'true', timeout: 2.5 }, { ...ctx, sandbox: recording });
    await tools.call(
      'execute_shell',
      { command: 'true', timeout: 50 },
      { ...ctx, sandbox: recording, hardTimeoutMs: 7000 },
    );
    expect(seen).toEqual([20_000, 2500, 7000]);
    const fast = testTask({ timeouts: { tools: { execute_shell: 0.2 } } });
    const r = await createToolRegistry(fast).call(
      'execute_shell',
      { command: 'sleep 5' },
      await memoryContext(fast),
    );
    expect(r.result.error?.code).toBe('timeout');
    expect(r.result.duration_ms).toBeLessThan(2000);
  });

  it('reads text, refuses binary without base64, and reads base64 on request', async () => {
    const task = testTask();
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    await ctx.sandbox.writeFile('notes.txt', new TextEncoder().encode('héllo\n'));
    await ctx.sandbox.writeFile('img.bin', Uint8Array.from([0x89, 0x50, 0xff, 0x00]));
    const txt = await tools.call('read_file', { path: 'notes.txt' }, ctx);
    expect(txt.result).toMatchObject({
      ok: true,
      stdout: 'héllo\n',
      data: { path: '/workspace/notes.txt', size: 7, encoding: 'utf8' },
    });
    const bin = await tools.call('read_file', { path: '/workspace/img.bin' }, ctx);
    expect(bin.result.error?.code).toBe('binary_file');
    expect(bin.result.error?.message).toContain('"encoding": "base64"');
    const b64 = await tools.call('read_file', { path: 'img.bin', encoding: 'base64' }, ctx);
    expect(b64.result.stdout).toBe(Buffer.from([0x89, 0x50, 0xff, 0x00]).toString('base64'));
    expect((await tools.call('read_file', { path: 'nope' }, ctx)).result.error?.code).toBe('not_found');
    expect((await tools.call('read_file', { path: '.' }, ctx)).result.error?.code).toBe('is_directory');
  });

  it('caps read_file output at the task output limit in bytes, without splitting a character', async () => {
    const task = testTask({ sandbox: { limits: { output: 11 } } });
    const ctx = await memoryContext(task);
    await ctx.sandbox.writeFile('long.txt', new TextEncoder().encode('ééééééé'));
    const out = await createToolRegistry(task).call('read_file', { path: 'long.txt' }, ctx);
    expect(out.result).toMatchObject({
      ok: true,
      stdout: 'ééééé',
      truncated: { stdout: true, stderr: false },
      bytes: 14,
    });
  });

  it('writes text and base64 content and lists directories', async () => {
    const task = testTask();
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    const w = await tools.call('write_file', { path: 'src/a.py', content: 'print(1)\n' }, ctx);
    expect(w.result).toMatchObject({ ok: true, bytes: 9, data: { path: '/workspace/src/a.py', bytes: 9 } });
    await tools.call(
      'write_file',
      { path: 'src/b.bin', content: Buffer.from([1, 2, 255]).toString('base64'), encoding: 'base64' },
      ctx,
    );
    const raw = await ctx.sandbox.readFile('src/b.bin');
    expect(raw.ok && [...raw.value]).toEqual([1, 2, 255]);
    const bad = await tools.call(
      'write_file',
      { path: 'x', content: 'not base64!', encoding: 'base64' },
      ctx,
    );
    expect(bad.result.error?.message).toContain('content: expected base64');
    const ls = await tools.call('list_dir', { path: 'src' }, ctx);
    expect(ls.result.data).toEqual({
      path: '/workspace/src',
      entries: [
        { name: 'a.py', type: 'file', size: 9 },
        { name: 'b.bin', type: 'file', size: 3 },
      ],
    });
    expect(ls.result.stdout).toMatch(/file\s+9\s+a\.py\n/);
    expect((await tools.call('list_dir', { path: 'src/a.py' }, ctx)).result.error?.code).toBe(
      'not_a_directory',
    );
  });

  it('reads and writes memory, reporting each write with its writer', async () => {
    const task = testTask({ memory: { initial: { city: 'Beijing' } } });
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    expect((await tools.call('memory_read', { key: 'city' }, ctx)).result.stdout).toBe('"Beijing"');
    const missing = await tools.call('memory_read', { key: 'cty' }, ctx);
    expect(missing.result.error?.code).toBe('not_found');
    expect(missing.result.error?.message).toContain('did you mean "city"?');
    const w = await tools.call('memory_write', '{"key": "weather", "value": {"rain": true}}', ctx);
    expect(w.memoryWrites).toEqual([
      { key: 'weather', before: null, after: { rain: true }, writer: 'memory_write' },
    ]);
    expect((await tools.call('memory_read', { key: 'weather' }, ctx)).result.data).toEqual({
      key: 'weather',
      value: { rain: true },
    });
  });

  it('never throws: a lost sandbox is sandbox_lost, a bug is internal_error', async () => {
    const task = testTask();
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    await ctx.sandbox.destroy();
    const lost = await tools.call('execute_shell', { command: 'true' }, ctx);
    expect(lost.result).toMatchObject({ ok: false, error: { code: 'sandbox_lost' } });
    const broken = Object.assign(Object.create(ctx.sandbox), {
      exec: () => Promise.reject(new TypeError('boom')),
      readFile: () => Promise.reject(new SandboxFailure('docker_unreachable', 'daemon gone')),
    });
    const bug = await tools.call('execute_shell', { command: 'true' }, { ...ctx, sandbox: broken });
    expect(bug.result.error).toEqual({ code: 'internal_error', message: 'tool failed unexpectedly: boom' });
    const gone = await tools.call('read_file', { path: 'x' }, { ...ctx, sandbox: broken });
    expect(gone.result.error?.code).toBe('sandbox_lost');
    expect(gone.result.error?.message).toContain('docker_unreachable');
  });

  it('adds little per call on top of the sandbox (the bench fast path)', async () => {
    const task = testTask();
    const tools = createToolRegistry(task);
    const ctx = await memoryContext(task);
    const instant = { ok: true, exit_code: 0, stdout: '', stderr: '', duration_ms: 0, bytes: 0 };
    const stub = Object.assign(Object.create(ctx.sandbox), { exec: () => Promise.resolve(instant) });
    const n = 2000;
    const started = performance.now();
    for (let i = 0; i < n; i++)
      await tools.call('execute_shell', '{"command":"true"}', { ...ctx, sandbox: stub });
    expect((performance.now() - started) / n).toBeLessThan(0.5);
  });
});
