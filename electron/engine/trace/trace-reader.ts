import { gunzipBounded, gunzipLines, MAX_TEXT_BYTES } from './bounded-gunzip.js';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { readOpened } from '../read-opened.js';
import type { z } from 'zod';
import { TraceEvent, type EndEvent, type HeaderEvent } from '../../../shared/trace-events.js';
import {
  UnsupportedSchemaError,
  upgradeEvent,
  upgradePath,
  TRACE_UPGRADES,
  type RawEvent,
  type TraceUpgrade,
} from './trace-upgrade.js';
import type { BranchInfo, ReadTrace } from './trace-store.js';
import { noteUnsettledRead, statsKey } from './unsettled-reads.js';
import { issueLine, shownKey } from '../../../shared/validation-issues.js';
import { didYouMean } from '../../../shared/did-you-mean.js';
import { formatBytes } from '../../../shared/format-bytes.js';
import { DEFAULT_FIXES } from '../engine-error.js';
import { jsonErrorAt } from '../json-error.js';

/** The fix of a trace file that is damaged (a bad line, torn mid-file, garbage): the store's one. */
const DAMAGED_FIX = DEFAULT_FIXES.trace_corrupt ?? null;

/**
 * A trace that cannot be read: a bad line in the middle, no header, an unreadable gzip, a
 * file that is not a regular file or is too large to read. `file` is the trace file that
 * failed (a fork's parent's, when that is what failed), `fix` what to do: the one message
 * and fix the CLI, the window's open and the library's unreadable entries all say.
 */
export class TraceCorruptError extends Error {
  readonly code = 'trace_corrupt';
  override readonly name = 'TraceCorruptError';
  readonly fix: string | null;
  constructor(
    message: string,
    readonly file: string | null = null,
    fix: string | null = DAMAGED_FIX,
  ) {
    super(message);
    this.fix = fix;
  }
}

/** What to do with a file in the store that is not a trace stepbox wrote (a link, a FIFO, a device). */
const NOT_A_TRACE_FIX =
  'a trace in the store is a regular file stepbox wrote: remove this one, or put the trace itself there (re-import its episode: npx stepbox bundle import FILE --force)';

/** A file's kind in words, for a trace path that is not a regular file. */
function kindOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isDirectory()) return 'a folder';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/**
 * Opens a trace file for reading: a link is never followed (O_NOFOLLOW, and the lstat for
 * systems without it), a FIFO never blocks the open (O_NONBLOCK), and anything but a regular
 * file is refused in words that say what it is. The caller closes the descriptor.
 */
function openTraceFile(path: string): { fd: number; st: Stats } {
  const refuse = (what: string) =>
    new TraceCorruptError(`${path} is ${what}, not a trace file`, path, NOT_A_TRACE_FIX);
  let fd: number;
  try {
    const link = lstatSync(path);
    if (!link.isFile()) throw refuse(kindOf(link));
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if (e instanceof TraceCorruptError) throw e;
    // A link put there between the lstat and the open.
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw refuse('a symbolic link');
    throw new TraceCorruptError(`cannot read trace ${path}: ${(e as Error).message}`, path);
  }
  const st = fstatSync(fd);
  if (st.isFile()) return { fd, st };
  closeSync(fd);
  throw refuse(kindOf(st));
}

/** The longest first line (the header) {@link firstTraceLine} looks through for its newline. */
export const MAX_HEADER_BYTES = 64 * 1024 ** 2;

/**
 * The first line of a plain trace when it is whole (ends in a newline), else null (cut off
 * before its newline: what a kill while the header was written leaves). Reads no further than
 * that newline, in chunks; a first line longer than {@link MAX_HEADER_BYTES}, or a file that
 * is not a regular one (see {@link openTraceFile}), is a TraceCorruptError: not a cut header,
 * so never swept away as one.
 */
