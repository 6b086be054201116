import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Agent as HttpAgent, request } from 'node:http';
import { median } from '../../shared/median.js';
import { Task } from '../../shared/task.js';
import { parseScript, ScriptedAgent } from '../engine/agents/scripted-agent.js';
import { McpHttpServer } from '../engine/external/mcp-server.js';
import { ModelEndpoint } from '../engine/external/model-endpoint.js';
import type { Sandbox } from '../engine/sandbox/sandbox.js';
import { createMemory } from '../engine/tools/memory.js';
import { createToolRegistry } from '../engine/tools/registry.js';
import type { BenchSection } from './bench-section.js';
import { differenceOf, targetMet } from './figure.js';

/** Calls per measurement (the issue asks for a median over at least 200). */
const CALLS = 300;
const TOKEN = 'bench-token';
// A memory tool: its own time is tiny and needs no sandbox, so the difference is stepbox's.
const TASK = Task.parse({
  name: 'bench-external',
  goal: 'bench',
  tools: ['memory_read'],
  memory: { initial: { note: 'hello' } },
});
const TOOL = 'memory_read';
const ARGS = { key: 'note' };

/** What an MCP client sends with every POST (streamable HTTP). */
const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };

/** POSTs JSON on a kept-alive connection; resolves with the body. */
function post(
  url: string,
  body: string,
  agent: HttpAgent,
  extra: Record<string, string> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...extra },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks).toString()));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Section `external`: what stepbox adds to an exec: agent's calls. Per model call: from
 * the endpoint receiving the request to its answer being written, a scripted source
 * answering. Per MCP tool call: the round trip of a plain keep-alive HTTP client through
 * the episode MCP server, to its receipt of the parsed result, minus a direct registry
 * call of the same tool, paired and interleaved in this run. The SDK client's round
 * trip is reported beside it (its own cost is the agent's, whatever server it talks to).
 */
export const section: BenchSection = {
  name: 'external',

  async prerequisite() {
    return null;
  },

  async run(log) {
    const httpAgent = new HttpAgent({ keepAlive: true });
    const endpoint = new ModelEndpoint(TOKEN, 'stepbox-scripted');
    const sandbox = new Proxy({} as Sandbox, {
      get: () => {
        throw new Error('the bench tool must not need a sandbox');
      },
    });
    const registry = createToolRegistry(TASK);
    const memory = createMemory(TASK.memory.initial);
    const ctx = { sandbox, memory, task: TASK, hardTimeoutMs: 10_000, step: 1, callIndex: 0 };
    // Server side, per MCP request: receive → response written.
    const served: number[] = [];
    const mcp = new McpHttpServer(
      TOKEN,
      () => registry.definitions(),
      async (name, args) => (await registry.call(name, args, ctx)).result,
      (ms) => served.push(ms),
    );
    const client = new Client({ name: 'bench', version: '1' });
    try {
      const modelUrl = await endpoint.start();
      const mcpUrl = await mcp.start();
      log(`${CALLS} model calls (scripted source)`);
      const line = JSON.stringify({
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: TOOL, arguments: JSON.stringify(ARGS) } },
        ],
      });
      const source = new ScriptedAgent(
        'scripted:bench',
        'bench',
        parseScript(`${line}\n`.repeat(CALLS), 'bench'),
      );
      // Each request its own, as an agent's conversation grows by a turn each call: the endpoint
      // answers a request identical to the last one with that answer again (an SDK retrying a
      // dropped connection), so 300 identical bodies got one model call and the loop waited for
      // a second forever.
      const body = (i: number) =>
        JSON.stringify({
          model: 'stepbox-scripted',
          messages: [{ role: 'user', content: `bench call ${i}` }],
        });
      const modelMs: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const sent = post(`${modelUrl}/chat/completions`, body(i), httpAgent);
        const call = await endpoint.next();
        const decision = await source.decide({ step: i + 1, messages: [], tools: [] });
        call.answer(decision.message as Parameters<typeof call.answer>[0]);
        modelMs.push(performance.now() - call.receivedAt);
        await sent;
      }
      log(
        `${CALLS} MCP tool calls (plain HTTP and SDK client) and as many direct registry calls, interleaved`,
      );
      const call = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: TOOL, arguments: ARGS },
      });
      const direct: number[] = [];
      const viaHttp: number[] = [];
      const overhead: number[] = [];
      served.length = 0;
      for (let i = 0; i < CALLS; i++) {
        let t0 = performance.now();
        await registry.call(TOOL, ARGS, ctx);
        const d = performance.now() - t0;
        t0 = performance.now();
        // To the client's receipt of the result: sent, answered, body read and parsed.
        const answer = JSON.parse(await post(mcpUrl, call, httpAgent, MCP_HEADERS)) as {
          result?: { structuredContent?: { ok?: boolean } };
        };
        const rt = performance.now() - t0;
        if (answer.result?.structuredContent?.ok !== true) throw new Error('the MCP tool call failed');
        direct.push(d);
        viaHttp.push(rt);
        overhead.push(rt - d);
      }
      const servedMs = median(served);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(mcpUrl), {
          requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
        }),
      );
      const viaSdk: number[] = [];
      for (let i = 0; i < CALLS; i++) {
        const t0 = performance.now();
        await client.callTool({ name: TOOL, arguments: ARGS });
        viaSdk.push(performance.now() - t0);
      }
      const modelOverhead = median(modelMs);
      // What stepbox adds to a tool call, as the agent sees it: the round trip minus a direct registry call.
      const mcpOverhead = differenceOf(overhead, 'external_mcp_call_overhead_ms');
      return {
        external_model_call_overhead_ms: modelOverhead,
        external_model_call_target_met: modelOverhead <= 2,
        external_mcp_call_ms: servedMs,
        external_mcp_round_trip_ms: median(viaHttp),
        external_mcp_sdk_round_trip_ms: median(viaSdk),
        external_direct_registry_call_ms: median(direct),
        external_mcp_call_overhead_ms: mcpOverhead.value,
        ...(mcpOverhead.value === null ? { external_mcp_call_overhead_ms_missing: mcpOverhead.reason } : {}),
        external_mcp_call_target_met: targetMet(mcpOverhead, (v) => v <= 3),
        external_calls: CALLS,
      };
    } finally {
      await client.close().catch(() => undefined);
      await endpoint.close();
      await mcp.close();
      httpAgent.destroy();
    }
  },
};
