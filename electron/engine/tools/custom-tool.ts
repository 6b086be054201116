import { parseCommandTemplate, type TemplatePart } from '../../../shared/command-template.js';
import { err, ok } from '../../../shared/result.js';
import { toolFailure } from '../../../shared/tool-result.js';
import { declaredParameters, type CustomTool } from '../../../shared/task.js';
import type { MemoryWrite } from './tool-call.js';
import { checkArguments } from './json-schema-check.js';
import { resolvePointer, UNRESOLVED } from './json-pointer.js';
import { shellQuote } from './shell-quote.js';
import type { ToolExecutor } from './tool-executor.js';

/** An argument as one shell word: strings as-is, other JSON values as their JSON text. */
function argumentWord(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * Fills a command template (shared/command-template.ts): each declared `{name}` becomes
 * the argument as one shell-quoted word, so quotes, spaces, `$()` and newlines reach the
 * command literally; a missing optional argument is `''`. The template was checked at
 * task load to hold placeholders only in plain word positions, where quoting is enough;
 * other braces (`awk '{print $1}'`, `${HOME}`) are shell text.
 */
export function fillTemplate(parts: readonly TemplatePart[], args: Record<string, unknown>): string {
  return parts.map((p) => ('text' in p ? p.text : shellQuote(argumentWord(args[p.placeholder])))).join('');
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
  // parseTask refused unsafe templates; a task built without it is refused here, per call.
  const template = parseCommandTemplate(spec.command, declaredParameters(spec));
  return {
    name: spec.name,
    definition: {
      type: 'function',
      function: { name: spec.name, description: spec.description, parameters: spec.parameters },
    },
    timeoutMs,
    fallback: spec.fallback,
    validate(args) {
      const problems = checkArguments(spec.parameters, args);
      return problems.length ? err(problems.join('; ')) : ok(args);
    },
    async run(args, ctx, effectiveMs) {
      if (!template.ok) {
        return {
          result: toolFailure('tool_failed', `tool ${spec.name}: ${template.message}`),
          memoryWrites: [],
        };
      }
      const command = fillTemplate(template.parts, args as Record<string, unknown>);
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
