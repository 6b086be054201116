import { loadWorld, type World, type WorldFlags } from '../engine/harness/load-world.js';
import type { CliIo } from './command.js';
import { UsageError } from './command.js';

/** The flags every command that turns a path into a task takes (run, batch, task init). */
export const WORLD_FLAGS = {
  goal: { type: 'string' },
  verify: { type: 'string' },
  'import-limit': { type: 'string' },
} as const;

/** Help lines for {@link WORLD_FLAGS}. */
export const WORLD_FLAGS_HELP = `  --goal TEXT       the goal of a project folder without a task.json (what the agent is told)
  --verify CMD      its verifier: a command run in /workspace after the agent ends (exit 0 = success)
  --import-limit SIZE
                    the largest folder copied into the workspace (default 1g; task key
                    workspace.import_limit)`;

/** The {@link WorldFlags} given on the command line. */
export function worldFlags(values: { goal?: string; verify?: string; 'import-limit'?: string }): WorldFlags {
  return {
    ...(values.goal !== undefined ? { goal: values.goal } : {}),
    ...(values.verify !== undefined ? { verify: values.verify } : {}),
    ...(values['import-limit'] !== undefined ? { importLimit: values['import-limit'] } : {}),
  };
}

/**
 * The world at `path` (loadWorld), its notes on stderr (how the folder was read, what was
 * skipped); a path that is not one is a usage error naming what is wrong and the fix.
 */
export function loadWorldOrUsage(path: string, flags: WorldFlags, io: CliIo): World {
  const world = loadWorld(path, flags);
  if (!world.ok) throw new UsageError(world.error.message);
  for (const note of world.value.notes) io.stderr.write(`${note}\n`);
  return world.value;
}
