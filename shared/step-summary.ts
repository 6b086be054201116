import { assertNever } from './assert-never.js';
import { formatBytes, utf8Length } from './format-bytes.js';
import { ordinal } from './count-of.js';
import type { ToolResult } from './tool-result.js';
import { measuredDuration } from './tool-duration.js';
import type { TraceEvent, TraceEventOf } from './trace-events.js';
import { execWrapperOf, exitCodeOf } from './exec-wrapper.js';
import { jsonHead, JsonHeadWriter } from './json-head.js';
import { errorMarkText } from './end-words.js';
import { MAX_SUMMARY, oneLine, READ_PER_CHARACTER } from './one-line.js';

/** A tool call of a step. */
export interface StepCall {
  readonly call_id: string;
  readonly name: string;
  readonly arguments: Record<string, unknown>;
  /** `{command: "ls -la"}`: every argument, shortened to one line (filled by {@link finishStep}). */
  readonly args_summary: string;
  /** The argument a person looks for first (the command, the path, the key), one line. */
  readonly detail: string;
}

/** A tool result reduced to its outcome. */
export interface ResultOutcome {
  readonly ok: boolean;
  readonly exit_code: number | null;
  readonly error_code: string | null;
}

/** A tool result as the agent saw it, with what really happened when that differs. */
export interface StepResult extends ResultOutcome {
  readonly call_id: string;
  readonly name: string;
  /**
   * Null when not known: the agent ran the call itself (see {@link ToolResult}), or a person gave
   * the result and the tool never ran ({@link measuredDuration}).
   */
  readonly duration_ms: number | null;
  readonly fallback: boolean;
  /** True when an `override` event replaced what the agent saw. */
  readonly overridden: boolean;
  /** What the tool really returned when the agent saw something else (a hard timeout's fallback, an override). */
  readonly real: ResultOutcome | null;
}

/**
 * Something that did not come from the agent or the tool: injection, override, human
 * command, a person's edit of the decided action, or a result a person gave instead of
 * running the tool.
 */
export interface StepIntervention {
  readonly type: 'injected' | 'override' | 'human_command' | 'edit' | 'replaced';
  readonly source: string;
  readonly summary: string;
}

/** A memory write of a step. */
export interface StepMemoryWrite {
  readonly key: string;
  readonly before: unknown;
  readonly after: unknown;
  readonly writer: string;
  readonly corruption: string | null;
}

/**
 * One step of a branch, as `stepbox show`, the index, reports and the window's timeline
 * present it. Step 0 is the setup (kind `setup`): what a person did in the terminal
 * before the first decision is recorded there.
 */
export interface StepSummary {
  readonly step: number;
  /** What the agent did: tool calls, a final answer, a parse error, nothing yet (an incomplete step), or setup. */
  readonly kind: 'setup' | 'tool' | 'final' | 'parse_error' | 'none';
  /**
   * One readable line: `execute_shell {command: "ls"}`, `final: "done"`, `parse error: …`
   * (filled by {@link finishStep}: the window's live fold does not need it).
   */
  readonly action: string;
  readonly calls: readonly StepCall[];
  readonly results: readonly StepResult[];
  readonly final: string | null;
  readonly parse_error: string | null;
  readonly injected: readonly StepIntervention[];
  readonly memory_writes: readonly StepMemoryWrite[];
  /** Sum of the step's (non-final) reward totals; null when none was recorded. */
  readonly reward: number | null;
  readonly reward_components: Readonly<Record<string, number>>;
  /** Changed-file count of snapshot k; null when the step has no snapshot (incomplete). */
  readonly changed: number | null;
  /** The paths snapshot k changed (empty without a snapshot). */
  readonly changed_paths: readonly string[];
  readonly tree_hash: string | null;
  readonly errors: readonly { code: string; message: string; fatal: boolean }[];
  readonly warnings: readonly { code: string; message: string }[];
  /**
   * Rollbacks recorded at this step: inside it (`mid_step`: a hard timeout restores step k-1 and
   * the step goes on), or after it finished (a person's rollback to an earlier step, which ends
   * this branch here).
   */
  readonly rollbacks: readonly { to_step: number; reason: string; mid_step: boolean }[];
  /**
   * The calls the model's answer decided (a person's edit of it, if any), as written: what a
   * step held before it ran and never run (kind `none`) shows in its row instead of nothing.
   */
  readonly decided: readonly DecidedCall[];
}

