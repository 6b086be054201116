/**
 * A TypeScript agent as a plain loop: the `openai` client for the model and the MCP
 * TypeScript SDK for the tools. Nothing in it knows about stepbox: the client reads
 * OPENAI_BASE_URL and OPENAI_API_KEY like it always does, and the tools come from the
 * MCP server at STEPBOX_MCP_URL. `npm run build` compiles it to dist/agents/.
 *
 *   npx stepbox run resources/agents/ts-openai-loop --agent 'exec:node ../../../dist/agents/ts-openai-loop/agent.js' \
 *       --model scripted:resources/agents/ts-openai-loop/model.jsonl
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** A stepped episode may pause on a tool call for as long as a person looks at it. */
const TOOL_TIMEOUT_MS = 60 * 60 * 1000;

const mcp = new Client({ name: 'ts-openai-loop', version: '1.0.0' });
await mcp.connect(
  new StreamableHTTPClientTransport(new URL(process.env.STEPBOX_MCP_URL ?? ''), {
    requestInit: { headers: { Authorization: `Bearer ${process.env.STEPBOX_TOKEN}` } },
  }),
);
const tools: ChatCompletionTool[] = (await mcp.listTools()).tools.map((t) => ({
  type: 'function',
  function: { name: t.name, description: t.description ?? '', parameters: t.inputSchema },
}));

const openai = new OpenAI({ timeout: TOOL_TIMEOUT_MS });
const messages: ChatCompletionMessageParam[] = [
  {
    role: 'system',
    content: 'You are a careful coding agent. Use the tools; reply in plain text when done.',
  },
  { role: 'user', content: process.env.STEPBOX_GOAL ?? '' },
];

for (let turn = 0; turn < 50; turn++) {
  // Streaming, to show the endpoint streams like the real API.
  const stream = openai.chat.completions.stream({ model: process.env.STEPBOX_MODEL ?? '', messages, tools });
  const message = (await stream.finalChatCompletion()).choices[0].message;
  messages.push(message);
  const calls = (message.tool_calls ?? []).filter((c) => c.type === 'function');
  if (calls.length === 0) {
    console.log(`final answer: ${message.content}`);
    break;
  }
  for (const call of calls) {
    const result = await mcp.callTool(
      { name: call.function.name, arguments: JSON.parse(call.function.arguments || '{}') },
      undefined,
      { timeout: TOOL_TIMEOUT_MS },
    );
    const text = (result.content as { type: string; text?: string }[]).map((p) => p.text ?? '').join('');
    console.log(`${call.function.name} -> ${result.isError ? 'error' : 'ok'}`);
    messages.push({ role: 'tool', tool_call_id: call.id, content: text });
  }
}
await mcp.close();
