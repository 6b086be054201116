import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { didYouMean } from '../../../shared/did-you-mean.js';
import { decideFaults, faultsEnabled, type InjectedFault } from '../../../shared/faults.js';
import type { Task } from '../../../shared/task.js';
import { toolFailure, type ToolResult } from '../../../shared/tool-result.js';
import type { BuiltinToolName, OpenAiTool } from '../../../shared/tool-schemas.js';
import { SandboxFailure } from '../sandbox/sandbox.js';
import { parseArguments } from './arguments.js';
import { argumentCheck, type ArgumentCheck } from './argument-validator.js';
import { customTool } from './custom-tool.js';
import { executeShellTool } from './execute-shell.js';
import { listDirTool, readFileTool, writeFileTool } from './file-tools.js';
import { memoryReadTool, memoryWriteTool } from './memory-tools.js';
import { effectiveTimeoutMs, toolTimeoutSeconds } from './timeouts.js';
import type { ToolExecutor } from './tool-executor.js';
import type { ToolContext, ToolOutcome, ToolRegistry } from './tool-call.js';

const BUILTIN_FACTORIES: Record<BuiltinToolName, (timeoutMs: number) => ToolExecutor> = {
  execute_shell: executeShellTool,
  read_file: readFileTool,
  write_file: writeFileTool,
  list_dir: listDirTool,
  memory_read: memoryReadTool,
  memory_write: memoryWriteTool,
};

function outcome(result: ToolResult, faults: ToolOutcome['faults'] = []): ToolOutcome {
  return { result, memoryWrites: [], faults };
}

/** A sandbox that cannot run anything becomes a result the harness can act on (its status changes, not a throw). */
function failureResult(e: unknown, started: number): ToolResult {
  const ms = performance.now() - started;
  if (e instanceof SandboxFailure) {
    const code = e.code === 'network_unavailable' ? 'network_unavailable' : 'sandbox_lost';
    return toolFailure(code, code === e.code ? e.message : `${e.code}: ${e.message}`, ms);
  }
  const message = e instanceof Error ? e.message : String(e);
  return toolFailure('internal_error', `tool failed unexpectedly: ${message}`, ms);
}

/** The call's `timeout` argument in seconds, when it has one. */
function argTimeout(args: unknown): number | undefined {
  const t = (args as { timeout?: unknown }).timeout;
  return typeof t === 'number' ? t : undefined;
}

/** The registry of a task's enabled tools, with their names. */
export interface TaskToolRegistry extends ToolRegistry {
  /** The enabled tool names, in the task's order. */
  names(): string[];
}

/**
 * Builds the one registry the harness, the CLI and the bench call tools through. All
 * per-task work (definitions, timeouts, validators) happens here, so a call costs its
 * argument check and one sandbox operation.
 */
export function createToolRegistry(task: Task): TaskToolRegistry {
  const tools = new Map<string, ToolExecutor>();
  for (const t of task.tools) {
    if (typeof t === 'string') {
      const name = t as BuiltinToolName;
      tools.set(name, BUILTIN_FACTORIES[name](toolTimeoutSeconds(task, name) * 1000));
    } else {
      tools.set(t.name, customTool(t, toolTimeoutSeconds(task, t.name, t.timeout) * 1000));
    }
  }
  const definitions: OpenAiTool[] = [...tools.values()].map((t) => t.definition);
  // Compiled once per task: the same checks the model parser runs (argument-validator).
  const checks = new Map(
    [...tools.values()].map((t) => [t.name, argumentCheck(t.name, t.definition.function.parameters)]),
  );
  const names = [...tools.keys()];
  const injecting = faultsEnabled(task.faults);

  const unknownTool = (name: string): ToolResult => {
    const guess = didYouMean(name, names);
    return toolFailure(
      'unknown_tool',
      `unknown tool "${name}"${guess ? ` — did you mean "${guess}"?` : ''}; enabled tools: ${names.join(', ') || 'none'}`,
    );
  };

  return {
    definitions: () => definitions.map((d) => structuredClone(d)),
    has: (name) => tools.has(name),
    names: () => [...names],
    fallbackFor: (name) => tools.get(name)?.fallback,

    async call(name: string, rawArgs: unknown, ctx: ToolContext): Promise<ToolOutcome> {
      const started = performance.now();
      try {
        const tool = tools.get(name);
        if (!tool) return outcome(unknownTool(name));
        const parsed = parseArguments(rawArgs);
        if (!parsed.ok) return outcome(toolFailure('invalid_arguments', `${name}: ${parsed.error}`));
        const valid = (checks.get(name) as ArgumentCheck)(parsed.value);
        if (!valid.ok) return outcome(toolFailure('invalid_arguments', `${name}: ${valid.error}`));
        let timeoutMs = effectiveTimeoutMs(tool.timeoutMs, ctx.hardTimeoutMs, argTimeout(valid.value));
        if (!injecting) return { ...(await tool.run(valid.value, ctx, timeoutMs)), faults: [] };

        const injected = decideFaults(task.faults, ctx.step, ctx.callIndex);
        const faults = injected.map((f) => faultRecord(f, task, ctx));
        let delayMs = 0;
        for (const f of injected) {
          if (f.kind === 'latency') {
            delayMs = f.seconds * 1000;
            await sleep(Math.min(delayMs, timeoutMs));
            if (delayMs >= timeoutMs) {
              return outcome(
                toolFailure('timeout', `${name} did not finish within ${timeoutMs / 1000}s`, timeoutMs),
                faults,
              );
            }
            timeoutMs -= delayMs;
          } else if (f.kind === 'permission_error') {
            return outcome(toolFailure('permission_denied', `${name}: permission denied`, delayMs), faults);
          } else {
            return outcome(
              toolFailure(
                'tool_failed',
                `${name} failed before it could run (a transient failure); retrying may succeed`,
                delayMs,
              ),
              faults,
            );
          }
        }
        const run = await tool.run(valid.value, ctx, timeoutMs);
        const took = run.result.duration_ms;
        const result = { ...run.result, duration_ms: took === null ? null : took + delayMs };
        return { result, memoryWrites: run.memoryWrites, faults };
      } catch (e) {
        return outcome(failureResult(e, started));
      }
    },
  };
}

/** A fault as the harness records it (`fault` event `kind` and `detail`). */
function faultRecord(f: InjectedFault, task: Task, ctx: ToolContext): { kind: string; detail: unknown } {
  const where = { seed: task.faults.seed, step: ctx.step, call_index: ctx.callIndex };
  return { kind: f.kind, detail: f.kind === 'latency' ? { ...where, seconds: f.seconds } : where };
}
