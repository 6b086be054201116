import { jsonTerminalSafe, terminalSafe } from '../../shared/terminal-text.js';
import type { CliIo } from './command.js';

const RAW = Symbol('raw stream');

function safeStream(inner: NodeJS.WritableStream, clean: (text: string) => string): NodeJS.WritableStream {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === RAW) return target;
      if (prop === 'write')
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...a: unknown[]) => boolean)(
            typeof chunk === 'string'
              ? clean(chunk)
              : chunk instanceof Uint8Array
                ? clean(Buffer.from(chunk).toString('utf8'))
                : chunk,
            ...rest,
          );
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The CLI's io with every write made terminal-safe ({@link terminalSafe}): commands print
 * agent and tool output, file names and trace text, none of which may drive the user's
 * terminal. With `--json`, stdout is one JSON document: its data is kept and only the
 * characters JSON leaves raw are escaped ({@link jsonTerminalSafe}).
 */
export function terminalSafeIo(io: CliIo, json: boolean): CliIo {
  return {
    ...io,
    stdout: safeStream(io.stdout, json ? jsonTerminalSafe : terminalSafe),
    stderr: safeStream(io.stderr, terminalSafe),
  };
}

/**
 * The stream under a terminal-safe one, for the CLI's own control output (a progress
 * line redrawn with CR); what is written there must already be safe.
 */
export function rawStream(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  return (stream as unknown as Record<symbol, NodeJS.WritableStream | undefined>)[RAW] ?? stream;
}
