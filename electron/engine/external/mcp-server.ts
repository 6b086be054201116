import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  JSONRPCMessageSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type LoggingLevel,
  type MessageExtraInfo,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../../../shared/tool-result.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import { logger } from '../log.js';
import { apiError, listenLocal, readBody, sendJson, type LocalServer } from '../model-api/local-http.js';
import { McpJsonTransport } from './mcp-json-transport.js';
import { McpSessions, writeEvent, type McpSession } from './mcp-sessions.js';
import {
  mimeTypeOf,
  workspacePath,
  workspaceUri,
  WORKSPACE_TEMPLATE,
  type WorkspaceResources,
} from './workspace-resources.js';

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

/** What the protocol server offers besides the tools: the workspace's files, the sessions' state. */
export interface McpExtras {
  /** The workspace's files as `file:///workspace/…` resources; absent: no resources capability. */
  readonly resources?: WorkspaceResources;
  /** Sessions (log levels, subscriptions); absent: every request is sessionless. */
  readonly sessions?: McpSessions;
}

/** Resources per `resources/list` page. */
export const RESOURCE_PAGE = 500;
/** The largest file `resources/read` returns (read_file with its output limit reads larger ones). */
export const RESOURCE_READ_LIMIT = 8 * 1024 * 1024;
/** How often a tool call with a progress token reports that it is still waiting. */
export const PROGRESS_EVERY_MS = 2_000;
/** Completion values per answer (the spec's maximum). */
const COMPLETION_MAX = 100;
/** The MCP error code of a resource that does not exist (the spec's). */
const RESOURCE_NOT_FOUND = -32002;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The session a request came in, by the session id the HTTP server put in its request info. */
function sessionOf(
  sessions: McpSessions | undefined,
  extra: { requestInfo?: { headers: Record<string, string | string[] | undefined> } },
): McpSession | undefined {
  const id = extra.requestInfo?.headers['mcp-session-id'];
  return sessions?.get(typeof id === 'string' ? id : undefined);
}

/**
 * The MCP protocol side: the task's tools (read at each listing) under their names, calls
 * handed to `handler`; with `extras`, the workspace as resources (list, read, template,
 * subscribe), log levels and log lines about tool calls, completion of workspace paths, and
 * progress of a tool call that carries a progress token.
 */
export function mcpProtocolServer(
  tools: () => readonly OpenAiTool[],
  handler: McpToolHandler,
  extras: McpExtras = {},
): Server {
  const { resources, sessions } = extras;
  const server = new Server(
    { name: 'stepbox', version: '1' },
    {
      capabilities: {
        tools: {},
        logging: {},
        completions: {},
        ...(resources ? { resources: { subscribe: true } } : {}),
      },
    },
  );
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
  server.setRequestHandler(lenient, async (req, extra) => {
    const name = String(req.params.name);
    const args = (req.params.arguments ?? {}) as Record<string, unknown>;
    const session = sessionOf(sessions, extra);
    const progressToken = req.params._meta?.progressToken;
    // The hot path: no session asking for logs and no progress token, nothing but the call.
    if (progressToken === undefined && !session?.level) return mcpToolResult(await handler(name, args));
    const notify = (n: ServerNotification) => void extra.sendNotification(n).catch(() => undefined);
    const logLine = (level: LoggingLevel, data: string) => {
      if (McpSessions.logs(session, level))
        notify({ method: 'notifications/message', params: { level, logger: 'stepbox', data } });
    };
    let ticks = 0;
    const progress = (message: string) => {
      if (progressToken !== undefined)
        notify({ method: 'notifications/progress', params: { progressToken, progress: ticks++, message } });
    };
    const started = performance.now();
    logLine('info', `tools/call ${name} started`);
    progress(`${name}: waiting for the step's result`);
    // A held call (exec: agents wait for their step) says it is alive, so a client's
    // request timeout that resets on progress does not give up on it.
    const timer = setInterval(
      () => progress(`${name}: still waiting (${Math.round((performance.now() - started) / 1000)} s)`),
      PROGRESS_EVERY_MS,
    );
    try {
      const result = await handler(name, args);
      const ms = Math.round(performance.now() - started);
      if (result.ok) logLine('info', `tools/call ${name} done in ${ms} ms`);
      else logLine('warning', `tools/call ${name} failed in ${ms} ms: ${result.error?.code ?? 'error'}`);
      return mcpToolResult(result);
    } finally {
      clearInterval(timer);
    }
  });
  // The SDK's own setLevel keys levels by transport session; ours are the HTTP server's.
  server.setRequestHandler(SetLevelRequestSchema, async (req, extra) => {
    const session = sessionOf(sessions, extra);
    if (session) session.level = req.params.level;
    return {};
  });
  server.setRequestHandler(CompleteRequestSchema, async (req) => {
    const { ref, argument } = req.params;
    // Only the workspace template's `path` completes; other references (prompts: stepbox has
    // none) get no values, which is the spec's answer for "nothing to suggest".
    if (
      !resources ||
      ref.type !== 'ref/resource' ||
      ref.uri !== WORKSPACE_TEMPLATE ||
      argument.name !== 'path'
    )
      return { completion: { values: [] } };
    const matches = (await resources.list()).map((f) => f.path).filter((p) => p.startsWith(argument.value));
    return {
      completion: {
        values: matches.slice(0, COMPLETION_MAX),
        total: matches.length,
        hasMore: matches.length > COMPLETION_MAX,
      },
    };
  });
  if (resources) addResourceHandlers(server, resources, sessions);
  return server;
}

