import {
  installAgent,
  listAgents,
  removeAgent,
  type AgentListing,
  type InstallProgress,
  type InstallResult,
} from '../engine/agents/agent-install.js';
import { ownRecipeNames } from '../engine/agents/recipes.js';

/** A recipe with its installs, and whether it is the user's own (`$STEPBOX_HOME/agents/recipes`). */
export type AgentEntry = AgentListing & { readonly own: boolean };

/** The engine's agent installs (`engine/agents/agent-install.ts`), as the Agents panel uses them. */
export interface AgentsPort {
  /** Every recipe with its installed versions (leftovers of killed installs swept first). */
  list(): AgentEntry[];
  /** Installs or brings up to date; a cancel (signal) leaves nothing half-made. */
  install(
    name: string,
    onProgress: (p: InstallProgress) => void,
    signal: AbortSignal,
  ): Promise<InstallResult>;
  /** Removes every installed version (and the runtimes no agent uses any more); returns the versions removed. */
  remove(name: string): string[];
}

/** The agents of the store at `home` (`home/agents`, recipes from `home/agents/recipes` and the shipped ones). */
export function engineAgentsPort(home: string): AgentsPort {
  return {
    list: () => {
      const own = ownRecipeNames(home);
      return listAgents(home).map((a) => ({ ...a, own: own.has(a.name) }));
    },
    install: (name, onProgress, signal) => installAgent(name, { home, onProgress, signal }),
    remove: (name) => [...removeAgent(name, undefined, home).versions],
  };
}

export type { AgentListing, InstallProgress, InstallResult };
