import { notOfferedTools } from '../step-summary.js';
import { taskToolNames } from '../task.js';
import type { TraceEvent } from '../trace-events.js';
import { flag, type Flag } from './flag.js';
import type { QaInput } from './qa-input.js';

/** The tool names an assistant message asked for (structured `tool_calls`), in order. */
function requestedNames(message: unknown): string[] {
  if (!message || typeof message !== 'object') return [];
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.flatMap((c) => {
    const fn = c && typeof c === 'object' ? (c as { function?: unknown }).function : undefined;
    const name = fn && typeof fn === 'object' ? (fn as { name?: unknown }).name : undefined;
    return typeof name === 'string' && name !== '' ? [name] : [];
  });
}

/**
 * The function tools a recorded model request offered (`tools[].function.name` or
 * `tools[].name`): an agent that runs its own tools (Codex CLI, Claude Code) offers
 * its model tools the task does not list, and calling them is no mistake.
 */
function requestToolNames(request: unknown): string[] {
  if (!request || typeof request !== 'object') return [];
  const tools = (request as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((t) => {
    if (!t || typeof t !== 'object') return [];
    const fn = (t as { function?: unknown }).function;
    const name =
      fn && typeof fn === 'object' ? (fn as { name?: unknown }).name : (t as { name?: unknown }).name;
    return typeof name === 'string' && name !== '' ? [name] : [];
  });
}

/**
 * `unknown_tool`: a step calls a tool the task does not offer — a structured call the
 * parser refused, a text-written call it named in its message, or a call that reached the
 * registry and came back `unknown_tool` (an external agent's MCP call). One warning per
 * step, naming the tools; it is judged on the step alone, so it also runs live.
 */
export function checkUnknownTool(input: QaInput): Flag[] {
  const offered = new Set(taskToolNames(input.task));
  const perStep = new Map<number, Set<string>>();
  /** What each step's request offered besides the task's tools. */
  const requested = new Map<number, Set<string>>();
  const add = (step: number, name: string) => {
    if (offered.has(name) || requested.get(step)?.has(name)) return;
    const names = perStep.get(step) ?? new Set<string>();
    names.add(name);
    perStep.set(step, names);
  };
  const outputs = new Map<number, TraceEvent>();
  for (const e of input.events) {
    if (e.type === 'model_request') requested.set(e.step, new Set(requestToolNames(e.request)));
    else if (e.type === 'model_output') outputs.set(e.step, e);
    else if (e.type === 'parse_error') {
      const out = outputs.get(e.step);
      for (const name of out?.type === 'model_output' ? requestedNames(out.message) : []) add(e.step, name);
      for (const name of notOfferedTools(e.message)) add(e.step, name);
    } else if (e.type === 'tool_call') add(e.step, e.name);
    else if (e.type === 'tool_result' && e.result.error?.code === 'unknown_tool') {
      const names = perStep.get(e.step) ?? new Set<string>();
      names.add(e.name);
      perStep.set(e.step, names);
    }
  }
  const offeredList = [...offered].join(', ');
  return [...perStep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([step, names]) =>
      flag(
        'unknown_tool',
        step,
        'warning',
        `step ${step} called ${[...names].map((n) => `"${n}"`).join(', ')}, which the task does not offer (tools: ${offeredList})`,
        { tools: [...names], offered: [...offered] },
      ),
    );
}