/** `resources/list` (paged), `resources/read`, `resources/templates/list`, `resources/(un)subscribe`. */
function addResourceHandlers(server: Server, resources: WorkspaceResources, sessions?: McpSessions): void {
  server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    const cursor = req.params?.cursor;
    const start = cursor === undefined ? 0 : Number(cursor);
    if (!Number.isInteger(start) || start < 0)
      throw new McpError(
        ErrorCode.InvalidParams,
        `cursor ${JSON.stringify(cursor)} is not one this server gave`,
      );
    const files = await resources.list();
    const page = files.slice(start, start + RESOURCE_PAGE);
    return {
      resources: page.map((f) => ({
        uri: workspaceUri(f.path),
        name: f.path,
        description: `/workspace/${f.path} in the sandbox (${f.size} bytes)`,
        mimeType: mimeTypeOf(f.path, true),
        size: f.size,
      })),
      ...(start + RESOURCE_PAGE < files.length ? { nextCursor: String(start + RESOURCE_PAGE) } : {}),
    };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: WORKSPACE_TEMPLATE,
        name: 'workspace file',
        description:
          'A file under /workspace in the sandbox, by its path (complete `path` with completion/complete)',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const { uri } = req.params;
    const path = workspacePath(uri);
    if (path === null)
      throw new McpError(
        RESOURCE_NOT_FOUND,
        `Resource not found: ${uri} (resources are file:///workspace/PATH)`,
      );
    const res = await resources.read(path);
    if (!res.ok) throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}: ${res.error.message}`);
    const bytes = res.value;
    if (bytes.byteLength > RESOURCE_READ_LIMIT)
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${uri} is ${bytes.byteLength} bytes, over the ${RESOURCE_READ_LIMIT}-byte resource limit; read it with the read_file tool`,
      );
    try {
      const text = utf8.decode(bytes);
      return { contents: [{ uri, mimeType: mimeTypeOf(path, true), text }] };
    } catch {
      const blob = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
      return { contents: [{ uri, mimeType: mimeTypeOf(path, false), blob }] };
    }
  });
  // Any URI may be subscribed (the spec leaves it to the server); updates come for workspace files.
  server.setRequestHandler(SubscribeRequestSchema, async (req, extra) => {
    sessionOf(sessions, extra)?.subscriptions.add(req.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (req, extra) => {
    sessionOf(sessions, extra)?.subscriptions.delete(req.params.uri);
    return {};
  });
}

/** The JSON-RPC error body of a refused POST (what the SDK's transport answers). */
function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null });
}

/**
 * The episode's MCP server: streamable HTTP at `/mcp` on 127.0.0.1 behind the episode
 * token. It follows the SDK's streamable-HTTP server check for check (406 without
 * `Accept: application/json, text/event-stream`, 415 for another content type, 400 for
 * bad JSON-RPC or an unsupported `MCP-Protocol-Version`, 202 for notifications only),
 * with one protocol server for all requests (see {@link McpJsonTransport}). `initialize`
 * opens a session (`Mcp-Session-Id`); a session's GET is its stream of server
 * notifications (resource updates), DELETE ends it. A POST is answered with a JSON body,
 * or as an SSE stream (its notifications, then its answer) when it carries a progress
 * token or calls a tool in a session that set a log level. Requests without a session id
 * are answered too (stateless clients).
 */
export class McpHttpServer {
  private server: LocalServer | null = null;
  private readonly transport = new McpJsonTransport();
  private readonly protocol: Server;
  private readonly sessions = new McpSessions();

