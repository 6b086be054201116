import type { AgentOptions } from '../../shared/contract/index.js';
import type { CallerAgentOptions } from '../engine/agents/agent-spec.js';

/** The contract's agent options (snake_case, from the window) as the engine's; unset ones stay unset. */
export function engineAgentOptions(o: AgentOptions | undefined): CallerAgentOptions {
  return {
    ...(o?.base_url ? { baseUrl: o.base_url } : {}),
    ...(o?.temperature !== undefined ? { temperature: o.temperature } : {}),
    ...(o?.seed !== undefined ? { seed: o.seed } : {}),
    ...(o?.model !== undefined ? { model: o.model } : {}),
    ...(o?.agent_dir !== undefined ? { agentDir: o.agent_dir } : {}),
  };
}
