import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAppServices, type AppServices } from './services/app-services.js';
import { loadEnginePorts } from './services/load-engine.js';
import type { EnginePorts } from './services/ports.js';
import { listen } from './server/web-server.js';
import { registerSecret } from './engine/trace/secrets.js';

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** `127.0.0.1` (default) or `localhost`; nothing else. */
  readonly host?: string;
  /** The store home (default `$STEPBOX_HOME` or `~/.stepbox`). */
  readonly home?: string;
  /** The built renderer; default `renderer/dist` of the project. */
  readonly rendererDir?: string;
  /** Engine ports to use instead of the real engine (tests). */
  readonly ports?: EnginePorts;
  /** A fixed token (tests); a fresh random one by default. */
  readonly token?: string;
}

/** A running web mode: its URL (with the token), the services behind it, and `close`. */
export interface RunningServer {
  readonly url: string;
  readonly token: string;
  readonly port: number;
  readonly services: AppServices;
  /** Stops serving, stops live episodes (traces closed) and destroys their sandboxes. */
  close(): Promise<void>;
}

/**
 * Starts web mode: the same contract as the Electron window, over HTTP and a WebSocket on
 * 127.0.0.1. For `stepbox serve` and end-to-end tests:
 * `const s = await startServer({port: 0, home}); page.goto(s.url); … await s.close();`
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const services = createAppServices(options.ports ?? (await loadEnginePorts(options.home)));
  const server = await listen({
    services,
    rendererDir: options.rendererDir ?? join(projectDir(), 'renderer', 'dist'),
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.host !== undefined ? { host: options.host } : {}),
    ...(options.token !== undefined ? { token: options.token } : {}),
  });
  // The token lives only in memory; every trace writer from now on redacts it too.
  registerSecret('STEPBOX_TOKEN', server.token);
  let closing: Promise<void> | null = null;
  return {
    url: server.url,
    token: server.token,
    port: server.port,
    services,
    close() {
      closing ??= (async () => {
        await server.close();
        await services.dispose();
      })();
      return closing;
    },
  };
}

/** The project folder (holds package.json), from source or from dist/. */
export function projectDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