/** A call an assistant message decides, its arguments as the model wrote them (often a JSON string). */
export interface DecidedCall {
  readonly name: string;
  readonly arguments: unknown;
}

const MAX_DETAIL = 160;

/**
 * A short readable summary of tool arguments: `{command: "ls -la"}`. The agent's arguments can be
 * a 20 MB string or a million items: only the start {@link oneLine} reads is written ({@link jsonHead}).
 */
export function argsSummary(args: Record<string, unknown>, max = MAX_SUMMARY): string {
  const w = new JsonHeadWriter(max * READ_PER_CHARACTER);
  w.raw('{');
  let first = true;
  // for…in, not Object.entries: a million keys are not listed to write the first few.
  for (const k in args) {
    if (w.full) break;
    if (!Object.prototype.hasOwnProperty.call(args, k)) continue;
    w.raw(`${first ? '' : ', '}${k}: `);
    if (!w.value(args[k], k)) w.raw('undefined');
    first = false;
  }
  w.raw('}');
  return oneLine(w.text, max);
}

/**
 * A value's JSON on one line of at most `max` characters, only its start written ({@link jsonHead}):
 * `oneLine(JSON.stringify(value))` without stringifying a 20 MB memory value or argument whole.
 * `absent` is said for what JSON cannot write (undefined, a function).
 */
export function oneLineJson(value: unknown, max: number, absent = ''): string {
  return oneLine(jsonHead(value, max * READ_PER_CHARACTER) ?? absent, max);
}

/** The argument that holds a shell tool's command line, by agent (ours, Claude Code, Codex). */
const SHELL_ARGS = ['command', 'cmd'] as const;

/** The argument of a call a person looks for first: the command, the path, the key, or compact JSON. */
export function callDetail(_name: string, args: Record<string, unknown>): string {
  // A shell call says its command line whichever agent's tool it is: execute_shell and
  // Claude Code's Bash take `command`, Codex's exec_command takes `cmd`.
  const shell = SHELL_ARGS.map((k) => args[k]).find((v) => typeof v === 'string');
  const pick = shell ?? args.path ?? args.key ?? args.query;
  return typeof pick === 'string' ? oneLine(pick, MAX_DETAIL) : oneLineJson(args, MAX_DETAIL);
}

/**
 * A call on one line as a person reads it: its tool and {@link callDetail}, with the size of
 * what it writes (`write_file notes.txt (12 B)`, `Bash ls -la`). The terminal's recorded lines and
 * the edit note printed `write_file {"path":…,"content":…}` whole.
 */
export function callText(name: string, args: Record<string, unknown>): string {
  const content = args.content;
  const size = typeof content === 'string' ? ` (${formatBytes(utf8Length(content))})` : '';
  return `${name} ${callDetail(name, args)}${size}`;
}

/** `"NAME" is not an enabled tool`: the parser's words for a call of a tool the task does not offer. */
const NOT_ENABLED = /"([^"]+)" is not an enabled tool/g;

/**
 * The parser's words for a call of a tool the task does not offer, written here beside the
 * pattern that reads them back (recorded traces keep only these words).
 */
export function notEnabledText(label: string, name: string, enabled: readonly string[]): string {
  return `${label}: "${name}" is not an enabled tool (enabled: ${enabled.join(', ')})`;
}

