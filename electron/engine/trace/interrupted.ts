import { existsSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import type { StoredBranch, StoredBranches } from './stored-branches.js';
import { logger } from '../log.js';
import {
  currentProcessIdentity,
  isProcessGone,
  type ForeignHostRule,
  type ProcessIdentity,
} from '../process-identity.js';
import { parseTraceText, readTraceBytes } from './trace-reader.js';
import { compressTrace, FileTraceWriter, gzPathOf } from './trace-writer.js';

const log = logger('store');

/**
 * How a trace's writer on another host is judged: the store is written only by processes
 * of this host, so a writer recorded elsewhere (a copied store) can no longer be appending.
 */
export const TRACE_WRITER_HOST_RULE: ForeignHostRule = 'gone';

/** The `end_reason` of a trace closed because its writer process vanished. */
export const PROCESS_KILLED = 'process_killed';

function writerOf(firstLine: string): ProcessIdentity | null {
  let header: { writer?: ProcessIdentity } | null;
  try {
    header = JSON.parse(firstLine) as { writer?: ProcessIdentity } | null;
  } catch {
    // Not a header: the reader below refuses it in its own words (JSON.parse's quote the line).
    return null;
  }
  return header?.writer ?? null;
}

/**
 * Takes the per-branch close lock (`<trace>.closing`), so two processes starting at
 * once do not both append an end event. A lock left by a dead process is taken over.
 */
function takeLock(lockPath: string): boolean {
  try {
    writeFileSync(lockPath, JSON.stringify(currentProcessIdentity()), { flag: 'wx' });
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const holder = JSON.parse(readFileSync(lockPath, 'utf8')) as ProcessIdentity;
  if (!isProcessGone(holder, TRACE_WRITER_HOST_RULE)) return false;
  unlinkSync(lockPath);
  return takeLock(lockPath);
}

/** Closes one orphaned branch; returns true when it appended an `interrupted` end. */
function closeOrphan(store: StoredBranches, b: StoredBranch): boolean {
  const plain = b.tracePath;
  // Bounded and never through a link or a FIFO: this runs as every stepbox process starts.
  const bytes = readTraceBytes(plain);
  const text = bytes.toString('utf8');
  const nl = text.indexOf('\n');
  const writer = writerOf(nl < 0 ? text : text.slice(0, nl));
  // Without a recorded writer nothing can be appending (only the store's writers append).
  if (writer !== null && !isProcessGone(writer, TRACE_WRITER_HOST_RULE)) return false;

  const lock = `${plain}.closing`;
  if (!takeLock(lock)) return false;
  try {
    const trace = parseTraceText(text, plain);
    if (trace.torn) {
      // Cut the torn line so the end event starts on a line of its own.
      const cut = bytes.at(-1) === 0x0a ? bytes.lastIndexOf(0x0a, bytes.length - 2) : bytes.lastIndexOf(0x0a);
      truncateSync(plain, cut + 1);
    }
    if (trace.end) {
      // The writer died between writing `end` and compressing: finish its close only.
      compressTrace(plain);
      store.branchClosed(b.episode, b.branch);
      return false;
    }
    const last = [...trace.events, ...trace.partial].reduce((m, e) => Math.max(m, e.seq), 0);
    const w = FileTraceWriter.reopen(plain, last + 1, {
      onClosed: () => store.branchClosed(b.episode, b.branch),
    });
    const step = Math.max(trace.lastCompleteStep, 0);
    if (trace.torn)
      w.append({
        type: 'warning',
        step,
        source: 'harness',
        code: 'torn_tail',
        message: trace.warnings.join('; '),
      });
    w.closeSync({ step, status: 'interrupted', end_reason: PROCESS_KILLED, verifier: null });
    return true;
  } finally {
    unlinkSync(lock);
  }
}

/**
 * Appends `end {status: 'interrupted', end_reason: 'process_killed'}` to every unclosed
 * trace whose writer process is gone, and closes (compresses) it; finishes the close of
 * traces whose writer died after writing `end`. Traces of live writers are left alone.
 * Returns how many traces it marked interrupted.
 */
export function markInterruptedIn(store: StoredBranches): number {
  let marked = 0;
  for (const episode of store.listEpisodes()) {
    for (const b of store.branchesOrNone(episode)) {
      if (b.closed) {
        // A crash after the gz rename but before the unlink leaves both; the gz is complete.
        const plain = b.tracePath.replace(/\.gz$/, '');
        if (existsSync(plain) && existsSync(gzPathOf(plain))) unlinkSync(plain);
        continue;
      }
      try {
        if (closeOrphan(store, b)) {
          marked += 1;
          log.warn(`closed ${b.branch} of ${b.episode} as interrupted: the process writing it is gone`);
        }
      } catch (e) {
        log.warn(`${b.tracePath}: cannot mark interrupted (${(e as Error).message})`);
      }
    }
  }
  return marked;
}