  constructor(
    private readonly token: string,
    tools: () => readonly OpenAiTool[],
    handler: McpToolHandler,
    /** Told how long each request took inside the server, receive → response written (the bench). */
    private readonly observe?: (ms: number) => void,
    /** The workspace's files as resources; absent: the server offers tools only. */
    resources?: WorkspaceResources,
  ) {
    this.protocol = mcpProtocolServer(tools, handler, { resources, sessions: this.sessions });
  }

  /** Starts listening; returns the URL (`http://127.0.0.1:PORT/mcp`). */
  async start(): Promise<string> {
    await this.protocol.connect(this.transport);
    this.server = await listenLocal(this.token, (req, res) => this.handle(req, res), log);
    return `http://127.0.0.1:${this.server.port}/mcp`;
  }

  async close(): Promise<void> {
    this.sessions.endAll();
    await this.server?.close();
    this.server = null;
    await this.protocol.close();
  }

  /**
   * A step ended with these workspace paths changed (the snapshot's `changed`): each session
   * subscribed to one of them gets `notifications/resources/updated` on its GET stream.
   * Returns how many notifications were sent.
   */
  resourcesChanged(paths: readonly string[]): number {
    return this.sessions.resourcesUpdated(paths.map(workspaceUri));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/mcp') {
      apiError(res, 404, 'not_found', `${path} is not served; the MCP endpoint is /mcp`);
      return;
    }
    const sid = req.headers['mcp-session-id'];
    const sessionId = typeof sid === 'string' ? sid : undefined;
    if (req.method === 'GET' || req.method === 'DELETE') {
      this.handleSession(req, res, sessionId);
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'GET, POST, DELETE' }).end();
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
    let session = this.sessions.get(sessionId);
    if (sessionId !== undefined && !session) {
      rpcError(res, 404, -32001, 'Session not found: initialize again for a new Mcp-Session-Id');
      return;
    }
    const messages = parseMessages((await readBody(req, MCP_BODY_LIMIT)).toString('utf8'));
    if (typeof messages === 'string') {
      rpcError(res, 400, messages === BATCH_TOO_LARGE ? -32600 : -32700, messages);
      return;
    }
    const initialize = messages.some((m) => 'method' in m && m.method === 'initialize');
    const version = req.headers['mcp-protocol-version'];
    if (typeof version === 'string' && !initialize && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      rpcError(
        res,
        400,
        -32000,
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
      );
      return;
    }
    if (initialize && !session) session = this.sessions.create();
    if (session) res.setHeader('mcp-session-id', session.id);
    // Only the session id goes to the handlers as request info: the other headers hold the token.
    const extra: MessageExtraInfo = {
      requestInfo: { headers: session ? { 'mcp-session-id': session.id } : {} },
    };
    if (!streams(messages, session)) {
      const answers = await this.transport.dispatch(messages, extra);
      if (answers.length === 0) {
        res.writeHead(202).end();
        return;
      }
      if (res.destroyed) return;
      sendJson(res, 200, answers.length === 1 ? answers[0] : answers);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    const notify = (m: JSONRPCMessage) => {
      if (!res.destroyed) writeEvent(res, m);
    };
    const answers = await this.transport.dispatch(messages, extra, notify);
    for (const a of answers) notify(a);
    res.end();
  }

  /** GET: the session's stream of server notifications; DELETE: ends the session. */
  private handleSession(req: IncomingMessage, res: ServerResponse, sessionId: string | undefined): void {
    if (req.method === 'GET' && !(req.headers.accept ?? '').includes('text/event-stream')) {
      rpcError(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
      return;
    }
    if (sessionId === undefined) {
      rpcError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required (initialize first)');
      return;
    }
    const session = this.sessions.get(sessionId);
    if (!session) {
      rpcError(res, 404, -32001, 'Session not found: initialize again for a new Mcp-Session-Id');
      return;
    }
    if (req.method === 'DELETE') {
      this.sessions.end(sessionId);
      res.writeHead(200).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'mcp-session-id': session.id,
    });
    res.flushHeaders();
    this.sessions.attach(session, res);
  }
}

/** True when a POST is answered as an SSE stream: a request asks for progress, or a tool call would log. */
function streams(messages: readonly JSONRPCMessage[], session: McpSession | undefined): boolean {
  return messages.some(
    (m) =>
      'method' in m &&
      'id' in m &&
      ((m.params?._meta as { progressToken?: unknown } | undefined)?.progressToken !== undefined ||
        (m.method === 'tools/call' && !!session?.level)),
  );
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
