import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/**
 * Bridges MCP over stdio to the episode's streamable-HTTP MCP server, for agents that
 * only launch stdio servers: every JSON-RPC message is passed through unchanged, so
 * the tools, results and errors are the HTTP server's. Resolves when either side closes.
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
  stdio.onmessage = (message) => {
    http.send(message).catch((e: Error) => {
      // A request that cannot reach the server is answered, so the agent does not wait forever.
      if ('id' in message && 'method' in message) {
        void stdio.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: -32000, message: `stepbox mcp: ${url}: ${e.message}` },
        });
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
  http.onmessage = (message) => void stdio.send(message);
  await http.start();
  await stdio.start();
  stdin.on('end', () => void stdio.close());
  await closed;
  await http.close();
}
