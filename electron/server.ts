import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAppServices, type AppServices } from './services/app-services.js';
import { loadEnginePorts } from './services/load-engine.js';
import type { EnginePorts } from './services/ports.js';
import { listen } from './server/web-server.js';
import { registerSecret } from './engine/trace/secrets.js';
import { stepboxHome } from './engine/stepbox-home.js';
import { DEFAULT_LOADED_SETTINGS, loadSettings, type LoadedSettings } from './services/settings-file.js';

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
  /** The settings (default: read from `<home>/settings.json`; a bad file is an error naming the fix). */
  readonly settings?: LoadedSettings;
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
  // Fake engine ports (tests) run on the defaults unless given settings: never the user's file.
  const settings =
    options.settings ?? (options.ports && !options.home ? DEFAULT_LOADED_SETTINGS : settingsOf(options.home));
  const services = createAppServices(options.ports ?? (await loadEnginePorts(options.home)), { settings });
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

/** The settings file of a home (default `$STEPBOX_HOME`); throws its error, which names the key and the fix. */
export function settingsOf(home: string | undefined): LoadedSettings {
  const loaded = loadSettings(home ?? stepboxHome());
  if (!loaded.ok) throw Object.assign(new Error(loaded.error.message), { code: loaded.error.code });
  return loaded.value;
}

/** The project folder (holds package.json), from source or from dist/. */
export function projectDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
