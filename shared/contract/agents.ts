import { z } from 'zod';

// The Agents panel's part of the contract: recipes (shipped and the user's own) with what is
// installed of each, and an install's progress. Apart from models.ts so it merges as one file.

/** A recipe's name: what `stepbox agents add NAME` and the Agent field take. */
export const AgentName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,63}$/, 'a recipe name: lowercase letters, digits and "-" (e.g. "codex")');

/** One installed version of a recipe. */
export const InstalledAgentView = z.object({
  version: z.string(),
  /** Apparent size of its files; null for an install older than install.json. */
  bytes: z.number().int().nonnegative().nullable(),
  /** False when the recipe changed since (Add again brings it up to date). */
  up_to_date: z.boolean(),
  runtime: z.string().nullable(),
});
/** One installed version of a recipe. */
export type InstalledAgentView = z.infer<typeof InstalledAgentView>;

/** A recipe as the Agents panel shows it. */
export const AgentView = z.object({
  name: z.string(),
  description: z.string(),
  /** The version the recipe pins. */
  pinned: z.string(),
  runtime: z.string().nullable(),
  recipe_hash: z.string(),
  /** The user's own recipe (`$STEPBOX_HOME/agents/recipes`), not a shipped one. */
  own: z.boolean(),
  installed: z.array(InstalledAgentView),
  /** An install of it is running in this process (its progress arrives as `agents.progress`). */
  installing: z.boolean(),
});
/** A recipe as the Agents panel shows it. */
export type AgentView = z.infer<typeof AgentView>;

/** A step of an install: its phase, a rough percent (npm says no total) and npm's last line. */
export const AgentProgress = z.object({
  name: z.string(),
  phase: z.enum(['runtime', 'package', 'files', 'done']),
  percent: z.number().min(0).max(100),
  message: z.string(),
});
/** A step of an install. */
export type AgentProgress = z.infer<typeof AgentProgress>;

/** What an install did (`unchanged`: it was up to date already). */
export const AgentInstalled = z.object({
  name: z.string(),
  version: z.string(),
  bytes: z.number().int().nonnegative(),
  action: z.enum(['installed', 'reinstalled', 'updated', 'unchanged']),
  differs: z.array(z.string()),
});
/** What an install did. */
export type AgentInstalled = z.infer<typeof AgentInstalled>;
