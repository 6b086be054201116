import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import { logger } from '../log.js';
import { apiError, BodyTooLarge, listenLocal, readBody, type LocalServer } from './local-http.js';

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

/** The MCP protocol side: the task's tools listed under their names, calls handed to `handler`. */
export function mcpProtocolServer(tools: readonly OpenAiTool[], handler: McpToolHandler): Server {
  const server = new Server({ name: 'stepbox', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.function.name,
      description: t.function.description ?? '',
      inputSchema: (t.function.parameters ?? { type: 'object' }) as { type: 'object' },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req) => {
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    return mcpToolResult(await handler(req.params.name, args));
  });
  return server;
}

/**
 * The episode's MCP server: streamable HTTP at `/mcp`, stateless (one protocol server
 * per request, as the SDK recommends), on 127.0.0.1 behind the episode token.
 */
export class McpHttpServer {
  private server: LocalServer | null = null;

  constructor(
    private readonly token: string,
    private readonly tools: () => readonly OpenAiTool[],
    private readonly handler: McpToolHandler,
    /** Told how long each request took inside the server, receive → response written (the bench). */
    private readonly observe?: (ms: number) => void,
  ) {}

  /** Starts listening; returns the URL (`http://127.0.0.1:PORT/mcp`). */
  async start(): Promise<string> {
    this.server = await listenLocal(
      this.token,
      (req, res) => this.handle(req, res),
      (e, res) => {
        if (e instanceof BodyTooLarge) apiError(res, 413, 'request_too_large', e.message);
        else {
          log.error(`request failed: ${(e as Error).message}`);
          if (!res.headersSent) apiError(res, 500, 'internal', 'stepbox could not answer this request');
        }
      },
    );
    return `http://127.0.0.1:${this.server.port}/mcp`;
  }

  async close(): Promise<void> {
    await this.server?.close();
    this.server = null;
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
    const text = (await readBody(req, MCP_BODY_LIMIT)).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      apiError(res, 400, 'invalid_json', 'the request body is not JSON-RPC');
      return;
    }
    const protocol = mcpProtocolServer(this.tools(), this.handler);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void protocol.close();
    });
    await protocol.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
