import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { JSONRPCMessage, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';

/** The severities of `logging/setLevel`, least severe first (RFC 5424 order). */
const LEVELS: readonly LoggingLevel[] = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
];

/** Sessions kept at once; a client opening more drops the oldest (the agent is untrusted). */
const MAX_SESSIONS = 64;
/** Open GET streams per session; an extra one replaces the oldest. */
const MAX_STREAMS = 4;

/** One client's session (`Mcp-Session-Id`): its log level, subscriptions and server-to-client streams. */
export interface McpSession {
  readonly id: string;
  /** Set by `logging/setLevel`; null: no log notifications (the hot path stays plain JSON). */
  level: LoggingLevel | null;
  readonly subscriptions: Set<string>;
  readonly streams: Set<ServerResponse>;
}

/** Writes one JSON-RPC message as an SSE event. */
export function writeEvent(res: ServerResponse, message: JSONRPCMessage): void {
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

/**
 * The MCP server's sessions: created at `initialize` (the id goes back in
 * `Mcp-Session-Id`), ended by DELETE or when the server closes. A request without a
 * session id is still answered (stateless clients), but gets no notifications that need one.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();

  create(): McpSession {
    const [oldest] = this.sessions.keys();
    if (this.sessions.size >= MAX_SESSIONS && oldest !== undefined) this.end(oldest);
    const session: McpSession = {
      id: randomUUID(),
      level: null,
      subscriptions: new Set(),
      streams: new Set(),
    };
    this.sessions.set(session.id, session);
    return session;
  }

  get(id: string | undefined): McpSession | undefined {
    return id === undefined ? undefined : this.sessions.get(id);
  }

  /** Ends a session and its streams; false when there was none. */
  end(id: string): boolean {
    const session = this.sessions.get(id);
    if (!session) return false;
    this.sessions.delete(id);
    for (const s of session.streams) s.end();
    return true;
  }

  endAll(): void {
    for (const id of [...this.sessions.keys()]) this.end(id);
  }

  /** Keeps a GET stream of the session open for server notifications until the client goes. */
  attach(session: McpSession, res: ServerResponse): void {
    if (session.streams.size >= MAX_STREAMS) {
      const [oldest] = session.streams;
      if (oldest) {
        session.streams.delete(oldest);
        oldest.end();
      }
    }
    session.streams.add(res);
    res.on('close', () => session.streams.delete(res));
  }

  /** True when a log message at `level` goes to the session (it asked for that level or lower). */
  static logs(session: McpSession | undefined, level: LoggingLevel): boolean {
    if (!session?.level) return false;
    return LEVELS.indexOf(level) >= LEVELS.indexOf(session.level);
  }

  /**
   * Tells every session subscribed to one of `uris` that it changed
   * (`notifications/resources/updated`, on the session's GET streams). Returns how many
   * notifications were written.
   */
  resourcesUpdated(uris: readonly string[]): number {
    let sent = 0;
    for (const session of this.sessions.values()) {
      for (const uri of uris) {
        if (!session.subscriptions.has(uri)) continue;
        for (const s of session.streams) {
          writeEvent(s, { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
          sent++;
        }
      }
    }
    return sent;
  }
}
