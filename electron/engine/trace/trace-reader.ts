import { gunzipBounded, gunzipLines, MAX_TEXT_BYTES } from './bounded-gunzip.js';
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { TraceEvent, type EndEvent, type HeaderEvent } from '../../../shared/trace-events.js';
import {
  upgradeEvent,
  upgradePath,
  TRACE_UPGRADES,
  type RawEvent,
  type TraceUpgrade,
} from './trace-upgrade.js';
import type { ReadTrace } from './trace-store.js';

/** A trace that cannot be read: a bad line in the middle, no header, an unreadable gzip. */
export class TraceCorruptError extends Error {
  readonly code = 'trace_corrupt';
  override readonly name = 'TraceCorruptError';
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

/** Reads a `.jsonl` or `.jsonl.gz` trace file. */
export function readTraceFile(path: string, options: ReadOptions = {}): ParsedTrace {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new TraceCorruptError(`cannot read trace ${path}: ${(e as Error).message}`);
  }
  let text: string;
  if (path.endsWith('.gz')) {
    try {
      // A trace that inflates past the longest string V8 can hold could never be parsed.
      text = gunzipBounded(bytes, MAX_TEXT_BYTES, `trace ${path}`).toString('utf8');
    } catch (e) {
      throw new TraceCorruptError((e as Error).message);
    }
  } else {
    text = bytes.toString('utf8');
  }
  return parseTraceText(text, path, options);
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
      throw new TraceCorruptError((e as Error).message);
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
        throw new TraceCorruptError(`trace ${path} has a first line over ${lineBytes} bytes`);
      first = buf.subarray(0, nl < 0 ? got : nl).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }
  if (first === undefined) throw new TraceCorruptError(`${path}: line 1 is not a trace header`);
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
      throw new TraceCorruptError(`${path}: line ${i + 1} is not JSON: ${(e as Error).message}`);
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new TraceCorruptError(`${path}: line ${i + 1} is not a JSON object`);
    raws.push(raw as RawEvent);
  });
  if (raws.length === 0 || raws[0].type !== 'header' || typeof raws[0].schema !== 'string')
    throw new TraceCorruptError(`${path}: line 1 is not a trace header`);
  const writtenSchema = raws[0].schema as string;
  const upgrades = upgradePath(writtenSchema, options.upgrades ?? TRACE_UPGRADES);

  const all: TraceEvent[] = raws.map((raw, i) => {
    const parsed = TraceEvent.safeParse(upgradeEvent(raw, upgrades));
    if (!parsed.success)
      throw new TraceCorruptError(
        `${path}: line ${i + 1} (${String(raw.type)}) does not match ${writtenSchema}: ${parsed.error.issues
          .map((x) => `${x.path.join('.') || '(event)'}: ${x.message}`)
          .join('; ')}`,
      );
    return parsed.data;
  });
  return splitComplete(all, { path, writtenSchema, torn, warnings });
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
