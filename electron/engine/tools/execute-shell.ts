import { builtinToolDefinition } from '../../../shared/tool-schemas.js';
import { runOf, type ToolExecutor } from './tool-executor.js';

/** `execute_shell {command, timeout?}`: one call into the sandbox's persistent session, nothing more. */
export function executeShellTool(timeoutMs: number): ToolExecutor {
  return {
    name: 'execute_shell',
    definition: builtinToolDefinition('execute_shell'),
    timeoutMs,
    async run(args, ctx, effectiveMs) {
      const { command } = args as { command: string };
      return runOf(await ctx.sandbox.exec({ command, timeoutMs: effectiveMs }));
    },
  };
}
