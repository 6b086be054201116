import { notEnabledText } from '../../../shared/step-summary.js';
import type { OpenAiTool } from '../../../shared/tool-schemas.js';
import type { ToolCall } from '../../../shared/trace-events.js';
import { argumentCheck } from '../tools/argument-validator.js';
import { parseArguments } from '../tools/arguments.js';

/**
 * A model output parsed into an action (Contracts: Scripted agent, which every agent
 * kind follows): tool calls, a final answer, or a parse error whose message tells the
 * agent exactly what was wrong and becomes its next observation.
 */
export type ParsedAction =
  | { readonly kind: 'calls'; readonly calls: readonly ToolCall[]; readonly via: 'tool_calls' | 'text' }
  | { readonly kind: 'final'; readonly text: string }
  | {
      readonly kind: 'parse_error';
      readonly message: string;
      /** Ids of the structured tool calls the model made, each of which must be answered. */
      readonly callIds: readonly string[];
      readonly via: 'tool_calls' | 'text' | 'empty';
    };

/** The assistant message an agent returned. */
export interface AssistantOutput {
  readonly content: string | null;
  readonly tool_calls?: unknown;
}

const FORMAT_HINT =
  'Call a tool with the tool_calls field, or write one JSON object {"name": "<tool>", "arguments": {...}}; plain text without one is taken as your final answer.';

/** Parses one model output against the enabled tools. `step` seeds ids of calls made in text. */
export function parseAction(
  output: AssistantOutput,
  tools: readonly OpenAiTool[],
  step: number,
): ParsedAction {
  const rawCalls = output.tool_calls;
  if (Array.isArray(rawCalls) && rawCalls.length > 0) return parseToolCalls(rawCalls, tools, step);
  if (rawCalls !== undefined && rawCalls !== null && !Array.isArray(rawCalls)) {
    return parseError(
      `tool_calls must be an array, got ${typeof rawCalls}. ${FORMAT_HINT}`,
      [],
      'tool_calls',
    );
  }
  const text = typeof output.content === 'string' ? output.content : '';
  if (text.trim() === '') {
    return parseError(`The output was empty: no text and no tool call. ${FORMAT_HINT}`, [], 'empty');
  }
  const attempt = textAttempt(text);
  if (attempt === null) return { kind: 'final', text };
  return parseTextCall(attempt, tools, step);
}

function parseError(message: string, callIds: string[], via: 'tool_calls' | 'text' | 'empty'): ParsedAction {
  return { kind: 'parse_error', message, callIds, via };
}

function parseToolCalls(rawCalls: unknown[], tools: readonly OpenAiTool[], step: number): ParsedAction {
  const calls: ToolCall[] = [];
  const problems: string[] = [];
  const ids: string[] = [];
  rawCalls.forEach((raw, i) => {
    // Counted as a person counts (it read `tool_calls[0]`, the field's index, in the window).
    const label = `tool call ${i + 1}`;
    const rec = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const id = typeof rec.id === 'string' && rec.id !== '' ? rec.id : `call_${step}_${i + 1}`;
    ids.push(id);
    const fn = rec.function as Record<string, unknown> | undefined;
    if (!fn || typeof fn !== 'object') {
      problems.push(`${label} has no "function" object with a name and arguments`);
      return;
    }
    const checked = checkCall(fn.name, fn.arguments, tools, label);
    if (typeof checked === 'string') problems.push(checked);
    else calls.push({ id, name: checked.name, arguments: checked.args });
  });
  if (problems.length > 0) return parseError(problems.join('\n'), ids, 'tool_calls');
  return { kind: 'calls', calls, via: 'tool_calls' };
}

/** The text of a tool call attempt written as text, or null when the text is a final answer. */
function textAttempt(text: string): string | null {
  const fence = /```[^\n`]*\n?([\s\S]*?)(```|$)/.exec(text);
  if (fence) return fence[1];
  if (/"(name|tool|function)"\s*:/.test(text) || /^\s*\{/.test(text)) {
    const start = text.indexOf('{');
    const end = text.lastIndexOf('}');
    return start >= 0 ? text.slice(start, end > start ? end + 1 : undefined) : text;
  }
  return null;
}

function parseTextCall(body: string, tools: readonly OpenAiTool[], step: number): ParsedAction {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return parseError(
      `Your tool call is not valid JSON (${(e as Error).message}): ${snippet(body)}. ${FORMAT_HINT}`,
      [],
      'text',
    );
  }
  const items = Array.isArray(value) ? value : [value];
  if (items.length === 0)
    return parseError(`Your tool call is an empty JSON array. ${FORMAT_HINT}`, [], 'text');
  const calls: ToolCall[] = [];
  const problems: string[] = [];
  items.forEach((item, i) => {
    const label = items.length > 1 ? `call ${i + 1}` : 'your tool call';
    if (!item || typeof item !== 'object' || Array.isArray(item)) {
      problems.push(
        `${label} must be a JSON object {"name": ..., "arguments": {...}}, got ${snippet(JSON.stringify(item))}`,
      );
      return;
    }
    const rec = item as Record<string, unknown>;
    let name: unknown = rec.name ?? rec.tool;
    let args: unknown = rec.arguments ?? rec.args ?? rec.parameters;
    if (rec.function !== undefined) {
      if (rec.function && typeof rec.function === 'object') {
        const fn = rec.function as Record<string, unknown>;
        name = fn.name;
        args = fn.arguments ?? fn.parameters ?? args;
      } else name = rec.function;
    }
    const checked = checkCall(name, args ?? {}, tools, label);
    if (typeof checked === 'string') problems.push(checked);
    else calls.push({ id: `call_${step}_${i + 1}`, name: checked.name, arguments: checked.args });
  });
  if (problems.length > 0) return parseError(problems.join('\n'), [], 'text');
  return { kind: 'calls', calls, via: 'text' };
}

/** Validates a name and arguments; returns the call or a sentence saying what is wrong. */
function checkCall(
  name: unknown,
  rawArgs: unknown,
  tools: readonly OpenAiTool[],
  label: string,
): { name: string; args: Record<string, unknown> } | string {
  const names = tools.map((t) => t.function.name);
  if (typeof name !== 'string' || name === '') {
    return `${label} has no tool name (expected one of: ${names.join(', ')})`;
  }
  const tool = tools.find((t) => t.function.name === name);
  if (!tool) return notEnabledText(label, name, names);
  // The registry reads arguments the same way: one bad call, one message, whichever path finds it.
  const args = parseArguments(rawArgs);
  if (!args.ok) return `${label} (${name}): ${args.error}`;
  const valid = argumentCheck(name, tool.function.parameters)(args.value);
  if (!valid.ok) return `${label} (${name}): ${valid.error}`;
  return { name, args: args.value };
}

function snippet(text: string | undefined): string {
  const t = text ?? 'undefined';
  return t.length > 120 ? `${t.slice(0, 117)}...` : t;
}
