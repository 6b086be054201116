import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  CallToolRequestSchema,
  JSONRPCMessageSchema,
  ListToolsRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import { logger } from '../log.js';
import { apiError, listenLocal, readBody, sendJson, type LocalServer } from './local-http.js';
import { McpJsonTransport } from './mcp-json-transport.js';

const log = logger('mcp-server');

/** The largest MCP message accepted (a write_file of a few MiB fits). */
export const MCP_BODY_LIMIT = 8 * 1024 * 1024;

/** Answers one tool call of the agent; never throws (failures are tool results). */
export type McpToolHandler = (name: string, args: Record<string, unknown>) => Promise<ToolResult>;

/** A tool result as MCP content (Contracts: External agents): text, the result object, `isError = !ok`. */
export function mcpToolResult(result: ToolResult): CallToolResult {
  const text = result.ok
    ? (result.stdout ?? (result.data !== undefined ? JSON.stringify(result.data) : ''))
    : (result.error?.message ?? 'the tool failed');
  return {
    content: [{ type: 'text', text }],
    structuredContent: result as unknown as Record<string, unknown>,
    isError: !result.ok,
  };
}

/** The MCP protocol side: the task's tools (read at each listing) under their names, calls handed to `handler`. */
export function mcpProtocolServer(tools: () => readonly OpenAiTool[], handler: McpToolHandler): Server {
  const server = new Server({ name: 'stepbox', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools().map((t) => ({
      name: t.function.name,
      description: t.function.description ?? '',
      inputSchema: (t.function.parameters ?? { type: 'object' }) as { type: 'object' },
    })),
  }));
  // Registered with `name` optional so a call without one reaches the SDK's own tools/call
  // check, which answers -32602 (invalid params); the strict schema would throw first and
  // come back as -32603 (internal error).
  const lenient = CallToolRequestSchema.extend({ params: CallToolRequestSchema.shape.params.partial() });
  server.setRequestHandler(lenient, async (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    return mcpToolResult(await handler(String(req.params.name), args));
  });
  return server;
}

/** The JSON-RPC error body of a refused POST (what the SDK's transport answers). */
function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * The episode's MCP server: streamable HTTP at `/mcp` on 127.0.0.1 behind the episode
 * token, stateless (no session), answering every POST with a JSON body. It follows the
 * SDK's streamable-HTTP server check for check (406 without `Accept: application/json,
 * text/event-stream`, 415 for another content type, 400 for bad JSON-RPC or an
 * unsupported `MCP-Protocol-Version`, 202 for notifications only, 405 for GET/DELETE),
 * with one protocol server for all requests (see {@link McpJsonTransport}).
 */
export class McpHttpServer {
  private server: LocalServer | null = null;
  private readonly transport = new McpJsonTransport();
  private readonly protocol: Server;

  constructor(
    private readonly token: string,
    tools: () => readonly OpenAiTool[],
    handler: McpToolHandler,
    /** Told how long each request took inside the server, receive → response written (the bench). */
    private readonly observe?: (ms: number) => void,
  ) {
    this.protocol = mcpProtocolServer(tools, handler);
  }

  /** Starts listening; returns the URL (`http://127.0.0.1:PORT/mcp`). */
  async start(): Promise<string> {
    await this.protocol.connect(this.transport);
    this.server = await listenLocal(this.token, (req, res) => this.handle(req, res), log);
    return `http://127.0.0.1:${this.server.port}/mcp`;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.server = null;
    await this.protocol.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/mcp') {
      apiError(res, 404, 'not_found', `${path} is not served; the MCP endpoint is /mcp`);
      return;
    }
    if (req.method !== 'POST') {
      // Stateless: no server-initiated stream and no session to delete.
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const received = performance.now();
    if (this.observe) res.on('finish', () => this.observe?.(performance.now() - received));
    const accept = req.headers.accept ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
      rpcError(
        res,
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
      return;
    }
    if (!isJsonContentType(req.headers['content-type'] ?? null)) {
      rpcError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
      return;
    }
    const messages = parseMessages((await readBody(req, MCP_BODY_LIMIT)).toString('utf8'));
    if (typeof messages === 'string') {
      rpcError(res, 400, messages === BATCH_TOO_LARGE ? -32600 : -32700, messages);
      return;
    }
    const version = req.headers['mcp-protocol-version'];
    if (
      typeof version === 'string' &&
      !messages.some((m) => 'method' in m && m.method === 'initialize') &&
      !SUPPORTED_PROTOCOL_VERSIONS.includes(version)
    ) {
      rpcError(
        res,
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
      return;
    }
    // No request info goes to the handlers: they need none, and the headers hold the token.
    const answers = await this.transport.dispatch(messages, {});
    if (answers.length === 0) {
      res.writeHead(202).end();
      return;
    }
    if (res.destroyed) return;
    sendJson(res, 200, answers.length === 1 ? answers[0] : answers);
  }
}

const BATCH_TOO_LARGE = `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`;

/** A POST body's JSON-RPC messages, or the reason it is refused. */
function parseMessages(text: string): JSONRPCMessage[] | string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return 'Parse error: Invalid JSON';
  }
  if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE) return BATCH_TOO_LARGE;
  const list: unknown[] = Array.isArray(raw) ? raw : [raw];
  const out: JSONRPCMessage[] = [];
  for (const m of list) {
    const parsed = JSONRPCMessageSchema.safeParse(m);
    if (!parsed.success) return 'Parse error: Invalid JSON-RPC message';
    out.push(parsed.data);
  }
  return out;
}
