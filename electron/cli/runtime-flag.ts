import { SandboxSpec, type Task } from '../../shared/task.js';
import { UsageError } from './command.js';

/**
 * `--runtime NAME`: the container runtime of the sandboxes a command starts (the task's
 * `sandbox.runtime`), e.g. `runsc` for gVisor. Taken by every command that makes a sandbox
 * from its flags or from a task file of the user's own (run, sandbox selftest, exec, shell).
 */
export const RUNTIME_FLAG = { runtime: { type: 'string' } } as const;

/** The help line of {@link RUNTIME_FLAG}. */
export const RUNTIME_HELP = `  --runtime NAME    the engine's container runtime for the sandbox, e.g. runsc (gVisor);
                    default: the task's sandbox.runtime, else the engine's default
                    (\`stepbox doctor\` names the runtimes the engine offers)`;

/** The runtime a `--runtime` value names; a usage error for an empty or malformed one. */
export function runtimeFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  // The task key's own rule (shared/task.ts): what a task file may name, the flag may too.
  if (!SandboxSpec.shape.runtime.safeParse(value).success)
    throw new UsageError(
      `--runtime: "${value}" is not a runtime name; give one the engine offers, such as runc or runsc (stepbox doctor lists them)`,
    );
  return value;
}

/** `task` with its sandbox on `runtime` (the task's own when the flag is not given). */
export function withRuntime(task: Task, runtime: string | undefined): Task {
  return runtime === undefined ? task : { ...task, sandbox: { ...task.sandbox, runtime } };
}
