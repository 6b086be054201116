import { createClient, type StepboxClient } from '../../shared/contract/client';
import type { EventName, EventOf } from '../../shared/contract/events';
import { createMemoryTransport } from '../../shared/contract/memory-transport';
import type { OperationName, ParsedRequestOf, ResponseOf } from '../../shared/contract/operations';
import type { ContractHandler } from '../../shared/contract/transport';
import type { AppError } from '../../shared/errors';
import type { Result } from '../../shared/result';

type Handler<O extends OperationName> = (
  request: ParsedRequestOf<O>,
) => ResponseOf<O> | AppError | Promise<ResponseOf<O> | AppError>;

/** A scripted stand-in for the main process: handlers per operation, events on demand, calls recorded. */
export interface FakeBackend {
  readonly client: StepboxClient;
  readonly calls: { op: OperationName; input: unknown }[];
  on<O extends OperationName>(op: O, handler: Handler<O>): void;
  emit<E extends EventName>(event: E, payload: EventOf<E>): void;
  /** Calls of one operation, in order. */
  callsOf(op: OperationName): unknown[];
}

function isAppError(v: unknown): v is AppError {
  return typeof v === 'object' && v !== null && 'code' in v && 'message' in v && Object.keys(v).length === 2;
}

/**
 * A fake backend behind the real contract client and the in-memory transport, so store
 * tests exercise the same client code the window runs. Unhandled operations fail as data.
 */
export function createFakeBackend(): FakeBackend {
  const handlers = new Map<string, Handler<OperationName>>();
  const listeners = new Set<(event: EventName, payload: unknown) => void>();
  const calls: { op: OperationName; input: unknown }[] = [];
  const handler: ContractHandler = {
    async handle(op, input) {
      calls.push({ op: op as OperationName, input });
      const h = handlers.get(op);
      if (!h) return { ok: false, error: { code: 'internal', message: `fake: no handler for ${op}` } };
      const value = await h(input as never);
      return (isAppError(value) ? { ok: false, error: value } : { ok: true, value }) as Result<unknown>;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    client: createClient(createMemoryTransport(handler)),
    calls,
    on(op, h) {
      handlers.set(op, h as Handler<OperationName>);
    },
    emit(event, payload) {
      for (const l of listeners) l(event, payload);
    },
    callsOf: (op) => calls.filter((c) => c.op === op).map((c) => c.input),
  };
}
