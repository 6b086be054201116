import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MemoryFs } from './memory-fs.js';
import { parseCommandLine, ShellSyntaxError, type Word } from './memory-shell-parse.js';

/** The persistent state of a memory shell session: cwd, exported environment, plain variables. */
export interface ShellState {
  cwd: string;
  env: Record<string, string>;
  vars: Record<string, string>;
}

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

interface Io {
  out(text: string | Uint8Array): void;
  err(text: string): void;
}

class Exit {
  constructor(readonly code: number) {}
}
class Deadline {}

const enc = new TextEncoder();
const bytesOf = (t: string | Uint8Array) => (typeof t === 'string' ? enc.encode(t) : t);

/**
 * Runs a command line of the documented subset (see `parseCommandLine`) against a
 * {@link MemoryFs}: `true`, `false`, `echo`, `printf`, `cat`, `pwd`, `cd`, `export`,
 * `unset`, `ls`, `mkdir`, `rm`, `touch`, `ln -s`, `chmod`, `sleep`, `exit`. Anything
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
    if (e instanceof Exit) return { kind: 'exit', code: e.code };
    if (e instanceof Deadline) return { kind: 'timeout' };
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

function printf(format: string, args: string[]): string {
  const escapes = (s: string) =>
    s.replace(
      /\\(n|t|\\|r|0)/g,
      (_, c: string) => ({ n: '\n', t: '\t', '\\': '\\', r: '\r', '0': '\0' })[c] ?? c,
    );
  let out = '';
  let rest = [...args];
  do {
    const consumed = { n: 0 };
    out += escapes(format).replace(/%(%|s|d|i|b)/g, (_, spec: string) => {
      if (spec === '%') return '%';
      const a = rest[consumed.n++] ?? '';
      if (spec === 'd' || spec === 'i') return String(Number.parseInt(a, 10) || 0);
      return spec === 'b' ? escapes(a) : a;
    });
    if (consumed.n === 0) break;
    rest = rest.slice(consumed.n);
  } while (rest.length > 0);
  return out;
}

/** Splits leading `-abc` flags from operands (`--` ends them). */
function flags(args: string[]): { set: Set<string>; operands: string[] } {
  const set = new Set<string>();
  let i = 0;
  for (; i < args.length && /^-[A-Za-z]+$/.test(args[i]); i++) for (const f of args[i].slice(1)) set.add(f);
  if (args[i] === '--') i++;
  return { set, operands: args.slice(i) };
}

