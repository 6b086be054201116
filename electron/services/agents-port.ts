import {
  installAgent,
  listAgents,
  removeAgent,
  type AgentListing,
  type InstallProgress,
  type InstallResult,
} from '../engine/agents/agent-install.js';

/** The engine's agent installs (`engine/agents/agent-install.ts`), as the Agents panel uses them. */
export interface AgentsPort {
  /** Every recipe with its installed versions (leftovers of killed installs swept first). */
  list(): AgentListing[];
  /** Installs or brings up to date; a cancel (signal) leaves nothing half-made. */
  install(
    name: string,
    onProgress: (p: InstallProgress) => void,
    signal: AbortSignal,
  ): Promise<InstallResult>;
  /** Removes every installed version; returns the versions removed. */
  remove(name: string): string[];
}

/** The agents of the store at `home` (`home/agents`, recipes from `home/agents/recipes` and the shipped ones). */
export function engineAgentsPort(home: string): AgentsPort {
  return {
    list: () => listAgents(home),
    install: (name, onProgress, signal) => installAgent(name, { home, onProgress, signal }),
    remove: (name) => removeAgent(name, undefined, home),
  };
}

export type { AgentListing, InstallProgress, InstallResult };
