import type { TraceEvent } from '../../../shared/trace-events.js';
import type { NewTraceEvent, TraceWriter } from '../trace/trace-store.js';

/**
 * Where the environment records events: a branch's trace writer, or (replay
 * verification) a list kept in memory so the recorded trace is never touched.
 */
export interface TraceSink {
  append(event: NewTraceEvent): TraceEvent;
  /** Makes the step durable; resolves with the fsync time in ms (the event loop runs meanwhile). */
  commitStep(): Promise<number>;
}

/** A sink that keeps events in memory (re-execution, tests). */
export class MemorySink implements TraceSink {
  readonly events: TraceEvent[] = [];

  append(event: NewTraceEvent): TraceEvent {
    const stamped = { ...event, seq: this.events.length, t: event.t ?? Date.now() } as TraceEvent;
    this.events.push(stamped);
    return stamped;
  }

  commitStep(): Promise<number> {
    return Promise.resolve(0);
  }
}

/** Adapts a trace writer to a sink. */
export function writerSink(writer: TraceWriter): TraceSink {
  return { append: (e) => writer.append(e), commitStep: () => writer.commit() };
}
