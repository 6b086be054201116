import { createClient, type StepboxClient } from '../../../shared/contract/client';
import { createWebSocketTransport } from '../../../shared/contract/ws-transport';
import { webSocketUrlFor } from '../../../shared/contract/ws-protocol';

declare global {
  interface Window {
    /** The contract, exposed by the Electron preload (absent in web mode). */
    readonly stepbox?: StepboxClient;
  }
}

/** The window's client and when its calls reach the server. */
export interface Connection {
  readonly client: StepboxClient;
  /**
   * Settles once the calls made so far were handed to the server (at once over Electron's
   * IPC; when the WebSocket opens in web mode), whether or not it could connect.
   */
  readonly sent: () => Promise<void>;
}

/**
 * The renderer's one client: the Electron preload's when present, else the web mode's
 * WebSocket, authorised by the token in the page URL. Stores receive it and never see
 * which transport is underneath.
 */
export function connectClient(): Connection {
  if (window.stepbox) return { client: window.stepbox, sent: () => Promise.resolve() };
  const url = webSocketUrlFor(window.location.href);
  const transport = createWebSocketTransport(url, (u) => new WebSocket(u));
  return {
    client: createClient(transport),
    // A socket that cannot open settles too: the window must still draw and show the error.
    sent: () => transport.connected().catch(() => undefined),
  };
}
