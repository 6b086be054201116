import { posix } from 'node:path';
import type { MemoryFs } from './fs.js';
import { runCommand, ShellDeadline, ShellExit, type Io, type ShellState } from './shell-commands.js';
import { parseCommandLine, ShellSyntaxError, type Word } from './shell-parse.js';

export type { ShellState } from './shell-commands.js';

/** Output streams of one call: kept bytes up to a cap, and the count of everything written. */
export class CallOutput {
  readonly kept: [Uint8Array[], Uint8Array[]] = [[], []];
  readonly keptBytes = [0, 0];
  readonly written = [0, 0];

  constructor(private readonly cap: number) {}

  /** Appends to stdout (1) or stderr (2), keeping at most the cap per stream. */
  write(fd: 1 | 2, data: Uint8Array): void {
    const s = fd - 1;
    this.written[s] += data.byteLength;
    const room = this.cap - this.keptBytes[s];
    if (room <= 0) return;
    const part = data.byteLength > room ? data.subarray(0, room) : data;
    this.kept[s].push(part);
    this.keptBytes[s] += part.byteLength;
  }

  /** The kept bytes of a stream. */
  bytes(fd: 1 | 2): Uint8Array {
    return Buffer.concat(this.kept[fd - 1]);
  }

  /** True when a stream wrote more than it kept. */
  truncated(fd: 1 | 2): boolean {
    return this.written[fd - 1] > this.keptBytes[fd - 1];
  }
}

/** How a shell run ended: with a status, or by its deadline. */
export type ShellOutcome = { readonly kind: 'exit'; readonly code: number } | { readonly kind: 'timeout' };

const enc = new TextEncoder();
const bytesOf = (t: string | Uint8Array) => (typeof t === 'string' ? enc.encode(t) : t);

/**
 * Runs a command line of the documented subset (see `parseCommandLine`) against a
 * {@link MemoryFs}: `true`, `false`, `echo`, `printf`, `cat`, `pwd`, `cd`, `export`,
 * `unset`, `ls`, `mkdir`, `rm`, `touch`, `ln -s`, `chmod`, `mv`, `cp`, `test`/`[`,
 * `grep`, `sleep`, `exit`. Anything
 * else exits 127, as bash does for a missing command. `sleep` honours the deadline.
 */
export async function runShell(
  fs: MemoryFs,
  state: ShellState,
  line: string,
  output: CallOutput,
  deadline: number,
): Promise<ShellOutcome> {
  let commands;
  try {
    commands = parseCommandLine(line);
  } catch (e) {
    if (!(e instanceof ShellSyntaxError)) throw e;
    output.write(2, enc.encode(`bash: ${e.message}\n`));
    return { kind: 'exit', code: 2 };
  }
  let status = 0;
  try {
    for (const cmd of commands) {
      if ((cmd.join === '&&' && status !== 0) || (cmd.join === '||' && status === 0)) continue;
      const expand = (w: Word) =>
        w.parts.map((p) => ('lit' in p ? p.lit : lookupVar(state, p.variable, status))).join('');
      const argv = cmd.words
        .map((w) => ({ text: expand(w), keep: w.solid }))
        .filter((w) => w.keep || w.text !== '');
      const words = argv.map((w) => w.text);
      const io = redirectedIo(
        fs,
        state,
        output,
        cmd.redirects.map((r) => ({ ...r, file: r.target === '&1' ? '&1' : expand(r.target) })),
      );
      status = await runCommand(fs, state, words, io.io, deadline, status);
      if (io.failed()) status = 1;
    }
  } catch (e) {
    if (e instanceof ShellExit) return { kind: 'exit', code: e.code };
    if (e instanceof ShellDeadline) return { kind: 'timeout' };
    throw e;
  }
  return { kind: 'exit', code: status };
}

function lookupVar(state: ShellState, name: string, status: number): string {
  if (name === '?') return String(status);
  if (name === '$') return '1';
  return state.vars[name] ?? state.env[name] ?? '';
}

/** Routes a command's streams to the call's output or to files (`>`, `>>`, `2>`, `2>&1`). */
function redirectedIo(
  fs: MemoryFs,
  state: ShellState,
  output: CallOutput,
  redirects: { fd: 1 | 2; append: boolean; file: string }[],
): { io: Io; failed: () => boolean } {
  type Sink = (data: Uint8Array) => void;
  let failed = false;
  const toFile = (file: string, append: boolean): Sink => {
    if (file === '/dev/null') return () => undefined;
    const path = posix.resolve(state.cwd, file);
    let first = !append;
    return (data) => {
      if (failed) return;
      const old = first ? new Uint8Array() : fs.readFile(path);
      const prefix = old instanceof Uint8Array ? old : old.ok ? old.value : new Uint8Array();
      const r = fs.writeFile(path, Buffer.concat([prefix, data]), undefined, false);
      first = false;
      if (!r.ok) {
        failed = true;
        output.write(2, enc.encode(`bash: ${file}: ${r.error.message}\n`));
      }
    };
  };
  const sinks: [Sink, Sink] = [(d) => output.write(1, d), (d) => output.write(2, d)];
  for (const r of redirects) {
    if (r.file === '&1') sinks[1] = sinks[0];
    else {
      sinks[r.fd - 1] = toFile(r.file, r.append);
      sinks[r.fd - 1](new Uint8Array());
    }
  }
  return {
    io: { out: (t) => sinks[0](bytesOf(t)), err: (t) => sinks[1](bytesOf(t)) },
    failed: () => failed,
  };
}
