import { createClient, type StepboxClient } from '../../../shared/contract/client';
import { createWebSocketTransport } from '../../../shared/contract/ws-transport';
import { webSocketUrlFor } from '../../../shared/contract/ws-protocol';

declare global {
  interface Window {
    /** The contract, exposed by the Electron preload (absent in web mode). */
    readonly stepbox?: StepboxClient;
  }
}

/**
 * The renderer's one client: the Electron preload's when present, else the web mode's
 * WebSocket, authorised by the token in the page URL. Stores receive it and never see
 * which transport is underneath.
 */
export function connectClient(): StepboxClient {
  if (window.stepbox) return window.stepbox;
  const url = webSocketUrlFor(window.location.href);
  return createClient(createWebSocketTransport(url, (u) => new WebSocket(u)));
}
