import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolFailure } from '../../shared/tool-result.js';
import { McpHttpServer } from '../../electron/engine/external/mcp-server.js';
import type { WorkspaceResources } from '../../electron/engine/external/workspace-resources.js';
import { npmTool } from '../support/npm-tool.js';

// The official MCP conformance suite against the episode's MCP server, through a local
// proxy that adds the episode token (the suite sends none). The suite needs Node 22: npm's
// `node@22` package brings it, installed with the suite into a kept cache directory.
// Scenarios that do not apply to stepbox's server are listed in the README (External
// agents: MCP) with why.

const run = promisify(execFile);
const TOKEN = 'conformance-token';
const SUITE = '@modelcontextprotocol/conformance@0.1.16';

/** Every scenario that applies to a server offering tools and resources. */
const APPLIES = [
  'server-initialize',
  'ping',
  'tools-list',
  'tools-call-error',
  'logging-set-level',
  'completion-complete',
  'resources-list',
  'resources-subscribe',
  'resources-unsubscribe',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

const files: Record<string, string> = { 'README.md': '# project\n', 'src/main.py': 'print("hi")\n' };
const workspace: WorkspaceResources = {
  list: async () => Object.entries(files).map(([path, v]) => ({ path, size: v.length })),
  read: async (path) =>
    path in files
      ? { ok: true, value: new Uint8Array(Buffer.from(files[path])) }
      : { ok: false, error: { code: 'not_found', message: `no such file: /workspace/${path}` } },
};

let server: McpHttpServer;
let proxy: Server;
let proxyUrl: string;
let node22: string;
let cli: string;

/**
 * Forwards to the MCP server with `Authorization: Bearer TOKEN` added; a Host or Origin
 * naming the proxy becomes the server's own (the loopback gate checks the port), any other
 * (the suite's DNS-rebinding probe) goes through unchanged, so the gate answers it.
 */
function tokenProxy(target: URL): Promise<Server> {
  return new Promise((resolve) => {
    const s = createServer((req, res) => {
      const own = `127.0.0.1:${(s.address() as AddressInfo).port}`;
      const swap = (v: string | undefined) =>
        v?.replace(
          /^(https?:\/\/)?(localhost|127\.0\.0\.1):\d+$/,
          (_, scheme = '') => `${scheme}${target.host}`,
        );
      const headers = { ...req.headers, authorization: `Bearer ${TOKEN}` };
      if (req.headers.host?.toLowerCase() === own || /^localhost:\d+$/.test(req.headers.host ?? ''))
        headers.host = swap(req.headers.host);
      if (req.headers.origin && /^http:\/\/(localhost|127\.0\.0\.1):\d+$/.test(req.headers.origin))
        headers.origin = swap(req.headers.origin);
      const up = request(target, { method: req.method, path: req.url, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.flushHeaders();
        answer.pipe(res);
      });
      up.on('error', () => res.destroy());
      res.on('close', () => up.destroy());
      req.pipe(up);
    });
    s.listen(0, '127.0.0.1', () => resolve(s));
  });
}

beforeAll(async () => {
  const dir = await npmTool('mcp-conformance-0.1.16', [SUITE, 'node@22']);
  node22 = join(dir, 'node_modules', '.bin', 'node');
  cli = join(dir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
  const tools = [
    {
      type: 'function' as const,
      function: {
        name: 'read_file',
        description: 'Reads a file of the workspace',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    },
  ];
  server = new McpHttpServer(
    TOKEN,
    () => tools,
    // As the harness answers: a tool the task does not have is an error result.
    async (name, args) =>
      name === 'read_file'
        ? { ok: true, stdout: files[String(args.path)] ?? '', duration_ms: 0, bytes: 0 }
        : toolFailure('unknown_tool', `unknown tool "${name}"; the tools are: read_file`),
    undefined,
    workspace,
  );
  const url = new URL(await server.start());
  proxy = await tokenProxy(url);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
}, 600_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

describe('the MCP conformance suite', () => {
  it.each(APPLIES)('passes %s', async (scenario) => {
    const out = await run(node22, [cli, 'server', '--url', proxyUrl, '--scenario', scenario], {
      timeout: 60_000,
    }).then(
      (r) => ({ code: 0, text: r.stdout + r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({
        code: e.code ?? -1,
        text: `${e.stdout ?? ''}${e.stderr ?? ''}`,
      }),
    );
    // The suite exits 1 on a failed check and prints `Passed: N/N, 0 failed`.
    expect(
      { scenario, code: out.code, passed: /Passed: (\d+)\/\1, 0 failed/.test(out.text) },
      out.text,
    ).toEqual({
      scenario,
      code: 0,
      passed: true,
    });
  });
});
