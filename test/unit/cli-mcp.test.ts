import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpHttpServer } from '../../electron/engine/external/mcp-server.js';
import { PROJECT_ROOT, runCli } from '../support/cli.js';

const TOKEN = 'bridge-token';
let server: McpHttpServer;
let url: string;

beforeAll(async () => {
  server = new McpHttpServer(
    TOKEN,
    () => [
      {
        type: 'function',
        function: { name: 'read_file', description: 'read', parameters: { type: 'object', properties: {} } },
      },
    ],
    async (name, args) =>
      args.path === 'missing'
        ? {
            ok: false,
            error: { code: 'not_found', message: 'no such file: missing' },
            duration_ms: 0,
            bytes: 0,
          }
        : { ok: true, stdout: `${name}:${String(args.path)}`, duration_ms: 0, bytes: 0 },
    undefined,
    {
      list: async () => [{ path: 'notes.txt', size: 2 }],
      read: async (path) =>
        path === 'notes.txt'
          ? { ok: true, value: new TextEncoder().encode('hi') }
          : { ok: false, error: { code: 'not_found', message: 'no such file' } },
    },
  );
  url = await server.start();
});
afterAll(() => server.close());

describe('stepbox mcp (the stdio bridge)', () => {
  it('lists and calls the episode server tools over stdio, errors included', async () => {
    const client = new Client({ name: 'stdio-agent', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(PROJECT_ROOT, 'bin/stepbox.js'), 'mcp'],
        env: { PATH: process.env.PATH ?? '', STEPBOX_MCP_URL: url, STEPBOX_TOKEN: TOKEN },
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['read_file']);
      expect(await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } })).toMatchObject({
        content: [{ type: 'text', text: 'read_file:a.txt' }],
        isError: false,
      });
      // Resources and the log lines of an SSE-answered call come through the bridge too.
      expect((await client.readResource({ uri: 'file:///workspace/notes.txt' })).contents).toEqual([
        { uri: 'file:///workspace/notes.txt', mimeType: 'text/plain', text: 'hi' },
      ]);
      const logs: unknown[] = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params.data));
      await client.setLoggingLevel('info');
      await client.callTool({ name: 'read_file', arguments: { path: 'a.txt' } });
      expect(logs[0]).toBe('tools/call read_file started');
      await client.setLoggingLevel('emergency');
      expect(await client.callTool({ name: 'read_file', arguments: { path: 'missing' } })).toMatchObject({
        content: [{ type: 'text', text: 'no such file: missing' }],
        structuredContent: { error: { code: 'not_found' } },
        isError: true,
      });
    } finally {
      await client.close();
    }
  }, 30_000);

  it('without the two variables it is a usage error naming them', async () => {
    const run = await runCli(['mcp'], { env: { STEPBOX_MCP_URL: undefined, STEPBOX_TOKEN: undefined } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/STEPBOX_MCP_URL and STEPBOX_TOKEN are not set/);
  }, 30_000);

  it('with a wrong token every request is refused', async () => {
    const client = new Client({ name: 'stdio-agent', version: '1' });
    const connecting = client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(PROJECT_ROOT, 'bin/stepbox.js'), 'mcp'],
        env: { PATH: process.env.PATH ?? '', STEPBOX_MCP_URL: url, STEPBOX_TOKEN: 'wrong' },
      }),
    );
    await expect(connecting).rejects.toThrow(/401|STEPBOX_TOKEN/);
    await client.close();
  }, 30_000);

  it('answers a line that is not JSON with -32700 (id null) and a tools/call without a name with -32602', async () => {
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/stepbox.js'), 'mcp'], {
      env: { PATH: process.env.PATH ?? '', STEPBOX_MCP_URL: url, STEPBOX_TOKEN: TOKEN },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () =>
      JSON.parse(((await lines.next()).value as string) ?? 'null') as Record<string, unknown>;
    const send = (m: unknown) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`);
    try {
      send('this is not json');
      expect(await next()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      expect(await next()).toMatchObject({ id: 1, result: { serverInfo: { name: 'stepbox' } } });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: { path: 'a' } } });
      expect(await next()).toMatchObject({ id: 2, error: { code: -32602 } });
      send('{"valid": "json", "but": "no jsonrpc"}');
      expect(await next()).toMatchObject({ id: null, error: { code: -32600 } });
      // The bridge is still alive and answering.
      send({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'read_file', arguments: { path: 'b' } },
      });
      expect(await next()).toMatchObject({ id: 3, result: { content: [{ text: 'read_file:b' }] } });
    } finally {
      child.stdin.end();
      child.kill();
    }
  }, 30_000);

  it('finishes the requests in flight when stdin closes, then exits 0', async () => {
    // A tool that answers only when the test says so, after the agent has closed stdin.
    let arrived!: () => void;
    const arrival = new Promise<void>((r) => (arrived = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const slow = new McpHttpServer(
      TOKEN,
      () => [
        {
          type: 'function',
          function: { name: 'wait', description: 'wait', parameters: { type: 'object', properties: {} } },
        },
      ],
      async () => {
        arrived();
        await released;
        return { ok: true, stdout: 'finished', duration_ms: 0, bytes: 0 };
      },
    );
    const slowUrl = await slow.start();
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin/stepbox.js'), 'mcp'], {
      env: { PATH: process.env.PATH ?? '', STEPBOX_MCP_URL: slowUrl, STEPBOX_TOKEN: TOKEN },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const next = async () =>
      JSON.parse(((await lines.next()).value as string) ?? 'null') as Record<string, unknown>;
    const send = (m: unknown) => child.stdin.write(`${JSON.stringify(m)}\n`);
    try {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      expect(await next()).toMatchObject({ id: 1 });
      send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'wait', arguments: {} } });
      await arrival;
      child.stdin.end();
      // The bridge saw its input end while the call was in flight (a bridge that closed then
      // would exit here, its call aborted): given that chance, the call is answered.
      const early = await Promise.race([
        exited.then(() => 'exited'),
        new Promise((r) => setTimeout(r, 1_000, 'alive')),
      ]);
      expect(early).toBe('alive');
      release();
      expect(await next()).toMatchObject({ id: 2, result: { content: [{ text: 'finished' }] } });
      expect(await exited).toBe(0);
    } finally {
      child.kill();
      await slow.close();
    }
  }, 30_000);
});
