import { parseArgs } from 'node:util';
import { onInterrupt } from '../engine/interrupt.js';
import type { CliCommand } from './command.js';
import { EXIT, UsageError } from './command.js';
import { intFlag } from './number-flags.js';
import { loadSettings } from '../services/settings-file.js';
import { stepboxHome } from '../engine/stepbox-home.js';

const HELP = `stepbox serve — the stepbox window in a browser (web mode), on 127.0.0.1 only

Usage: stepbox serve [--port P] [--host 127.0.0.1]

  --port P     port to listen on; 0 (default) picks a free one
  --host H     127.0.0.1 (default) or localhost; web mode never listens elsewhere

The first line on stdout is the page URL with a per-run token
(http://127.0.0.1:PORT/?token=…). The token guards the WebSocket and every /api/*
route; open the URL as printed. Ctrl+C stops live episodes (their traces close as
interrupted) and destroys their sandboxes; so do $STEPBOX_HOME/settings.json's
ui.idle_release (a live episode idle 15 min) and ui.release_after_close (30 s after the
last window closed). README "Settings".

Example: stepbox serve --port 0
`;

/** `stepbox serve`: web mode. */
export const command: CliCommand = {
  name: 'serve',
  summary: 'serve the stepbox window on 127.0.0.1 (web mode); prints its URL',
  help: HELP,
  async run(argv, io) {
    let values: { port?: string; host?: string };
    try {
      ({ values } = parseArgs({
        args: argv,
        options: { port: { type: 'string' }, host: { type: 'string' } },
        allowPositionals: false,
      }));
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    const port = intFlag('port', values.port, { min: 0, max: 65535 }) ?? 0;
    const host = values.host ?? '127.0.0.1';
    if (host !== '127.0.0.1' && host !== 'localhost')
      throw new UsageError(
        `--host must be 127.0.0.1 or localhost (web mode is loopback only), not "${host}"`,
      );

    // A bad settings file stops here, naming the key and the fix (not a server with silent defaults).
    const settings = loadSettings(stepboxHome(io.env));
    if (!settings.ok) throw new UsageError(settings.error.message);

    // Signals are handled from here on, so a Ctrl+C right after the URL still cleans up.
    let signalled: string | null = null;
    let wake: () => void = () => undefined;
    const uninstall = onInterrupt((signal) => {
      signalled = signal;
      wake();
    });
    try {
      const { startServer } = await import('../server.js');
      const server = await startServer({
        port,
        host,
        settings: settings.value,
        ...(io.env.STEPBOX_HOME ? { home: io.env.STEPBOX_HOME } : {}),
      });
      io.stdout.write(`${server.url}\n`);
      io.stderr.write(`stepbox serve: open the URL above in a browser; Ctrl+C to stop\n`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (signalled) resolve();
      });
      io.stderr.write(`stepbox serve: ${signalled}: stopping live episodes and their sandboxes…\n`);
      await server.close().catch((e: unknown) => {
        io.stderr.write(`stepbox serve: cleanup failed: ${e instanceof Error ? e.message : String(e)}\n`);
      });
    } finally {
      uninstall();
    }
    return EXIT.ok;
  },
};
