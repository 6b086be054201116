import { parseArgs } from 'node:util';
import { bridgeStdioToHttp } from '../engine/external/mcp-stdio-bridge.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { parseOrUsage } from './parse-or-usage.js';

const HELP = `stepbox mcp

The episode's MCP server over stdio, for an agent run with --agent exec:CMD that only
launches stdio MCP servers. It reads STEPBOX_MCP_URL and STEPBOX_TOKEN (set by stepbox
in the agent's environment) and passes every message to that server unchanged.

Example (an agent's MCP configuration):
  {"command": "npx", "args": ["stepbox", "mcp"]}
`;

/** `stepbox mcp` — the episode's MCP server as a stdio server. */
export const command: CliCommand = {
  name: 'mcp',
  summary: "the episode's MCP server over stdio (for exec: agents that launch stdio servers)",
  help: HELP,
  async run(argv, io) {
    parseOrUsage(() => parseArgs({ args: argv, options: {}, allowPositionals: false, strict: true }));
    const url = io.env.STEPBOX_MCP_URL;
    const token = io.env.STEPBOX_TOKEN;
    if (!url || !token) {
      throw new UsageError(
        'STEPBOX_MCP_URL and STEPBOX_TOKEN are not set: stepbox mcp runs inside an agent started with --agent exec:CMD',
      );
    }
    await bridgeStdioToHttp(url, token, io.stdin, io.stdout);
    return EXIT.ok;
  },
};