/**
 * The tools a parse error says the agent asked for and the task does not offer, in order, once
 * each (`tool call 1: "run_tests" is not an enabled tool …` → `["run_tests"]`): the step's
 * row names them as its tools and the `unknown_tool` rule flags them, from these same words.
 */
export function notOfferedTools(parseError: string | null): string[] {
  if (!parseError) return [];
  return [...new Set(Array.from(parseError.matchAll(NOT_ENABLED), (m) => m[1]))];
}

/**
 * A step's parse error as the inspector says it: what became of the step, then the parser's
 * words as a sentence of their own — `Unknown tool, so the call was refused. Tool call 1:
 * "run_tests" is not an enabled tool …`. It read "…the call was refused: tool call 1: …", two
 * colons in a row.
 */
export function refusalText(parseError: string): string {
  const what = notOfferedTools(parseError).length
    ? 'Unknown tool, so the call was refused.'
    : 'Parse error, so nothing ran.';
  const words = parseError.trim();
  return `${what} ${words.charAt(0).toUpperCase()}${words.slice(1)}`;
}

/** An outcome in words: `exit 137`, `error timeout`, `ok`. */
export function outcomeText(r: ResultOutcome): string {
  if (!r.ok)
    return `error ${r.error_code ?? 'unknown'}${r.exit_code === null ? '' : `, exit ${r.exit_code}`}`;
  return r.exit_code === null ? 'ok' : `exit ${r.exit_code}`;
}

/**
 * A tool result on one line for people watching: its outcome, then the error message or
 * the start of stdout (`exit 3  hi`, `error timeout: took too long`, `ok`).
 */
export function resultLine(r: ToolResult, max = MAX_SUMMARY): string {
  // An agent's own exec tool: the exit its header says, and the output under it (not "Chunk ID: …").
  const wrapper = execWrapperOf(r);
  const outcome = outcomeText(outcomeOf(r));
  if (r.error) return `${outcome}: ${oneLine(r.error.message, max)}`;
  const out = oneLine(wrapper ? wrapper.output : (r.stdout ?? ''), max);
  return out ? `${outcome}  ${out}` : outcome;
}

/** A result's outcome; an agent's own tool's exit is the one its output's header says ({@link exitCodeOf}). */
function outcomeOf(r: ToolResult): ResultOutcome {
  return { ok: r.ok, exit_code: exitCodeOf(r), error_code: r.error?.code ?? null };
}

function sameOutcome(a: ResultOutcome, b: ResultOutcome): boolean {
  return a.ok === b.ok && a.exit_code === b.exit_code && a.error_code === b.error_code;
}

function reduceResult(e: TraceEventOf<'tool_result'> | TraceEventOf<'override'>, name: string): StepResult {
  const shown = e.type === 'override' ? e.shown : e.result;
  const real = e.type === 'override' ? e.real : (e.real ?? null);
  const realOutcome = real ? outcomeOf(real) : null;
  return {
    call_id: e.call_id,
    name,
    ...outcomeOf(shown),
    duration_ms: measuredDuration(shown, real, e.type === 'tool_result' && e.replaced === true),
    fallback: shown.fallback === true,
    overridden: e.type === 'override',
    // A real result identical in outcome to the shown one says nothing new.
    real:
      realOutcome && !(e.type === 'tool_result' && sameOutcome(realOutcome, outcomeOf(shown)))
        ? realOutcome
        : null,
  };
}

// Shared empties: the fold never mutates, and a 10,000-step trace allocates less.
const NONE: readonly never[] = Object.freeze([]);
const NO_COMPONENTS: Readonly<Record<string, number>> = Object.freeze({});

/** An empty summary of step `step` (nothing recorded yet). */
export function emptyStep(step: number): StepSummary {
  return {
    step,
    kind: step === 0 ? 'setup' : 'none',
    action: step === 0 ? 'setup' : '(no action recorded)',
    calls: NONE,
    results: NONE,
    final: null,
    parse_error: null,
    injected: NONE,
    memory_writes: NONE,
    reward: null,
    reward_components: NO_COMPONENTS,
    changed: null,
    changed_paths: NONE,
    tree_hash: null,
    errors: NONE,
    warnings: NONE,
    rollbacks: NONE,
    decided: NONE,
  };
}