async function runCommand(
  fs: MemoryFs,
  state: ShellState,
  words: string[],
  io: Io,
  deadline: number,
  lastStatus: number,
): Promise<number> {
  if (words.length === 0) return 0;
  const assignments = words.every((w) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  if (assignments) {
    for (const w of words) {
      const [name, value] = [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)];
      if (name in state.env) state.env[name] = value;
      else state.vars[name] = value;
    }
    return 0;
  }
  const [cmd, ...args] = words;
  const abs = (p: string) => posix.resolve(state.cwd, p);
  switch (cmd) {
    case 'true':
    case ':':
      return 0;
    case 'false':
      return 1;
    case 'echo': {
      const newline = args[0] !== '-n';
      io.out(args.slice(newline ? 0 : 1).join(' ') + (newline ? '\n' : ''));
      return 0;
    }
    case 'printf':
      if (!args.length) {
        io.err('printf: usage: printf format [arguments]\n');
        return 2;
      }
      io.out(printf(args[0], args.slice(1)));
      return 0;
    case 'pwd':
      io.out(state.cwd + '\n');
      return 0;
    case 'cd': {
      const target = abs(args[0] ?? state.env.HOME ?? '/');
      const r = fs.lookup(target, true);
      if (!r.ok || r.value.type !== 'dir') {
        io.err(`bash: cd: ${args[0]}: ${r.ok ? 'Not a directory' : 'No such file or directory'}\n`);
        return 1;
      }
      const real = fs.realPath(target, true);
      state.cwd = real.ok ? real.value : target;
      return 0;
    }
    case 'export':
      for (const a of args) {
        const eq = a.indexOf('=');
        const name = eq < 0 ? a : a.slice(0, eq);
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
          io.err(`bash: export: \`${a}': not a valid identifier\n`);
          return 1;
        }
        state.env[name] = eq < 0 ? (state.vars[name] ?? state.env[name] ?? '') : a.slice(eq + 1);
        delete state.vars[name];
      }
      return 0;
    case 'unset':
      for (const a of args) {
        delete state.env[a];
        delete state.vars[a];
      }
      return 0;
    case 'cat': {
      let status = 0;
      for (const f of args) {
        const r = fs.readFile(abs(f));
        if (r.ok) io.out(r.value);
        else {
          io.err(
            `cat: ${f}: ${r.error.code === 'is_directory' ? 'Is a directory' : 'No such file or directory'}\n`,
          );
          status = 1;
        }
      }
      return status;
    }
    case 'ls':
      return ls(fs, args, abs, io);
    case 'mkdir': {
      const { set, operands } = flags(args);
      let status = 0;
      for (const d of operands) {
        const r = fs.mkdir(abs(d), set.has('p'));
        if (!r.ok) {
          io.err(`mkdir: cannot create directory '${d}': ${r.error.message}\n`);
          status = 1;
        }
      }
      return status;
    }
    case 'rm': {
      const { set, operands } = flags(args);
      let status = 0;
      for (const p of operands) {
        const r = fs.remove(abs(p), set.has('r') || set.has('R'));
        if (!r.ok && !(set.has('f') && r.error.code === 'not_found')) {
          io.err(
            `rm: cannot remove '${p}': ${r.error.code === 'is_directory' ? 'Is a directory' : r.error.message}\n`,
          );
          status = 1;
        }
      }
      return status;
    }
    case 'touch': {
      let status = 0;
      for (const f of args) {
        if (fs.lookup(abs(f), true).ok) continue;
        const r = fs.writeFile(abs(f), new Uint8Array(), undefined, false);
        if (!r.ok) {
          io.err(`touch: cannot touch '${f}': ${r.error.message}\n`);
          status = 1;
        }
      }
      return status;
    }
    case 'ln': {
      const { set, operands } = flags(args);
      if (!set.has('s') || operands.length !== 2) {
        io.err('ln: the memory sandbox supports only ln -s TARGET LINK\n');
        return 1;
      }
      const r = fs.symlink(operands[0], abs(operands[1]));
      if (!r.ok) io.err(`ln: failed to create symbolic link '${operands[1]}': ${r.error.message}\n`);
      return r.ok ? 0 : 1;
    }
    case 'chmod': {
      const [mode, ...files] = args;
      if (!/^[0-7]{3,4}$/.test(mode ?? '')) {
        io.err(`chmod: the memory sandbox supports only octal modes, got '${mode ?? ''}'\n`);
        return 1;
      }
      let status = 0;
      for (const f of files) {
        const r = fs.chmod(abs(f), parseInt(mode, 8));
        if (!r.ok) {
          io.err(`chmod: cannot access '${f}': ${r.error.message}\n`);
          status = 1;
        }
      }
      return status;
    }
    case 'sleep': {
      const seconds = Number(args[0]);
      if (!Number.isFinite(seconds) || seconds < 0) {
        io.err(`sleep: invalid time interval '${args[0] ?? ''}'\n`);
        return 1;
      }
      const remaining = deadline - performance.now();
      await sleep(Math.max(0, Math.min(seconds * 1000, remaining)));
      if (seconds * 1000 >= remaining) throw new Deadline();
      return 0;
    }
    case 'exit': {
      const code = args[0] === undefined ? lastStatus : Number.parseInt(args[0], 10);
      throw new Exit(Number.isNaN(code) ? 2 : code & 0xff);
    }
    default:
      io.err(`bash: ${cmd}: command not found\n`);
      return 127;
  }
}

function ls(fs: MemoryFs, args: string[], abs: (p: string) => string, io: Io): number {
  const { set, operands } = flags(args);
  const paths = operands.length ? operands : ['.'];
  let status = 0;
  const blocks: string[] = [];
  for (const p of paths) {
    const r = fs.lookup(abs(p), true);
    if (!r.ok) {
      io.err(`ls: cannot access '${p}': No such file or directory\n`);
      status = 2;
      continue;
    }
    if (r.value.type !== 'dir') {
      blocks.push(p + '\n');
      continue;
    }
    const listed = fs.listDir(abs(p));
    const names = (listed.ok ? listed.value.map((e) => e.name) : [])
      .filter((n) => set.has('a') || !n.startsWith('.'))
      .sort();
    const body = names.map((n) => n + '\n').join('');
    blocks.push(paths.length > 1 ? `${p}:\n${body}` : body);
  }
  io.out(blocks.join(paths.length > 1 ? '\n' : ''));
  return status;
}
