import type { Task } from '../task.js';
import { DEFAULT_WORKDIR } from '../constants.js';
import type { TraceEvent, TraceEventOf } from '../trace-events.js';

/** What a rule may know beyond the trace: references computed by the engine from the index and the snapshot store. */
export interface QaReference {
  /** Median steps of the same task's other episodes (efficiency), with how many there were. */
  readonly medianSteps?: number | null;
  /** Median duration in ms of the same task's other episodes. */
  readonly medianDurationMs?: number | null;
  readonly samples?: number;
  /** The task's declared initial workspace: its tree hash when known. */
  readonly declaredTreeHash?: string | null;
  /** The declared initial workspace as path → sha256, when it is derivable from the task (no setup commands). */
  readonly declaredFiles?: Readonly<Record<string, string>> | null;
  /** Snapshot 0's files as path → sha256, read from its manifest. */
  readonly snapshot0Files?: Readonly<Record<string, string>> | null;
}

/** The input of every rule: one branch's events, whether its tail was torn, its task (defaults filled) and references. */
export interface QaInput {
  readonly events: readonly TraceEvent[];
  readonly torn: boolean;
  /** True while a live process still writes the branch: a missing `end` is then no fault. */
  readonly open?: boolean;
  readonly task: Task;
  readonly reference?: QaReference;
  /**
   * A fork's inherited history: its ancestors' events up to the fork step, which the
   * branch's own events continue. Its flags are its parents' to raise; rules that count
   * what the agent did in the whole episode (reward_hacking's min_actions) count these too.
   */
  readonly inherited?: readonly TraceEvent[];
}

/** The events of one type, in order. */
export function eventsOf<T extends TraceEvent['type']>(
  events: readonly TraceEvent[],
  type: T,
): TraceEventOf<T>[] {
  return [...(indexOf(events).byType.get(type) ?? [])] as TraceEventOf<T>[];
}

/** One pass over a trace's events, shared by every rule that asks (sixteen rules over 10,000 steps). */
interface EventIndex {
  /** The array's length when indexed: a trace only grows, so a new length means re-index. */
  readonly length: number;
  readonly byType: Map<string, TraceEvent[]>;
  readonly steps: number[];
}

const indexes = new WeakMap<readonly TraceEvent[], EventIndex>();

function indexOf(events: readonly TraceEvent[]): EventIndex {
  const hit = indexes.get(events);
  if (hit && hit.length === events.length) return hit;
  const byType = new Map<string, TraceEvent[]>();
  const steps = new Set<number>();
  for (const e of events) {
    const list = byType.get(e.type);
    if (list) list.push(e);
    else byType.set(e.type, [e]);
    if (e.type === 'action' || e.type === 'parse_error') steps.add(e.step);
  }
  const index = { length: events.length, byType, steps: [...steps].sort((a, b) => a - b) };
  indexes.set(events, index);
  return index;
}

/** The end event, or null when the branch was never closed. */
export function endOf(events: readonly TraceEvent[]): TraceEventOf<'end'> | null {
  const last = events[events.length - 1];
  return last?.type === 'end' ? last : null;
}

/** Agent steps in order: every step with an `action` or `parse_error` event. */
export function agentSteps(events: readonly TraceEvent[]): number[] {
  return [...indexOf(events).steps];
}

/**
 * Strips the working directory (`/workspace/` unless the task names another) and `./` so
 * paths from arguments compare with snapshot paths; the workspace itself is `.`. The root
 * `/` stays `/`: it is not the workspace (`df -h /` touches nothing the task names).
 */
export function workspacePath(path: string, workdir: string = DEFAULT_WORKDIR): string {
  let p = path.trim();
  if (/^\/+$/.test(p)) return '/';
  if (p.startsWith(workdir + '/')) p = p.slice(workdir.length + 1);
  else if (p === workdir) p = '.';
  while (p.startsWith('./')) p = p.slice(2);
  return p.replace(/\/+$/, '') || '.';
}

/** The last path component. */
export function baseName(path: string): string {
  const parts = path.split('/').filter(Boolean);
  return parts[parts.length - 1] ?? path;
}
