import { z } from 'zod';
import { ToolError } from './errors.js';
import { utf8Length } from './format-bytes.js';

/**
 * The result of every tool call (Contracts: Tool results). `ok` is false exactly when
 * `error` is present; a non-zero exit is `ok: true` with its `exit_code`. `bytes` counts
 * everything the command wrote, kept or not.
 */
export const ToolResult = z
  .object({
    ok: z.boolean(),
    exit_code: z.number().int().optional(),
    stdout: z.string().optional(),
    stderr: z.string().optional(),
    truncated: z.object({ stdout: z.boolean(), stderr: z.boolean() }).optional(),
    stdout_b64: z.string().optional(),
    stderr_b64: z.string().optional(),
    error: ToolError.optional(),
    /**
     * How long the call took; null when stepbox did not run it and could not time it (an agent
     * inside the sandbox ran it and reported only its output): unknown, not 0.
     */
    duration_ms: z.number().nonnegative().nullable(),
    bytes: z.number().int().nonnegative(),
    /** Extra structured output of a tool (read_file content, list_dir entries, memory value). */
    data: z.unknown().optional(),
    /** Set when the observation is the tool's `fallback` after a hard timeout. */
    fallback: z.boolean().optional(),
  })
  .refine((r) => r.ok === (r.error === undefined), {
    message: '`ok` must be false exactly when `error` is present',
  });
/** The result of a tool call. */
export type ToolResult = z.infer<typeof ToolResult>;

/** A failed tool result with the given code; never thrown, always returned. */
export function toolFailure(
  code: ToolError['code'],
  message: string,
  durationMs = 0,
  extra: Partial<ToolResult> = {},
): ToolResult {
  return { ...extra, ok: false, error: { code, message }, duration_ms: durationMs, bytes: extra.bytes ?? 0 };
}

// In zod-free format-bytes.ts, so the window's first chunk can size a call's content without zod.
export { utf8Length };

/**
 * A tool output as the result recorded for the call, when something else ran it (an agent
 * inside the sandbox, another harness's imported trajectory): its text is all stepbox sees. Its
 * duration is unknown (null): the time between the answer and the next request is the agent's
 * as much as the tool's, and 0 showed as "0.0 ms" in the timeline and inspector.
 */
export function outputResult(text: string): ToolResult {
  return { ok: true, stdout: text, duration_ms: null, bytes: utf8Length(text) };
}

/**
 * The fields that make two tool results the same result (design: Replay): `ok`,
 * `exit_code`, `stdout`, `stderr`, `error.code`; durations, times, ids and byte counts
 * are left out. Re-execution and step-aligned comparison both judge by these.
 */
export const COMPARED_FIELDS = ['ok', 'exit_code', 'stdout', 'stderr', 'error.code'] as const;
/** One field two tool results are compared on. */
export type ComparedField = (typeof COMPARED_FIELDS)[number];

/**
 * A compared field (or an agent's own `output`) as a person reads it, not its path in the
 * result: the re-execution report said `execute_shell.stdout`.
 */
export const FIELD_WORDS: Readonly<Record<ComparedField | 'output', string>> = {
  ok: 'success',
  exit_code: 'exit code',
  stdout: 'stdout',
  stderr: 'stderr',
  'error.code': 'error',
  output: 'output',
};

/** One tool's field that differs, in words: `execute_shell's stdout`, `read_file's exit code`. */
export function toolFieldText(tool: string, field: ComparedField | 'output'): string {
  return `${tool}'s ${FIELD_WORDS[field]}`;
}

/** A result's value of one compared field (undefined when absent). */
export function comparedField(result: ToolResult, field: ComparedField): unknown {
  return field === 'error.code' ? result.error?.code : result[field];
}

/** The compared fields of a result, absent ones as null: equal keys mean the same result. */
export function resultKey(result: ToolResult): unknown[] {
  return COMPARED_FIELDS.map((f) => comparedField(result, f) ?? null);
}

/** The compared fields on which two results differ, in {@link COMPARED_FIELDS} order (none: the same result). */
export function differingFields(a: ToolResult, b: ToolResult): ComparedField[] {
  return COMPARED_FIELDS.filter((f) => (comparedField(a, f) ?? null) !== (comparedField(b, f) ?? null));
}

/**
 * What differs between two results, in words a person reads: `exit 0 vs 1`,
 * `error timeout vs none`, `stdout differs`; empty when they are the same result.
 * `ok` is only named when no error code says it better.
 */
export function resultDifference(a: ToolResult, b: ToolResult): string[] {
  const fields = differingFields(a, b);
  const show = (x: unknown) => (x === undefined || x === null ? 'none' : String(x));
  const out: string[] = [];
  for (const f of fields) {
    if (f === 'ok' && fields.includes('error.code')) continue;
    if (f === 'exit_code') out.push(`exit ${show(a.exit_code)} vs ${show(b.exit_code)}`);
    else if (f === 'error.code') out.push(`error ${show(a.error?.code)} vs ${show(b.error?.code)}`);
    else if (f === 'ok') out.push(`ok ${String(a.ok)} vs ${String(b.ok)}`);
    else out.push(`${f} differs`);
  }
  return out;
}

/** One entry of `list_dir`. */
export const DirEntry = z.object({
  name: z.string(),
  type: z.enum(['file', 'dir', 'symlink', 'other']),
  size: z.number().int().nonnegative(),
});
/** One entry of `list_dir`. */
export type DirEntry = z.infer<typeof DirEntry>;
