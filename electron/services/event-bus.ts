import type { EventName, EventOf } from '../../shared/contract/index.js';
import { logger } from '../engine/log.js';

const log = logger('events');

/** Who receives an event: everyone, or only the connection (client) that owns the stream. */
export type Audience = string | null;

/** A listener of the bus: every event, with the client it is meant for (null = all). */
export type BusListener = (event: EventName, payload: unknown, audience: Audience) => void;

/** The services' one outgoing event stream; transports subscribe and forward. */
export class EventBus {
  private readonly listeners = new Set<BusListener>();

  /** Emits an event to every transport (or only to `audience`'s connection). */
  emit<E extends EventName>(event: E, payload: EventOf<E>, audience: Audience = null): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event, payload, audience);
      } catch (e) {
        // One broken transport must not starve the others.
        log.warn(`listener of ${event} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  /** Subscribes to every event; returns the unsubscribe. */
  subscribe(listener: BusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
