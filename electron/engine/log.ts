import { terminalSafe } from '../../shared/terminal-text.js';

/** Log levels, quietest last. `STEPBOX_LOG=debug` shows everything. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger with a context prefix (`[docker] container 3f2a…: …`); writes to stderr, never stdout. */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** A logger whose prefix adds `context`. */
  child(context: string): Logger;
}

function threshold(): number {
  const level = (process.env.STEPBOX_LOG ?? 'warn') as LogLevel;
  return ORDER[level] ?? ORDER.warn;
}

/** Creates a logger for a context, e.g. `logger('docker')`. */
export function logger(context: string): Logger {
  const write = (level: LogLevel, message: string) => {
    if (ORDER[level] >= threshold())
      // Messages quote file names, tool output and errors from the sandbox: never raw to a terminal.
      process.stderr.write(
        terminalSafe(`[${context}] ${level === 'info' ? '' : level + ': '}${message}`) + '\n',
      );
  };
  return {
    debug: (m) => write('debug', m),
    info: (m) => write('info', m),
    warn: (m) => write('warn', m),
    error: (m) => write('error', m),
    child: (c) => logger(`${context}] [${c}`),
  };
}
