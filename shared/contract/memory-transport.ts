import type { EventName } from './events.js';
import type { ContractHandler, Transport } from './transport.js';

/**
 * A transport that calls the handler in the same process, copying every message through
 * JSON as IPC or a socket would (VS Code's in-memory IPC pair). For tests of the contract
 * and of renderer stores without Electron or a server.
 */
export function createMemoryTransport(handler: ContractHandler): Transport {
  const listeners = new Map<EventName, Set<(payload: unknown) => void>>();
  handler.subscribe((event, payload) => {
    const set = listeners.get(event);
    if (!set || set.size === 0) return;
    const copy = roundTrip(payload);
    for (const listener of [...set]) listener(copy);
  });
  return {
    async call(op, input) {
      return roundTrip(await handler.handle(op, roundTrip(input)));
    },
    subscribe(event, listener) {
      let set = listeners.get(event);
      if (!set) listeners.set(event, (set = new Set()));
      set.add(listener);
      return () => set.delete(listener);
    },
  };
}

function roundTrip<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
