import {
  fsync,
  closeSync,
  constants,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { gzipSync } from 'node:zlib';
import { TraceEvent, type EndEvent, type HeaderEvent } from '../../../shared/trace-events.js';
import { crashPoint } from '../crash-point.js';
import { logger } from '../log.js';
import { fsyncDir, tempPathOf, writeFileAtomic } from './durable-fs.js';
import { redactSecrets, secretsFromEnv, type Secret } from './secrets.js';
import type { NewTraceEvent, TraceWriter } from './trace-store.js';
import { describeIssues } from '../../../shared/validation-issues.js';

const log = logger('trace');

/** What `close` takes: the end event's own fields. */
export type EndFields = Omit<EndEvent, 'seq' | 't' | 'type' | 'source' | 'step'> & { step: number };

/** Options of a trace writer. */
export interface TraceWriterOptions {
  /** Secrets to redact; default: the values of OPENAI_API_KEY and STEPBOX_TOKEN. */
  readonly secrets?: readonly Secret[];
  /** Called after the branch is closed and compressed (the store re-indexes it). */
  readonly onClosed?: (gzPath: string) => void;
}

/** The path a branch's trace has once closed. */
export function gzPathOf(jsonlPath: string): string {
  return `${jsonlPath}.gz`;
}

/**
 * Compresses a closed `.jsonl` trace into `.jsonl.gz` atomically (temp file, fsync,
 * rename, directory fsync) and then removes the plain file. A crash at any point
 * leaves either the plain file, or both (the gz complete), never a half gz.
 */
export function compressTrace(jsonlPath: string): string {
  const gz = gzPathOf(jsonlPath);
  writeFileAtomic(gz, gzipSync(readFileSync(jsonlPath)));
  unlinkSync(jsonlPath);
  fsyncDir(dirname(jsonlPath));
  return gz;
}

/**
 * The append-only JSONL writer of one branch. Each event is serialised whole and
 * written with one `write` on an O_APPEND descriptor, so a kill leaves at most one torn
 * last line; `commitStep` fsyncs. Every event is validated against the shared schema
 * (a bad event is a harness bug, caught at the source rather than by the next reader)
 * and stripped of secrets.
 */
export class FileTraceWriter implements TraceWriter {
  private fd: number | null;
  private nextSeq: number;
  private readonly secrets: readonly Secret[];
  private warnedSecret = false;

  private constructor(
    readonly path: string,
    fd: number,
    nextSeq: number,
    private readonly options: TraceWriterOptions,
  ) {
    this.fd = fd;
    this.nextSeq = nextSeq;
    this.secrets = options.secrets ?? secretsFromEnv();
  }

  /**
   * Creates a new trace file (failing if it exists) holding its header as seq 0, fsynced.
   * The header is written to a temporary file that is then linked into place, so a kill at
   * any moment leaves either no trace or one with a whole header — never an empty or
   * half-written one (`.tmp-PID-…` leftovers are swept by the next process).
   */
  static create(
    path: string,
    header: Omit<HeaderEvent, 'seq' | 't' | 'type' | 'source' | 'step'>,
    options: TraceWriterOptions = {},
  ): FileTraceWriter {
    const tmp = tempPathOf(path);
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND);
    try {
      const writer = new FileTraceWriter(path, fd, 0, options);
      writer.append({ ...header, type: 'header', source: 'harness', step: 0 } as NewTraceEvent);
      writer.commitStep();
      crashPoint('trace-header');
      linkSync(tmp, path); // EEXIST when the trace exists, as `wx` would
      return writer;
    } catch (e) {
      closeSync(fd);
      throw e;
    } finally {
      unlinkSync(tmp);
      fsyncDir(dirname(path));
    }
  }

  /** Continues an existing, unclosed trace whose last event had `nextSeq - 1` (used to close orphans). */
  static reopen(path: string, nextSeq: number, options: TraceWriterOptions = {}): FileTraceWriter {
    return new FileTraceWriter(path, openSync(path, 'a'), nextSeq, options);
  }

  /** The `seq` the next event gets (the harness reads it to echo the end event it closes with). */
  get seq(): number {
    return this.nextSeq;
  }

  append(event: NewTraceEvent): TraceEvent {
    if (this.fd === null) throw new Error(`trace ${this.path} is closed; cannot append ${event.type}`);
    const stamped = { ...event, seq: this.nextSeq, t: event.t ?? Date.now() };
    const { value, redacted } = redactSecrets(stamped, this.secrets);
    if (redacted && !this.warnedSecret) {
      this.warnedSecret = true;
      log.warn(`${this.path}: a secret value was redacted from a ${event.type} event (seq ${stamped.seq})`);
    }
    const parsed = TraceEvent.safeParse(value);
    if (!parsed.success) {
      throw new Error(
        `invalid ${event.type} event for ${this.path}: ${describeIssues(parsed.error.issues, '(event)')}`,
      );
    }
    const line = Buffer.from(JSON.stringify(parsed.data) + '\n');
    // One write almost always takes the whole line; loop for the rare short write.
    for (let off = 0; off < line.length;) off += writeSync(this.fd, line, off);
    this.nextSeq += 1;
    return parsed.data;
  }

  commitStep(): number {
    if (this.fd === null) throw new Error(`trace ${this.path} is closed`);
    const start = performance.now();
    fsyncSync(this.fd);
    return performance.now() - start;
  }

  /**
   * {@link commitStep} on the thread pool: resolves once the step is durable, while this
   * process's event loop goes on serving the window and the other episodes. The harness's
   * per-step commit: done in place, each step's fsync (~2 ms, more on a busy disk) held the
   * loop, and a window's click waited behind every episode's (issue 33.9).
   */
  commit(): Promise<number> {
    const fd = this.fd;
    if (fd === null) return Promise.reject(new Error(`trace ${this.path} is closed`));
    const start = performance.now();
    return new Promise((resolve, reject) =>
      fsync(fd, (e) => {
        // Closed meanwhile: the close's own fsync, after every append, made the step durable
        // (its descriptor may be another file's by now, which an fsync does no harm).
        if (e && this.fd !== null) reject(e);
        else resolve(performance.now() - start);
      }),
    );
  }

  async close(end: EndFields): Promise<void> {
    this.closeSync(end);
  }

  /**
   * `close` without the promise: appends `end`, fsyncs, compresses (synchronously — a
   * trace is small, and a process sweeping orphans must hold its lock until done).
   */
  closeSync(end: EndFields): void {
    if (this.fd === null) throw new Error(`trace ${this.path} is already closed`);
    this.append({ ...end, type: 'end', source: 'harness' } as NewTraceEvent);
    this.commitStep();
    closeSync(this.fd);
    this.fd = null;
    const gz = compressTrace(this.path);
    this.options.onClosed?.(gz);
  }

  /** Closes the descriptor without an end event (a crash, as tests simulate it; the next process marks it interrupted). */
  abandon(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
