/**
 * An agent on the OpenAI Agents SDK for TypeScript (`@openai/agents`) with its MCP
 * server support: the SDK's default OpenAI client reads OPENAI_BASE_URL and
 * OPENAI_API_KEY, its default model API (Responses) is served by the episode's model
 * endpoint, and `MCPServerStreamableHttp` connects to STEPBOX_MCP_URL. `npm run build`
 * compiles it to dist/agents/.
 *
 *   npx stepbox run resources/agents/ts-openai-agents --agent 'exec:node ../../../dist/agents/ts-openai-agents/agent.js' \
 *       --model scripted:resources/agents/ts-openai-agents/model.jsonl
 */
import { Agent, MCPServerStreamableHttp, run, setTracingDisabled } from '@openai/agents';

// Traces would go to OpenAI's servers; stepbox records the episode itself.
setTracingDisabled(true);

const tools = new MCPServerStreamableHttp({
  name: 'stepbox',
  url: process.env.STEPBOX_MCP_URL ?? '',
  requestInit: { headers: { Authorization: `Bearer ${process.env.STEPBOX_TOKEN}` } },
  // A stepped episode may pause on a tool call for as long as a person looks at it.
  timeout: 60 * 60 * 1000,
});
await tools.connect();
try {
  const agent = new Agent({
    name: 'worker',
    instructions: 'You are a careful coding agent. Use the tools; reply in plain text when done.',
    model: process.env.STEPBOX_MODEL,
    mcpServers: [tools],
  });
  const result = await run(agent, process.env.STEPBOX_GOAL ?? '', { maxTurns: 20 });
  console.log(`final answer: ${result.finalOutput}`);
} finally {
  await tools.close();
}
