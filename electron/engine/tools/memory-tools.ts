import { didYouMean } from '../../../shared/did-you-mean.js';
import { toolFailure } from '../../../shared/tool-result.js';
import { builtinToolDefinition } from '../../../shared/tool-schemas.js';
import { runOf, type ToolExecutor } from './tool-executor.js';

/** `memory_read {key}`: the value as JSON in `stdout` and `data.value`; a missing key is `not_found`. */
export function memoryReadTool(timeoutMs: number): ToolExecutor {
  return {
    name: 'memory_read',
    definition: builtinToolDefinition('memory_read'),
    timeoutMs,
    async run(args, ctx) {
      const { key } = args as { key: string };
      if (!ctx.memory.has(key)) {
        const keys = Object.keys(ctx.memory.snapshot());
        const guess = didYouMean(key, keys);
        return runOf(
          toolFailure(
            'not_found',
            `memory key "${key}" is not set${guess ? ` — did you mean "${guess}"?` : ''} (set keys: ${keys.join(', ') || 'none'})`,
          ),
        );
      }
      const value = ctx.memory.get(key);
      const stdout = JSON.stringify(value) ?? 'null';
      return runOf({
        ok: true,
        stdout,
        data: { key, value },
        duration_ms: 0,
        bytes: Buffer.byteLength(stdout),
      });
    },
  };
}

/** `memory_write {key, value}`: writes any JSON value; the write is reported for the trace (writer `memory_write`). */
export function memoryWriteTool(timeoutMs: number): ToolExecutor {
  return {
    name: 'memory_write',
    definition: builtinToolDefinition('memory_write'),
    timeoutMs,
    async run(args, ctx) {
      const { key, value } = args as { key: string; value: unknown };
      const write = ctx.memory.set(key, value, 'memory_write');
      const stdout = `memory key "${key}" set`;
      return {
        result: {
          ok: true,
          stdout,
          data: { key, value: write.after },
          duration_ms: 0,
          bytes: Buffer.byteLength(stdout),
        },
        memoryWrites: [write],
      };
    },
  };
}