/**
 * An assistant message's text and tool calls, read field by field (not with the zod schema of
 * shared/held-action: the window's first chunk, which reads this, loads no zod), or null when
 * `value` is not one.
 */
export function decidedMessage(value: unknown): { content: string | null; calls: DecidedCall[] } | null {
  if (typeof value !== 'object' || value === null) return null;
  const m = value as { content?: unknown; tool_calls?: unknown };
  const calls: DecidedCall[] = [];
  for (const c of Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : []) {
    const fn = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    if (typeof fn?.name === 'string') calls.push({ name: fn.name, arguments: fn.arguments });
  }
  return { content: typeof m.content === 'string' ? m.content : null, calls };
}

/** A JSON string's value, else the text itself (arguments a model wrote that are not JSON). */
export function jsonOr(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** A decided call's one-line detail ({@link callDetail}), its arguments parsed where they are JSON. */
export function decidedDetail(c: DecidedCall): string {
  const args = jsonOr(c.arguments);
  return typeof args === 'object' && args !== null && !Array.isArray(args)
    ? callDetail(c.name, args as Record<string, unknown>)
    : typeof args === 'string'
      ? oneLine(args, MAX_DETAIL)
      : oneLineJson(args, MAX_DETAIL);
}

/** What an agent decided at a step: its calls, its final answer, or why its answer did not parse. */
export interface DecidedAction {
  readonly final: string | null;
  readonly parse_error?: string | null;
  readonly calls: readonly { readonly name: string; readonly arguments: Record<string, unknown> }[];
}

/**
 * A decided action in one line: THE wording of `stepbox show`, the CLI's progress lines
 * and `stepbox candidates` (`write_file path=…; …`, `final: "…"`, `parse error: …`).
 */
export function actionText(a: DecidedAction, max = MAX_SUMMARY): string {
  if (a.parse_error) return `parse error: ${oneLine(a.parse_error, max)}`;
  if (a.calls.length) return a.calls.map((c) => `${c.name} ${argsSummary(c.arguments, max)}`).join('; ');
  if (a.final !== null) return `final: ${JSON.stringify(oneLine(a.final, max))}`;
  return '(no action recorded)';
}

function describeAction(s: StepSummary): string {
  switch (s.kind) {
    case 'setup':
      return 'setup';
    case 'final':
      return actionText({ final: s.final ?? '', calls: [] });
    case 'parse_error':
      return actionText({ final: null, parse_error: s.parse_error ?? '', calls: [] });
    case 'tool':
      return s.calls.length ? actionText({ final: null, calls: s.calls }) : '(tool call)';
    case 'none':
      // A step the agent never decided because something failed (the model call, the script):
      // "(no action recorded)" above "FATAL error model_error: …" read as a gap in the trace.
      return s.errors.length ? `(no action: ${errorMarkText(s.errors[0]!.code)})` : '(no action recorded)';
    default:
      return assertNever(s.kind, 'step kind');
  }
}

/** Fills the texts the fold leaves out for speed: each call's `args_summary` and the `action` line. */
export function finishStep(s: StepSummary): StepSummary {
  const calls = s.calls.map((c) => ({ ...c, args_summary: argsSummary(c.arguments) }));
  const done = { ...s, calls };
  return { ...done, action: describeAction(done) };
}

/**
 * Folds one event of step `s.step` into its summary: THE per-step reducer (`stepbox show`,
 * the index, the HTML report and the window's rows all build on it). Returns the same
 * object when the event does not change the summary. A new decision for a step that
 * already has its snapshot (a step recorded again) starts the summary afresh.
 */
export function foldStep(s: StepSummary, e: TraceEvent): StepSummary {
  switch (e.type) {
    case 'action': {
      const base = s.changed !== null ? emptyStep(s.step) : s;
      // The decided calls; each `tool_call` event that follows confirms one (by id).
      const calls = e.calls.reduce<StepCall[]>(
        (acc, c) => upsertCall(acc, c.id, c.name, c.arguments),
        [...base.calls],
      );
      return {
        ...base,
        kind: e.final !== null && e.calls.length === 0 ? 'final' : 'tool',
        final: e.final,
        calls,
      };
    }
    case 'parse_error': {
      const base = s.changed !== null ? emptyStep(s.step) : s;
      return { ...base, kind: 'parse_error', parse_error: e.message };
    }
    case 'tool_call':
      // The call the action already decided (the usual case): nothing new to summarize.
      if (s.calls.some((c) => c.call_id === e.call_id && c.name === e.name)) return s;
      return {
        ...s,
        kind: s.kind === 'none' ? 'tool' : s.kind,
        calls: upsertCall(s.calls, e.call_id, e.name, e.arguments),
      };
    case 'tool_result': {
      const results = upsertResult(s.results, reduceResult(e, e.name));
      if (e.replaced !== true) return { ...s, results };
      // The call by its name, and by its place where the step made several of that name: its
      // id (`manual_1796589687946`) is the trace's, not a person's.
      const same = s.calls.filter((c) => c.name === e.name);
      const place = same.findIndex((c) => c.call_id === e.call_id);
      const which = same.length > 1 && place >= 0 ? `${e.name} (its ${ordinal(place + 1)} call)` : e.name;
      return {
        ...s,
        results,
        injected: [
          ...s.injected,
          {
            type: 'replaced',
            source: e.source,
            summary: `result of ${which} given by a person; the tool did not run`,
          },
        ],
      };
    }
    case 'edit': {
      // The edit comes before the action it changed: the call's name is in the edited answer.
      const name = e.call_id ? (editedCallName(e.edited, e.call_id) ?? e.call_id) : null;
      const edited = decidedMessage(e.edited);
      return {
        ...s,
        ...(edited ? { decided: edited.calls } : {}),
        injected: [
          ...s.injected,
          {
            type: 'edit',
            source: e.source,
            summary:
              name !== null
                ? `arguments of ${name} edited by a person before it ran (${e.call_id})`
                : `the model's answer edited by a person before the agent got it`,
          },
        ],
      };
    }
    case 'override': {
      const name =
        s.results.find((r) => r.call_id === e.call_id)?.name ??
        s.calls.find((c) => c.call_id === e.call_id)?.name ??
        '?';
      return {
        ...s,
        results: upsertResult(s.results, reduceResult(e, name)),
        injected: [
          ...s.injected,
          { type: 'override', source: e.source, summary: `override of ${name} result (${e.call_id})` },
        ],
      };
    }
    case 'injected':
      return {
        ...s,
        injected: [
          ...s.injected,
          { type: 'injected', source: e.source, summary: `${e.role}: ${oneLine(e.content)}` },
        ],
      };
    case 'human_command':
      return {
        ...s,
        injected: [
          ...s.injected,
          { type: 'human_command', source: e.source, summary: `$ ${oneLine(e.command)}` },
        ],
      };
    case 'memory_write':
      return {
        ...s,
        memory_writes: [
          ...s.memory_writes,
          { key: e.key, before: e.before, after: e.after, writer: e.writer, corruption: e.corruption },
        ],
      };
    case 'reward': {
      if (e.final) return s;
      const components: Record<string, number> = { ...s.reward_components };
      for (const [k, v] of Object.entries(e.components)) components[k] = (components[k] ?? 0) + v;
      return { ...s, reward: (s.reward ?? 0) + e.total, reward_components: components };
    }
    case 'snapshot':
      return {
        ...s,
        changed: e.changed.length,
        changed_paths: e.changed.map((c) => c.path),
        tree_hash: e.tree_hash,
      };
    case 'error':
      return { ...s, errors: [...s.errors, { code: e.code, message: e.message, fatal: e.fatal }] };
    case 'warning':
      return { ...s, warnings: [...s.warnings, { code: e.code, message: e.message }] };
    case 'rollback':
      // Recorded at its step; it never erases the step (the branch's history stays whole). Before
      // the step's snapshot it came inside the step; after it, once the step had finished (a
      // person's rollback after step 2 read "workspace restored mid-step").
      return {
        ...s,
        rollbacks: [...s.rollbacks, { to_step: e.to_step, reason: e.reason, mid_step: s.changed === null }],
      };
    case 'model_output': {
      // Read only for a step held and never run; the arguments stay as written (no parse per step).
      const calls = decidedMessage(e.message)?.calls ?? NONE;
      return calls.length === 0 && s.decided.length === 0 ? s : { ...s, decided: calls };
    }
    case 'header':
    case 'end':
    case 'model_request':
    case 'fault':
    case 'agent_output':
    case 'auxiliary_call':
      return s;
  }
}

/** The name of call `callId` in an edited assistant message, or null. */
function editedCallName(message: unknown, callId: string): string | null {
  const calls = (message as { tool_calls?: unknown } | null)?.tool_calls;
  if (!Array.isArray(calls)) return null;
  const call = calls.find((c) => (c as { id?: unknown })?.id === callId) as
    { function?: { name?: unknown } } | undefined;
  return typeof call?.function?.name === 'string' ? call.function.name : null;
}

function upsertCall(
  calls: readonly StepCall[],
  id: string,
  name: string,
  args: Record<string, unknown>,
): StepCall[] {
  const call: StepCall = {
    call_id: id,
    name,
    arguments: args,
    args_summary: '',
    detail: callDetail(name, args),
  };
  const at = calls.findIndex((c) => c.call_id === id);
  if (at < 0) return [...calls, call];
  const out = calls.slice();
  out[at] = call;
  return out;
}

function upsertResult(results: readonly StepResult[], r: StepResult): StepResult[] {
  const at = results.findIndex((x) => x.call_id === r.call_id);
  if (at < 0) return [...results, r];
  const out = results.slice();
  out[at] = r;
  return out;
}

/**
 * A step's tool time: the sum of its calls' durations; null when it has no result, or when one
 * of them is not known (a sum of the known ones would pass for the whole).
 */
export function stepDuration(results: readonly { readonly duration_ms: number | null }[]): number | null {
  let sum = 0;
  for (const r of results) {
    if (r.duration_ms === null) return null;
    sum += r.duration_ms;
  }
  return results.length ? sum : null;
}

/**
 * The step whose row an event belongs to, or null (the header and the end are no step's).
 * Every other event makes its step a row: a step decided and held before it runs, or one
 * whose decision is still coming, is a row a person sees, and so a step the branch has.
 */
export function rowStepOf(e: TraceEvent): number | null {
  return e.type === 'header' || e.type === 'end' ? null : e.step;
}

/**
 * Folds a branch's events into per-step summaries in step order (linear time), step 0
 * (setup) included when anything was recorded at it; the texts {@link finishStep} fills
 * are left empty (the window's rows do not need them).
 */
export function foldSteps(events: readonly TraceEvent[]): StepSummary[] {
  const steps = new Map<number, StepSummary>();
  for (const e of events) {
    if (rowStepOf(e) === null) continue;
    const before = steps.get(e.step) ?? emptyStep(e.step);
    steps.set(e.step, foldStep(before, e));
  }
  return [...steps.values()].sort((a, b) => a.step - b.step);
}

/** A branch's per-step summaries, complete with their texts (`show`, the index, reports). */
export function summarizeSteps(events: readonly TraceEvent[]): StepSummary[] {
  return foldSteps(events).map(finishStep);
}
