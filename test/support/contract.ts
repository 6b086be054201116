/** Helpers for tests of the app services through the contract's client and transports. */
import type { EventName, EventOf, Transport } from '../../shared/contract/index.js';
import type { Result } from '../../shared/result.js';

/** The value of an ok result; throws with the error's code and message otherwise. */
export function value<T>(r: Result<T>): T {
  if (!r.ok) throw new Error(`expected ok, got ${r.error.code}: ${r.error.message}`);
  return r.value;
}

/** Resolves with the first payload of `event` matching `pred`, or rejects after `ms`. */
export function nextEvent<E extends EventName>(
  transport: Transport,
  event: E,
  pred: (p: EventOf<E>) => boolean = () => true,
  ms = 5_000,
): Promise<EventOf<E>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching ${event} within ${ms} ms`));
    }, ms);
    const off = transport.subscribe(event, (p) => {
      if (!pred(p as EventOf<E>)) return;
      clearTimeout(timer);
      off();
      resolve(p as EventOf<E>);
    });
  });
}
