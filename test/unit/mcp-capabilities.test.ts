import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ToolResult } from '../../shared/tool-result.js';
import { McpHttpServer, RESOURCE_PAGE } from '../../electron/engine/external/mcp-server.js';
import {
  sandboxResources,
  WORKSPACE_TEMPLATE,
  type WorkspaceResources,
} from '../../electron/engine/external/workspace-resources.js';
import { createMemoryProvider, memorySandboxConfig } from '../support/memory-sandbox/provider.js';

// Each capability of the episode's MCP server beyond tools, through the SDK's own client
// over streamable HTTP (what agents use): resources, subscriptions, logging, completion, progress.

const TOKEN = 'caps-token';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** An in-memory workspace (path → bytes). */
function memoryWorkspace(files: Record<string, string | Buffer>): WorkspaceResources {
  return {
    list: async () =>
      Object.entries(files)
        .map(([path, v]) => ({ path, size: Buffer.byteLength(v) }))
        .sort((a, b) => (a.path < b.path ? -1 : 1)),
    read: async (path) =>
      path in files
        ? { ok: true, value: new Uint8Array(Buffer.from(files[path])) }
        : { ok: false, error: { code: 'not_found', message: `no such file: /workspace/${path}` } },
  };
}

async function serve(
  resources: WorkspaceResources | undefined,
  handler: (name: string, args: Record<string, unknown>) => Promise<ToolResult> = async (name) => ({
    ok: true,
    stdout: `ran ${name}`,
    duration_ms: 0,
    bytes: 0,
  }),
): Promise<{ server: McpHttpServer; client: Client }> {
  const tools = [
    {
      type: 'function' as const,
      function: { name: 'read_file', description: 'read', parameters: { type: 'object' } },
    },
  ];
  const server = new McpHttpServer(TOKEN, () => tools, handler, undefined, resources);
  const url = await server.start();
  closers.push(() => server.close());
  const client = new Client({ name: 'caps-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    }),
  );
  closers.push(() => client.close());
  return { server, client };
}

describe('MCP resources: the workspace files', () => {
  it('lists, reads text and binary, offers the file:///workspace/{path} template', async () => {
    const { client } = await serve(
      memoryWorkspace({ 'src/a b.ts': 'export {};\n', 'logo.png': PNG, 'notes.md': '# hi' }),
    );
    expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true });
    const listed = await client.listResources();
    expect(listed.resources.map((r) => [r.uri, r.name, r.mimeType])).toEqual([
      ['file:///workspace/logo.png', 'logo.png', 'image/png'],
      ['file:///workspace/notes.md', 'notes.md', 'text/markdown'],
      ['file:///workspace/src/a%20b.ts', 'src/a b.ts', 'text/x-typescript'],
    ]);
    expect(listed.nextCursor).toBeUndefined();
    expect((await client.readResource({ uri: 'file:///workspace/src/a%20b.ts' })).contents).toEqual([
      { uri: 'file:///workspace/src/a%20b.ts', mimeType: 'text/x-typescript', text: 'export {};\n' },
    ]);
    expect((await client.readResource({ uri: 'file:///workspace/logo.png' })).contents).toEqual([
      { uri: 'file:///workspace/logo.png', mimeType: 'image/png', blob: PNG.toString('base64') },
    ]);
    // The template's {path} may come percent-encoded, slashes included.
    expect(
      (await client.readResource({ uri: 'file:///workspace/src%2Fa%20b.ts' })).contents[0],
    ).toMatchObject({ text: 'export {};\n' });
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([
      expect.objectContaining({ uriTemplate: 'file:///workspace/{path}', name: 'workspace file' }),
    ]);
  });

  it('refuses what is not a workspace file as not found, never reading outside /workspace', async () => {
    const reads: string[] = [];
    const ws = memoryWorkspace({ 'a.txt': 'a' });
    const { client } = await serve({ ...ws, read: (p) => (reads.push(p), ws.read(p)) });
    for (const uri of [
      'file:///etc/passwd',
      'file:///workspace/../etc/passwd',
      'file:///workspace/%2e%2e/etc/x',
    ])
      await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32002 });
    await expect(client.readResource({ uri: 'file:///workspace/missing.txt' })).rejects.toThrow(
      /Resource not found: file:\/\/\/workspace\/missing.txt: no such file/,
    );
    expect(reads).toEqual(['missing.txt']);
  });

  it('pages a large listing with a cursor', async () => {
    const files = Object.fromEntries(
      Array.from({ length: RESOURCE_PAGE + 3 }, (_, i) => [`f${String(i).padStart(4, '0')}.txt`, 'x']),
    );
    const { client } = await serve(memoryWorkspace(files));
    const first = await client.listResources();
    expect(first.resources).toHaveLength(RESOURCE_PAGE);
    expect(first.nextCursor).toBeDefined();
    const second = await client.listResources({ cursor: first.nextCursor });
    const name = (i: number) => `f${String(i).padStart(4, '0')}.txt`;
    expect(second.resources.map((r) => r.name)).toEqual([0, 1, 2].map((i) => name(RESOURCE_PAGE + i)));
    expect(second.nextCursor).toBeUndefined();
    await expect(client.listResources({ cursor: 'nope' })).rejects.toMatchObject({ code: -32602 });
  });

  it('reads the workspace through the sandbox (list_dir walk, read_file operation)', async () => {
    const sandbox = await createMemoryProvider().create(memorySandboxConfig());
    closers.push(() => sandbox.destroy());
    await sandbox.writeFile('/workspace/src/deep/x.py', Buffer.from('print(1)\n'));
    await sandbox.writeFile('/workspace/top.txt', Buffer.from('top'));
    const { client } = await serve(sandboxResources(() => sandbox));
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      'file:///workspace/src/deep/x.py',
      'file:///workspace/top.txt',
    ]);
    expect((await client.readResource({ uri: 'file:///workspace/src/deep/x.py' })).contents[0]).toMatchObject(
      {
        mimeType: 'text/x-python',
        text: 'print(1)\n',
      },
    );
  });

  it('tells a subscribed session when a step changed its file, and stops after unsubscribe', async () => {
    const { server, client } = await serve(memoryWorkspace({ 'a.txt': 'a', 'b.txt': 'b' }));
    const updates: string[] = [];
    let got: () => void = () => undefined;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.push(n.params.uri);
      got();
    });
    await client.subscribeResource({ uri: 'file:///workspace/a.txt' });
    const arrived = new Promise<void>((resolve) => (got = resolve));
    // The client opens its GET stream after initialize; until then nothing can be delivered.
    await vi.waitFor(() => expect(server.resourcesChanged(['a.txt', 'b.txt'])).toBe(1), { timeout: 10_000 });
    await arrived;
    expect(updates).toEqual(['file:///workspace/a.txt']);
    await client.unsubscribeResource({ uri: 'file:///workspace/a.txt' });
    expect(server.resourcesChanged(['a.txt'])).toBe(0);
  });

  it('offers no resources without a workspace (tools only)', async () => {
    const { client } = await serve(undefined);
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
    await expect(client.listResources()).rejects.toMatchObject({ code: -32601 });
  });
});