export function firstTraceLine(path: string): string | null {
  const { fd, st } = openTraceFile(path);
  try {
    const chunks: Buffer[] = [];
    let at = 0;
    while (at < st.size) {
      const chunk = Buffer.allocUnsafe(Math.min(1024 ** 2, st.size - at));
      const n = readSync(fd, chunk, 0, chunk.length, at);
      if (n === 0) break;
      const nl = chunk.subarray(0, n).indexOf(10);
      if (nl >= 0) return Buffer.concat([...chunks, chunk.subarray(0, nl)]).toString('utf8');
      chunks.push(chunk.subarray(0, n));
      at += n;
      if (at > MAX_HEADER_BYTES)
        throw new TraceCorruptError(
          `${path}: line 1 is longer than ${formatBytes(MAX_HEADER_BYTES)}, not a trace header`,
          path,
        );
    }
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * A trace file's bytes, read with a bound: a link is never followed (O_NOFOLLOW, and the
 * lstat for systems without it), a FIFO never blocks the open (O_NONBLOCK) and is refused
 * with any other file that is not a regular one, and a file larger than the longest text
 * V8 can hold (`maxBytes`) is refused from its size without reading it. Only the bytes the
 * file had when opened are read (a live trace grows meanwhile).
 */
export function readTraceBytes(path: string, maxBytes: number = MAX_TEXT_BYTES): Buffer {
  const { fd, st } = openTraceFile(path);
  try {
    if (st.size > maxBytes)
      throw new TraceCorruptError(
        `${path} is ${formatBytes(st.size)}, more than the ${formatBytes(maxBytes)} a trace can be for this stepbox to read it`,
        path,
        'a trace this large was not written by stepbox whole: remove it, or re-import its episode (npx stepbox bundle import FILE --force)',
      );
    const bytes = readOpened(fd, st.size);
    // Read before it settled: its bytes are noted, so the settled version can be found the same.
    noteUnsettledRead(path, st, bytes);
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/**
 * The bytes of trace file `path` if its stats are still `stats` (unsettled-reads.ts's
 * statsKey) and it can be read as {@link readTraceBytes} reads it; else null.
 */
export function traceBytesAt(path: string, stats: string): Buffer | null {
  let opened: { fd: number; st: Stats };
  try {
    opened = openTraceFile(path);
  } catch {
    return null;
  }
  const { fd, st } = opened;
  try {
    if (statsKey(path, st) !== stats || st.size > MAX_TEXT_BYTES) return null;
    const bytes = readOpened(fd, st.size);
    return bytes.length === st.size ? bytes : null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A trace as read back, with what the store interface requires plus resume/view details. */
export interface ParsedTrace extends ReadTrace {
  /** Where it was read from (or a label for in-memory text). */
  readonly path: string;
  /** The schema the file was written with (events are upgraded to the current one). */
  readonly writtenSchema: string;
  /** The highest k with a `snapshot` event: steps 1..k are complete (-1: not even setup). */
  readonly lastCompleteStep: number;
  /**
   * Events of the incomplete trailing step (step > lastCompleteStep): dropped from
   * `events` so a resume starts clean, kept here for viewing.
   */
  readonly partial: readonly TraceEvent[];
}

/** Options of {@link parseTraceText}; the upgrade path is injectable for tests. */
export interface ReadOptions {
  readonly upgrades?: readonly TraceUpgrade[];
}

/** Options of {@link readTraceFile}. */
export interface ReadFileOptions extends ReadOptions {
  /**
   * The branch the file is in the store as: a header naming another episode or branch is
   * refused (indexed, it would replace that branch's row; opened, it would show another's steps).
   */
  readonly expect?: Pick<BranchInfo, 'episode' | 'branch'>;
}

/** Reads a `.jsonl` or `.jsonl.gz` trace file (bounded: see {@link readTraceBytes}). */
export function readTraceFile(path: string, options: ReadFileOptions = {}): ParsedTrace {
  const bytes = readTraceBytes(path);
  let text: string;
  if (path.endsWith('.gz')) {
    try {
      // A trace that inflates past the longest string V8 can hold could never be parsed.
      text = gunzipBounded(bytes, MAX_TEXT_BYTES, `trace ${path}`).toString('utf8');
    } catch (e) {
      throw new TraceCorruptError((e as Error).message, path);
    }
  } else {
    text = bytes.toString('utf8');
  }
  const trace = parseTraceText(text, path, options);
  const want = options.expect;
  if (want && (trace.header.episode !== want.episode || trace.header.branch !== want.branch))
    throw new TraceCorruptError(
      `${path}: line 1 (its header) says it is branch ${shownKey(trace.header.branch)} of episode ${shownKey(trace.header.episode)}, not ${want.branch} of ${want.episode}, where it is in the store`,
      path,
      'a trace belongs where its header says: move it back there, or remove this copy (npx stepbox bundle import FILE --force re-imports an episode whole)',
    );
  return trace;
}

/**
 * The header of a trace file, reading no further than its first line (at most
 * `lineBytes`, inflated): for a trace from elsewhere (a bundle), whose whole could be a
 * decompression bomb. Throws {@link TraceCorruptError}.
 */
export async function readTraceHeader(path: string, lineBytes: number): Promise<HeaderEvent> {
  let first: string | undefined;
  if (path.endsWith('.gz')) {
    const lines = gunzipLines(path, { totalBytes: Number.MAX_SAFE_INTEGER, lineBytes }, `trace ${path}`);
    try {
      const r = await lines.next();
      first = r.done ? undefined : r.value;
    } catch (e) {
      throw new TraceCorruptError((e as Error).message, path);
    } finally {
      await lines.return(undefined);
    }
  } else {
    const fd = openSync(path, 'r');
    try {
      const buf = Buffer.alloc(Math.min(lineBytes + 1, Math.max(1, fstatSync(fd).size)));
      const got = readSync(fd, buf, 0, buf.length, 0);
      const nl = buf.subarray(0, got).indexOf(10);
      if (nl < 0 && got > lineBytes)
        throw new TraceCorruptError(`trace ${path} has a first line over ${lineBytes} bytes`, path);
      first = buf.subarray(0, nl < 0 ? got : nl).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }
  if (first === undefined) throw new TraceCorruptError(`${path}: line 1 is not a trace header`, path);
  return parseTraceText(`${first}\n`, path).header;
}

/**
 * Parses trace text. A torn last line (no trailing newline, or not JSON) is ignored with
 * a warning — that is what a kill mid-write leaves. Any other bad line is corruption and
 * throws, naming the line. Events are upgraded from their header's schema and validated.
 */
export function parseTraceText(text: string, path: string, options: ReadOptions = {}): ParsedTrace {
  const warnings: string[] = [];
  const lines = text.split('\n');
  // After a final newline split() yields one empty string; anything else there is a torn tail.
  const tail = lines.pop() ?? '';
  let torn = false;
  if (tail.length > 0) {
    torn = true;
    warnings.push(
      `${path}: line ${lines.length + 1} is torn (no trailing newline, ${tail.length} bytes); ignored`,
    );
  }
  const raws: RawEvent[] = [];
  lines.forEach((line, i) => {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      if (i === lines.length - 1 && !torn) {
        torn = true;
        warnings.push(`${path}: last line ${i + 1} is not JSON (${(e as Error).message}); ignored`);
        return;
      }
      // Never Node's words: they quote the line (binary bytes, terminal escapes, a secret).
      throw new TraceCorruptError(`${path}: line ${i + 1} is not JSON${notJsonAt(e, line)}`, path);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new TraceCorruptError(`${path}: line ${i + 1} is not a JSON object`, path);
    raws.push(raw as RawEvent);
  });
  if (raws.length === 0 || raws[0].type !== 'header' || typeof raws[0].schema !== 'string')
    throw new TraceCorruptError(`${path}: line 1 is not a trace header`, path);
  const writtenSchema = raws[0].schema as string;
  let upgrades: TraceUpgrade[];
  try {
    upgrades = upgradePath(writtenSchema, options.upgrades ?? TRACE_UPGRADES);
  } catch (e) {
    if (e instanceof UnsupportedSchemaError) throw new UnsupportedSchemaError(e.schema, path);
    throw e;
  }

  const all: TraceEvent[] = raws.map((raw, i) => {
    const parsed = TraceEvent.safeParse(upgradeEvent(raw, upgrades));
    if (!parsed.success)
      throw new TraceCorruptError(
        `${path}: line ${i + 1} ${eventIssuesInWords(raw, parsed.error.issues, writtenSchema)}`,
        path,
      );
    return parsed.data;
  });
  return splitComplete(all, { path, writtenSchema, torn, warnings });
}

/** The event types of the current schema, for naming the one a misspelt `type` meant. */
const EVENT_TYPES: readonly string[] = TraceEvent.options.map((o) => o.shape.type.value);

/**
 * Why a line's event does not validate, in plain words after its line number: an unknown or
 * missing `type` says so (with the type it may have meant), not the schema's own list of
 * every type; a field that does not fit is named with what it should be.
 */
function eventIssuesInWords(raw: RawEvent, issues: readonly z.core.$ZodIssue[], schema: string): string {
  if (typeof raw.type !== 'string')
    return `has no "type" naming its event (every line of a ${schema} trace is one event, such as "tool_call")`;
  const type = shownKey(raw.type);
  if (!EVENT_TYPES.includes(raw.type)) {
    const meant = didYouMean(raw.type, EVENT_TYPES);
    return `has type "${type}", which is not a ${schema} event${meant ? ` (did you mean "${meant}"?)` : ''}`;
  }
  const shown = issues.slice(0, 3).map((i) => fieldInWords(raw, i));
  const more = issues.length - shown.length;
  return `(${type}) does not match ${schema}: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
}

/** One issue of an event's field: missing, the wrong kind of value, or the schema's own words for the rest. */
function fieldInWords(raw: RawEvent, issue: z.core.$ZodIssue): string {
  if (issue.code !== 'invalid_type' || issue.path.length === 0) return issueLine(issue, '(event)');
  const field = issue.path.map((k) => shownKey(String(k))).join('.');
  let value: unknown = raw;
  for (const k of issue.path)
    value =
      value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[k] : undefined;
  if (value === undefined) return `${field} is missing (it should be ${article(issue.expected)})`;
  const found = value === null ? 'null' : Array.isArray(value) ? 'a list' : article(typeof value);
  return `${field} should be ${article(issue.expected)}, not ${found}`;
}

/** `a string`, `an object`, `a list` (zod's `array`). */
function article(kind: string): string {
  const word = kind === 'array' ? 'list' : kind;
  return `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
}

/** Where a line stopped being JSON (` at column C`), never what it holds. */
function notJsonAt(e: unknown, line: string): string {
  const at = jsonErrorAt(e, line);
  return at.startsWith(' at line 1, ') ? ` (at ${at.slice(' at line 1, '.length)})` : at;
}

function splitComplete(
  all: TraceEvent[],
  info: { path: string; writtenSchema: string; torn: boolean; warnings: string[] },
): ParsedTrace {
  const header = all[0] as HeaderEvent;
  let end: EndEvent | null = null;
  let lastCompleteStep = -1;
  for (const e of all) {
    if (e.type === 'snapshot' && e.step > lastCompleteStep) lastCompleteStep = e.step;
    if (e.type === 'end') end = e;
  }
  // A fork's first own step is fork_step + 1; steps up to fork_step come complete from its parent.
  if (header.fork_step !== null && lastCompleteStep < header.fork_step) lastCompleteStep = header.fork_step;
  const events: TraceEvent[] = [];
  const partial: TraceEvent[] = [];
  for (const e of all) {
    if (e.type === 'header' || e.type === 'end' || e.step <= lastCompleteStep) events.push(e);
    else partial.push(e);
  }
  // Only worth a warning when the episode did not end on its own (a timeout may end mid-step).
  if (partial.length > 0 && (end === null || end.status === 'interrupted'))
    info.warnings.push(
      `${info.path}: step ${lastCompleteStep + 1} has no snapshot; its ${partial.length} event(s) are kept apart as partial`,
    );
  return {
    header,
    events,
    partial,
    end,
    torn: info.torn,
    warnings: info.warnings,
    path: info.path,
    writtenSchema: info.writtenSchema,
    lastCompleteStep,
  };
}
