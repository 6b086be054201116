import { appError } from '../app-error.js';
import { err, type Result } from '../result.js';
import { EVENT_NAMES } from './event-names.js';
import type { EventName, EventOf } from './events.js';
import { OPERATION_NAMES } from './operation-names.js';
import type { OperationName, RequestOf, ResponseOf } from './operations.js';
import type { Transport } from './transport.js';

type DomainOf<O extends string> = O extends `${infer D}.${string}` ? D : never;
type VerbOf<O extends string> = O extends `${string}.${infer V}` ? V : never;

/** Optional when every field of the request is optional (e.g. `client.tasks.list()`). */
type Args<O extends OperationName> =
  Record<never, never> extends RequestOf<O> ? [request?: RequestOf<O>] : [request: RequestOf<O>];

/** One operation as a method: never rejects; failures come back as `{ok: false, error}`. */
export type OperationMethod<O extends OperationName> = (...args: Args<O>) => Promise<Result<ResponseOf<O>>>;

/** The operations grouped by domain: `client.episode.step({id})`. */
export type ClientOperations = {
  readonly [D in DomainOf<OperationName>]: {
    readonly [O in Extract<OperationName, `${D}.${string}`> as VerbOf<O>]: OperationMethod<O>;
  };
};

/** `episode.event` → `onEpisodeEvent`, `sandbox.statsEnd` → `onSandboxStatsEnd`. */
export type EventMethodName<E extends string> = E extends `${infer D}.${infer V}`
  ? `on${Capitalize<D>}${Capitalize<V>}`
  : never;

/** The event subscriptions: `client.onEpisodeEvent(cb)` returns the unsubscribe. */
export type ClientEvents = {
  readonly [E in EventName as EventMethodName<E>]: (listener: (payload: EventOf<E>) => void) => () => void;
};

/** The typed contract as the window sees it, whichever transport is underneath. */
export type StepboxClient = ClientOperations & ClientEvents;

/** The subscription method name of an event stream. */
export function eventMethodName<E extends EventName>(event: E): EventMethodName<E> {
  const [domain, verb] = event.split('.');
  return `on${domain[0].toUpperCase()}${domain.slice(1)}${verb[0].toUpperCase()}${verb.slice(1)}` as EventMethodName<E>;
}

/**
 * Builds the typed client over a transport. Every method resolves with a Result: a
 * transport failure (socket closed, IPC gone) becomes `{ok: false, error: {code: 'internal'}}`.
 */
export function createClient(transport: Transport): StepboxClient {
  const client: Record<string, unknown> = {};
  for (const op of OPERATION_NAMES) {
    const [domain, verb] = op.split('.');
    const group = (client[domain] ??= {}) as Record<string, unknown>;
    group[verb] = async (request: unknown = {}): Promise<Result<unknown>> => {
      try {
        return await transport.call(op, request);
      } catch (e) {
        return err(appError('internal', `${op}: the connection to stepbox failed: ${describe(e)}`));
      }
    };
  }
  for (const event of EVENT_NAMES) {
    client[eventMethodName(event)] = (listener: (payload: unknown) => void) =>
      transport.subscribe(event, listener);
  }
  return client as StepboxClient;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Re-exported for callers that name operations generically (tests, devtools). */
export type { OperationName, EventName };
