import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Bridges MCP over stdio to the episode's streamable-HTTP MCP server, for agents that
 * only launch stdio servers: every JSON-RPC message is passed through unchanged, so
 * the tools, results and errors are the HTTP server's. Resolves when the server closes, or
 * when stdin has ended and every request read before its end is answered.
 */
export async function bridgeStdioToHttp(
  url: string,
  token: string,
  stdin: NodeJS.ReadableStream & { pause?: () => void } = process.stdin,
  stdout: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const http = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const stdio = new StdioServerTransport(stdin as typeof process.stdin, stdout as typeof process.stdout);
  const closed = new Promise<void>((resolve) => {
    stdio.onclose = () => resolve();
    http.onclose = () => resolve();
  });
  // Requests sent to the server and not yet answered: when stdin ends (an agent that writes
  // its last request and closes its end) they are still answered before the bridge closes.
  const inFlight = new Set<string | number>();
  let inputEnded = false;
  const closeWhenDone = () => {
    if (inputEnded && inFlight.size === 0) void stdio.close();
  };
  const answered = (id: string | number) => {
    inFlight.delete(id);
    closeWhenDone();
  };
  stdio.onmessage = (message) => {
    const request = 'id' in message && 'method' in message ? message.id : null;
    if (request !== null) inFlight.add(request);
    http.send(message).catch((e: Error) => {
      // A request that cannot reach the server is answered, so the agent does not wait forever.
      if (request !== null) {
        void stdio
          .send({
            jsonrpc: '2.0',
            id: request,
            error: { code: -32000, message: `stepbox mcp: ${url}: ${e.message}` },
          })
          .finally(() => answered(request));
      }
    });
  };
  // A line that is not a JSON-RPC message gets its JSON-RPC error (id null), not silence:
  // the agent would otherwise wait forever for an answer.
  stdio.onerror = (e) => {
    const error =
      e.name === 'SyntaxError'
        ? { code: -32700, message: `Parse error: ${e.message}` }
        : 'issues' in e
          ? { code: -32600, message: 'Invalid Request: not a JSON-RPC 2.0 message' }
          : null;
    if (error) void stdio.send({ jsonrpc: '2.0', id: null, error } as unknown as JSONRPCMessage);
    else process.stderr.write(`stepbox mcp: ${e.message}\n`);
  };
  http.onmessage = (message) => {
    const response = 'id' in message && !('method' in message) ? (message.id ?? null) : null;
    void stdio.send(message).finally(() => {
      if (response !== null) answered(response);
    });
  };
  await http.start();
  await stdio.start();
  stdin.on('end', () => {
    inputEnded = true;
    closeWhenDone();
  });
  await closed;
  await http.close();
}
