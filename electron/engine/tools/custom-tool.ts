import type { CustomTool } from '../../../shared/task.js';
import type { MemoryWrite } from './tool-registry.js';
import { resolvePointer, UNRESOLVED } from './json-pointer.js';
import { shellQuote } from './shell-quote.js';
import type { ToolExecutor } from './tool-executor.js';

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** An argument as one shell word: strings as-is, other JSON values as their JSON text. */
function argumentWord(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Fills a command template: each `{name}` that is a declared parameter (or a given
 * argument) becomes the argument shell-quoted, so quotes, spaces, `$()` and newlines
 * reach the command literally; a missing optional argument is `''`. Other braces
 * (`awk '{print $1}'`, `${HOME}`) are left alone.
 */
export function fillTemplate(
  template: string,
  args: Record<string, unknown>,
  declared: readonly string[],
): string {
  return template.replace(PLACEHOLDER, (whole, name: string, offset: number) => {
    if (template[offset - 1] === '$') return whole;
    if (!declared.includes(name) && !(name in args)) return whole;
    return shellQuote(argumentWord(args[name]));
  });
}

/**
 * The memory values a custom tool's `writes_memory` takes from its stdout: stdout
 * parsed as JSON and each key's pointer resolved; pointer `""` is the whole document,
 * or the whole stdout (trimmed of its last newline) as a string when it is not JSON.
 * Keys whose pointer does not resolve are listed in `skipped`, not written.
 */
export function memoryValuesFrom(
  writes: Readonly<Record<string, string>>,
  stdout: string,
): { values: { key: string; value: unknown }[]; skipped: string[] } {
  let doc: unknown = UNRESOLVED;
  try {
    doc = JSON.parse(stdout);
  } catch {
    // Not JSON: only pointer "" can take a value, the raw text.
  }
  const values: { key: string; value: unknown }[] = [];
  const skipped: string[] = [];
  for (const [key, pointer] of Object.entries(writes)) {
    const value =
      doc === UNRESOLVED
        ? pointer === ''
          ? stdout.replace(/\r?\n$/, '')
          : UNRESOLVED
        : resolvePointer(doc, pointer);
    if (value === UNRESOLVED) skipped.push(key);
    else values.push({ key, value });
  }
  return { values, skipped };
}

/** A task-defined tool: its command template run in a fresh shell (cwd /workspace), arguments shell-quoted. */
export function customTool(spec: CustomTool, timeoutMs: number): ToolExecutor {
  const properties = (spec.parameters.properties ?? {}) as Record<string, unknown>;
  const declared = Object.keys(properties);
  return {
    name: spec.name,
    definition: {
      type: 'function',
      function: { name: spec.name, description: spec.description, parameters: spec.parameters },
    },
    timeoutMs,
    fallback: spec.fallback,
    async run(args, ctx, effectiveMs) {
      const command = fillTemplate(spec.command, args as Record<string, unknown>, declared);
      const result = await ctx.sandbox.exec({ command, timeoutMs: effectiveMs, fresh: true });
      if (!spec.writes_memory || !result.ok || result.exit_code !== 0) return { result, memoryWrites: [] };
      const { values, skipped } = memoryValuesFrom(spec.writes_memory, result.stdout ?? '');
      const memoryWrites: MemoryWrite[] = values.map(({ key, value }) =>
        ctx.memory.set(key, value, spec.name),
      );
      const data = skipped.length ? { memory_skipped: skipped } : undefined;
      return { result: data ? { ...result, data } : result, memoryWrites };
    },
  };
}