describe('MCP logging, completion and progress', () => {
  it('sends a tool call start and end as log lines once the session set a level', async () => {
    const { client } = await serve(memoryWorkspace({}));
    const lines: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void lines.push(n.params));
    await client.callTool({ name: 'read_file', arguments: { path: 'a' } });
    expect(lines).toEqual([]); // no level set: no log notifications (the plain JSON hot path)
    expect(await client.setLoggingLevel('info')).toEqual({});
    const result = await client.callTool({ name: 'read_file', arguments: { path: 'a' } });
    expect(result).toMatchObject({ content: [{ text: 'ran read_file' }], isError: false });
    expect(lines.map((l) => [l.level, l.logger, String(l.data).replace(/\d+ ms/, 'N ms')])).toEqual([
      ['info', 'stepbox', 'tools/call read_file started'],
      ['info', 'stepbox', 'tools/call read_file done in N ms'],
    ]);
    await client.setLoggingLevel('warning');
    lines.length = 0;
    await client.callTool({ name: 'read_file', arguments: {} });
    expect(lines).toEqual([]);
  });

  it('completes the template path from the workspace listing; other references get no values', async () => {
    const { client } = await serve(memoryWorkspace({ 'src/a.ts': '', 'src/b.ts': '', 'test/a.test.ts': '' }));
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const done = await client.complete({
      ref: { type: 'ref/resource', uri: WORKSPACE_TEMPLATE },
      argument: { name: 'path', value: 'src/' },
    });
    expect(done.completion).toEqual({ values: ['src/a.ts', 'src/b.ts'], total: 2, hasMore: false });
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'none' },
      argument: { name: 'x', value: 'y' },
    });
    expect(prompt.completion.values).toEqual([]);
  });

  it('reports progress of a held tool call that carries a progress token, then answers it', async () => {
    let release: (r: ToolResult) => void = () => undefined;
    let started: () => void = () => undefined;
    const called = new Promise<void>((resolve) => (started = resolve));
    const { client } = await serve(
      memoryWorkspace({}),
      () =>
        new Promise<ToolResult>((resolve) => {
          release = resolve;
          started();
        }),
    );
    const progress: Progress[] = [];
    let first: () => void = () => undefined;
    const firstProgress = new Promise<void>((resolve) => (first = resolve));
    const call = client.callTool({ name: 'read_file', arguments: {} }, undefined, {
      onprogress: (p) => {
        progress.push(p);
        first();
      },
    });
    await called;
    await firstProgress; // arrives while the call is still held
    release({ ok: true, stdout: 'late', duration_ms: 0, bytes: 0 });
    expect(await call).toMatchObject({ content: [{ text: 'late' }] });
    expect(progress[0]).toMatchObject({ progress: 0, message: "read_file: waiting for the step's result" });
  });
});
