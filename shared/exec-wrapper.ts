import type { ToolResult } from './tool-result.js';

/**
 * (Its own file, with no zod: the inspector reads it in the window's first chunk.)
 *
 * The header an agent's own exec tool writes above a command's output — Codex CLI's
 * `exec_command` and `write_stdin`, whose text is all stepbox records of the call:
 *
 *     Chunk ID: 3f2a1b
 *     Wall time: 0.0123 seconds
 *     Process exited with code 0          (or: Process running with session ID 42)
 *     Original token count: 12
 *     Output:
 *     …what the command printed…
 *
 * Parsed for display only: the trace keeps the text as the model read it (replay compares it).
 */
export interface ExecWrapper {
  readonly chunkId: string | null;
  /** Seconds, as the agent's tool measured them. */
  readonly wallTimeS: number | null;
  /** The process's exit code; null while it still runs (`sessionId`) or when the header does not say. */
  readonly exitCode: number | null;
  /** The session a still-running process goes on in (the agent polls it with write_stdin). */
  readonly sessionId: string | null;
  /** How many tokens the output held before the tool cut it for the model. */
  readonly originalTokens: number | null;
  /** What the command printed: everything after the `Output:` line, untouched. */
  readonly output: string;
}

type Field = 'chunk' | 'wall' | 'status' | 'tokens';

/**
 * An id as the tool writes one (hex chunks, numeric sessions): bounded and printable, so an id
 * shown in the window's terminal or `stepbox show` cannot carry an escape sequence.
 */
const ID = '[A-Za-z0-9._:-]{1,64}';

/**
 * The header's lines in the order the tool writes them; each at most once, any may be missing.
 * Numbers are bounded where they are read: an exit code is a 32-bit int, a wall time under 10⁹ s,
 * a token count a safe integer. A line out of bounds fits no header line (see `parseExecWrapper`):
 * "exit 1e+40" or "wall time Infinity s" is no fact of the tool's.
 */
const HEADER: readonly { readonly field: Field; readonly line: RegExp }[] = [
  { field: 'chunk', line: new RegExp(`^Chunk ID: (${ID})$`) },
  { field: 'wall', line: /^Wall time: (\d{1,9}(?:\.\d{1,12})?) seconds$/ },
  {
    field: 'status',
    line: new RegExp(`^Process (?:exited with code (-?\\d{1,10})|running with session ID (${ID}))$`),
  },
  { field: 'tokens', line: /^Original token count: (\d{1,15})$/ },
];

/** An exit code as a process can have one (Codex writes an i32); anything else is not the tool's. */
const INT32 = 2 ** 31;

/** False for an exit line whose code no process has (`Process exited with code 9999999999`). */
function exitInRange(line: string): boolean {
  const code = /code (-?\d+)$/.exec(line);
  return !code || (Number(code[1]) >= -INT32 && Number(code[1]) < INT32);
}

/**
 * The wrapper of `text`, or null when it has none. The text is untrusted (a program prints
 * what it likes, "Process exited with code 0" included): only the tool's own lines count — at
 * the very top, in the tool's order, each once, ended by `Output:`. Anything after that line is
 * the program's, whatever it says; a line that fits no header before it means no wrapper at all.
 */
export function parseExecWrapper(text: string): ExecWrapper | null {
  const found: Partial<Record<Field, RegExpExecArray>> = {};
  let next = 0;
  let at = 0;
  for (;;) {
    const end = text.indexOf('\n', at);
    const line = end === -1 ? text.slice(at) : text.slice(at, end);
    if (line === 'Output:') {
      // A header of the tool's names a chunk or a time: a bare "Output:" line is anyone's.
      if (!found.chunk && !found.wall) return null;
      const status = found.status;
      return {
        chunkId: found.chunk?.[1] ?? null,
        wallTimeS: found.wall ? Number(found.wall[1]) : null,
        exitCode: status?.[1] !== undefined ? Number(status[1]) : null,
        sessionId: status?.[2] ?? null,
        originalTokens: found.tokens ? Number(found.tokens[1]) : null,
        output: end === -1 ? '' : text.slice(end + 1),
      };
    }
    const i = HEADER.findIndex(
      (h, k) => k >= next && h.line.test(line) && (h.field !== 'status' || exitInRange(line)),
    );
    if (i === -1 || end === -1) return null;
    found[HEADER[i].field] = HEADER[i].line.exec(line)!;
    next = i + 1;
    at = end + 1;
  }
}

/**
 * The wrapper of a call's result when an agent's own tool ran it (recorded as its text alone:
 * no exit code, no duration of stepbox's, see `outputResult`); null for stepbox's own tools,
 * whose exit code is a field and whose stdout is the program's from its first byte.
 */
export function execWrapperOf(
  r: Pick<ToolResult, 'exit_code' | 'duration_ms' | 'stdout'> | null | undefined,
): ExecWrapper | null {
  if (!r || r.exit_code !== undefined || r.duration_ms !== null || !r.stdout) return null;
  return parseExecWrapper(r.stdout);
}

/**
 * A result's exit code: its own field (stepbox's tools), else the one the header of an agent's
 * own tool says ({@link execWrapperOf}); null when neither says. THE reading of "how did the
 * command exit" for every view and rule: the timeline's row, `stepbox show`, the QA rules and the
 * inspector read it here (the row said "ok" beside the inspector's "exit 2").
 */
export function exitCodeOf(
  r: Pick<ToolResult, 'exit_code' | 'duration_ms' | 'stdout'> | null | undefined,
): number | null {
  return r?.exit_code ?? execWrapperOf(r)?.exitCode ?? null;
}

/**
 * The wrapper's facts in words: `exit 0 · wall time 0.0123 s · 12 tokens before cut`. A line that
 * already said the exit ({@link exitCodeOf}: `stepbox show`'s `exit 2 · …`) passes `exitSaid`,
 * and the header's exit is left out (show read "exit 2 · — · exit 2 · wall time …").
 */
export function execWrapperText(w: ExecWrapper, { exitSaid = false } = {}): string {
  return [
    w.exitCode !== null
      ? exitSaid
        ? ''
        : `exit ${w.exitCode}`
      : w.sessionId !== null
        ? `still running (session ${w.sessionId})`
        : 'exit not said',
    w.wallTimeS !== null ? `wall time ${w.wallTimeS} s` : '',
    w.originalTokens !== null ? `${w.originalTokens} tokens of output` : '',
  ]
    .filter(Boolean)
    .join(' · ');
}
