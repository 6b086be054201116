import type { Result } from '../result.js';
import type { EventName } from './events.js';
import type { OperationName } from './operations.js';

/**
 * What carries the contract between the window and the main process: IPC in Electron,
 * a WebSocket in web mode, a direct call in tests. `call` resolves with the operation's
 * Result (it may reject only when the carrier itself fails; the client turns that into data).
 */
export interface Transport {
  call(op: OperationName, input: unknown): Promise<Result<unknown>>;
  /** Listens to one event stream; returns the unsubscribe. */
  subscribe(event: EventName, listener: (payload: unknown) => void): () => void;
}

/** The main-side end a transport delivers to: the services' one dispatch wrapper and event bus. */
export interface ContractHandler {
  /** Validates `input` against the operation's schema and runs it; never rejects. */
  handle(op: string, input: unknown): Promise<Result<unknown>>;
  /** Listens to every event the services emit; returns the unsubscribe. */
  subscribe(listener: (event: EventName, payload: unknown) => void): () => void;
}
