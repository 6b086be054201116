import { readFileSync } from 'node:fs';
import { jsonErrorAt } from '../json-error.js';
import { AgentFailure, type Agent, type DecideInput, type Decision } from './agent.js';

/** One line of a script: an assistant message in OpenAI chat format. */
export interface ScriptLine {
  /** 1-based line number in the file, for messages. */
  readonly line: number;
  readonly message: { content: string | null; tool_calls?: unknown };
}

/**
 * Reads a scripted-agent JSONL file (Contracts: Scripted agent). Blank lines are skipped;
 * a line that is not a JSON object is a script error naming the line. Tool-call
 * arguments given as objects are turned into JSON strings, as the API sends them.
 */
export function readScript(path: string): ScriptLine[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AgentFailure('script_error', `cannot read script ${path}: ${(e as Error).message}`);
  }
  return parseScript(text, path);
}

/** Parses script text; `source` names the file in errors (never its content). */
export function parseScript(text: string, source: string): ScriptLine[] {
  const lines: ScriptLine[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      // Never the line itself: JSON.parse quotes it, and a path typed by mistake (or on
      // purpose: `scripted:/etc/passwd`) would show that file's content in the error.
      throw new AgentFailure(
        'script_error',
        `${source} line ${i + 1} is not JSON${jsonErrorAt(e, raw)}: a scripted agent's file has one JSON model output per line`,
      );
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      throw new AgentFailure(
        'script_error',
        `${source} line ${i + 1} must be a JSON object (an assistant message with content and/or tool_calls)`,
      );
    }
    const rec = value as Record<string, unknown>;
    const content =
      typeof rec.content === 'string'
        ? rec.content
        : rec.content == null
          ? null
          : JSON.stringify(rec.content);
    const message: ScriptLine['message'] = { content };
    if (rec.tool_calls !== undefined) message.tool_calls = normalizeToolCalls(rec.tool_calls);
    lines.push({ line: i + 1, message });
  });
  return lines;
}

/** Object arguments become JSON strings (the wire format); anything else is left for the parser to judge. */
function normalizeToolCalls(calls: unknown): unknown {
  if (!Array.isArray(calls)) return calls;
  return calls.map((c) => {
    if (!c || typeof c !== 'object') return c;
    const call = c as Record<string, unknown>;
    const fn = call.function as Record<string, unknown> | undefined;
    if (!fn || typeof fn !== 'object') return { type: 'function', ...call };
    const args = fn.arguments;
    const normalized = args !== null && typeof args === 'object' ? JSON.stringify(args) : args;
    return { type: 'function', ...call, function: { ...fn, arguments: normalized } };
  });
}

/** The raw text of an assistant message: its content, or the whole message when it has tool calls. */
export function rawOf(message: { content: string | null; tool_calls?: unknown }): string {
  if (message.tool_calls === undefined) return message.content ?? '';
  return JSON.stringify({ content: message.content, tool_calls: message.tool_calls });
}

/**
 * Plays a script one line per decision. `skip` lines are consumed up front: a fork or a
 * resume continuing the parent's script starts after the lines its steps already used.
 */
export class ScriptedAgent implements Agent {
  readonly kind = 'scripted' as const;
  private cursor: number;

  constructor(
    readonly spec: string,
    private readonly path: string,
    private readonly lines: readonly ScriptLine[],
    skip = 0,
  ) {
    this.cursor = skip;
  }

  async decide(_input: DecideInput): Promise<Decision> {
    const next = this.lines[this.cursor];
    if (!next) {
      throw new AgentFailure(
        'script_exhausted',
        `the script ${this.path} ran out after ${this.lines.length} line(s); add lines or end with a final answer`,
      );
    }
    this.cursor += 1;
    return { raw: rawOf(next.message), message: next.message, latencyMs: 0 };
  }

  /** Lines consumed so far (including skipped ones). */
  consumed(): number {
    return this.cursor;
  }

  describe(): Record<string, unknown> {
    return { path: this.path, lines: this.lines.length, skip: this.cursor };
  }
}
