/** The API contract between the window and the main process (IPC or WebSocket). */
export * from './models.js';
export * from './operations.js';
export * from './events.js';
export * from './transport.js';
export * from './client.js';
export * from './memory-transport.js';
export * from './ws-protocol.js';
export * from './ws-transport.js';
export * from './step-rows.js';
export * from './candidates.js';
export * from './ws-call-frame.js';
export * from './agents.js';
