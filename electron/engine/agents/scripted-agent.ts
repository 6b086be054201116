import { countOf } from '../../../shared/count-of.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathForPeople, pathRoots } from '../../../shared/start-paths.js';
import { jsonErrorAt } from '../json-error.js';
import { chatFromGeminiResponse } from '../model-api/gemini-api.js';
import {
  NEEDS_NOTHING,
  type AgentNeeds,
  AgentFailure,
  type Agent,
  type ChatMessage,
  type DecideInput,
  type Decision,
} from './agent.js';

/** One line of a script: an assistant message in OpenAI chat format. */
export interface ScriptLine {
  /** 1-based line number in the file, for messages. */
  readonly line: number;
  readonly message: { content: string | null; tool_calls?: unknown };
}

/**
 * The context window a script's model plays (a line `{"context_window": {"max_chars": N}}`):
 * before each decision the conversation is cut to its newest messages that fit in N
 * characters of content (the newest always kept), the way a truncating context policy
 * cuts a real model's prompt — the goal goes first. The cut request is returned as the
 * decision's request, so the trace records what the model was shown.
 */
export interface ContextWindow {
  readonly maxChars: number;
}

/** A parsed script: its decisions and the context window its model plays, if any. */
export interface ScriptFile {
  readonly lines: ScriptLine[];
  readonly contextWindow?: ContextWindow;
}

/**
 * Reads a scripted-agent JSONL file (Contracts: Scripted agent). Blank lines are skipped;
 * a line that is not a JSON object is a script error naming the line. Tool-call
 * arguments given as objects are turned into JSON strings, as the API sends them.
 */
export function readScript(path: string): ScriptLine[] {
  return readScriptFile(path).lines;
}

/** Reads a script file with its settings (see {@link ContextWindow}). */
export function readScriptFile(path: string): ScriptFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AgentFailure('script_error', `cannot read script ${path}: ${(e as Error).message}`);
  }
  return parseScriptFile(text, path);
}

/** Parses script text; `source` names the file in errors (never its content). */
export function parseScript(text: string, source: string): ScriptLine[] {
  return parseScriptFile(text, source).lines;
}

/** Parses script text with its settings; a `context_window` line is a setting, not a decision. */
export function parseScriptFile(text: string, source: string): ScriptFile {
  const lines: ScriptLine[] = [];
  let contextWindow: ContextWindow | undefined;
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
    if ('context_window' in rec) {
      const max = (rec.context_window as { max_chars?: unknown } | null)?.max_chars;
      if (Object.keys(rec).length !== 1 || typeof max !== 'number' || !Number.isInteger(max) || max <= 0)
        throw new AgentFailure(
          'script_error',
          `${source} line ${i + 1}: a context_window line is {"context_window": {"max_chars": N}} with N a positive integer, alone on its line`,
        );
      contextWindow = { maxChars: max };
      return;
    }
    const gemini = geminiLine(rec, i + 1);
    if (gemini) {
      lines.push({ line: i + 1, message: gemini });
      return;
    }
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
  return contextWindow ? { lines, contextWindow } : { lines };
}

/**
 * A line in Gemini's form — a candidate's content `{"role": "model", "parts": [...]}`, or a
 * whole response `{"candidates": [...]}` — as the Chat message every API is answered from;
 * a functionCall without an `id` gets `call_LINE_N`. Null for any other line.
 */
function geminiLine(rec: Record<string, unknown>, line: number): ScriptLine['message'] | null {
  const isParts = Array.isArray(rec.parts) && !('content' in rec) && !('tool_calls' in rec);
  if (!isParts && !Array.isArray(rec.candidates)) return null;
  const response = isParts ? { candidates: [{ content: rec }] } : rec;
  const { message } = chatFromGeminiResponse(response, `call_${line}`);
  return message.tool_calls
    ? { content: message.content, tool_calls: message.tool_calls }
    : { content: message.content };
}

/** The newest messages whose content fits in `maxChars` (the newest always kept): a truncating context policy. */
export function truncateContext(messages: readonly ChatMessage[], maxChars: number): ChatMessage[] {
  const kept: ChatMessage[] = [];
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    const size = (m.content ?? '').length + (m.tool_calls ? JSON.stringify(m.tool_calls).length : 0);
    if (kept.length > 0 && used + size > maxChars) break;
    kept.unshift(m);
    used += size;
  }
  return kept;
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
 * What to do about a script that ran out, for whoever reads it. A case's script (its folder,
 * or the folder above a `fixed/` variant, holds the case's `expected.json`: case-library.ts)
 * stands in for an agent program that stopped: the person studying the case is told what it
 * shows and how an agent should end, not to edit the bundled script ("add lines" was the
 * fatal-error case's advice). A script of one's own is told how to fix it.
 */
export function exhaustedAdvice(path: string): string {
  const folder = dirname(path);
  const inCase = [folder, dirname(folder)].some((d) => existsSync(join(d, 'expected.json')));
  return inCase
    ? 'the agent it stands in for stopped with no final answer, as an agent that crashes does. Its last step shows what it did; an agent that finishes its work ends with a final answer, so the verifier can run'
    : 'add lines or end with a final answer';
}

/**
 * Plays a script one line per decision. `skip` lines are consumed up front: a fork or a
 * resume continuing the parent's script starts after the lines its steps already used.
 */
export class ScriptedAgent implements Agent {
  readonly kind = 'scripted' as const;
  /** It plays a script: a rollback or fork rebuilds it past the lines consumed. */
  readonly needs: AgentNeeds = { ...NEEDS_NOTHING, position: this };
  private cursor: number;

  constructor(
    readonly spec: string,
    private readonly path: string,
    private readonly lines: readonly ScriptLine[],
    skip = 0,
    private readonly contextWindow?: ContextWindow,
    /** The store's folder: a script there is named from `$STEPBOX_HOME` in what the trace records. */
    private readonly storeHome?: string,
  ) {
    this.cursor = skip;
  }

  async decide(input: DecideInput): Promise<Decision> {
    const next = this.lines[this.cursor];
    if (!next) {
      // The message goes into the trace, its QA flag and a shared page: the script is named
      // from its folder or the store, not by the host's whole path (/work/…/fatal-error/agent.jsonl).
      throw new AgentFailure(
        'script_exhausted',
        `the script ${pathForPeople(this.path, pathRoots(this.storeHome))} ran out after ${countOf(this.lines.length, 'line')}; ${exhaustedAdvice(this.path)}`,
      );
    }
    this.cursor += 1;
    const decision = { raw: rawOf(next.message), message: next.message, latencyMs: 0 };
    if (!this.contextWindow) return decision;
    return {
      ...decision,
      request: { messages: truncateContext(input.messages, this.contextWindow.maxChars), tools: input.tools },
    };
  }

  /** Lines consumed so far (including skipped ones). */
  consumed(): number {
    return this.cursor;
  }

  describe(): Record<string, unknown> {
    return {
      path: this.path,
      lines: this.lines.length,
      skip: this.cursor,
      ...(this.contextWindow ? { context_window: { max_chars: this.contextWindow.maxChars } } : {}),
    };
  }
}
