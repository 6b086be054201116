import { posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MemoryFs } from './fs.js';

/** The persistent state of a memory shell session: cwd, exported environment, plain variables. */
export interface ShellState {
  cwd: string;
  env: Record<string, string>;
  vars: Record<string, string>;
}

/** Where a command writes: stdout and stderr, already routed through redirections. */
export interface Io {
  out(text: string | Uint8Array): void;
  err(text: string): void;
}

/** Thrown by `exit` to end the whole command line with a status. */
export class ShellExit {
  constructor(readonly code: number) {}
}
/** Thrown when a command reaches the call's deadline. */
export class ShellDeadline {}

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

/** Runs one expanded simple command; returns its exit status. */
export async function runCommand(
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
      if (seconds * 1000 >= remaining) throw new ShellDeadline();
      return 0;
    }
    case 'exit': {
      const code = args[0] === undefined ? lastStatus : Number.parseInt(args[0], 10);
      throw new ShellExit(Number.isNaN(code) ? 2 : code & 0xff);
    }
    case 'test':
    case '[': {
      if (cmd === '[' && args.pop() !== ']') {
        io.err("bash: [: missing `]'\n");
        return 2;
      }
      return testExpression(fs, args, abs);
    }
    case 'grep':
      return grep(fs, args, abs, io);
    case 'mv':
    case 'cp': {
      const { operands } = flags(args);
      if (operands.length !== 2) {
        io.err(`${cmd}: the memory sandbox supports only ${cmd} SOURCE DEST\n`);
        return 1;
      }
      const r =
        cmd === 'mv'
          ? fs.rename(abs(operands[0]), abs(operands[1]))
          : copyFile(fs, abs(operands[0]), abs(operands[1]));
      if (!r.ok)
        io.err(`${cmd}: cannot ${cmd === 'mv' ? 'move' : 'copy'} '${operands[0]}': ${r.error.message}\n`);
      return r.ok ? 0 : 1;
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

/** `test` / `[`: -e -f -d -z and `=`, and `!` in front (what the tests use). */
function testExpression(fs: MemoryFs, args: string[], abs: (p: string) => string): number {
  if (args[0] === '!') return testExpression(fs, args.slice(1), abs) === 0 ? 1 : 0;
  if (args.length === 0) return 1;
  if (args.length === 1) return args[0] !== '' ? 0 : 1;
  if (args.length === 3 && (args[1] === '=' || args[1] === '==')) return args[0] === args[2] ? 0 : 1;
  const [op, operand] = args;
  if (op === '-z') return operand === '' ? 0 : 1;
  const node = fs.lookup(abs(operand), true);
  if (!node.ok) return 1;
  if (op === '-e') return 0;
  if (op === '-f') return node.value.type === 'file' ? 0 : 1;
  if (op === '-d') return node.value.type === 'dir' ? 0 : 1;
  return 2;
}

/** `grep [-q] [-c] PATTERN FILE...`: the pattern as a JavaScript regular expression (the conformance suite checks the forms tests use against bash). */
function grep(fs: MemoryFs, args: string[], abs: (p: string) => string, io: Io): number {
  const { set, operands } = flags(args);
  const [pattern, ...files] = operands;
  if (pattern === undefined || files.length === 0) {
    io.err('grep: the memory sandbox supports only grep [-q] [-c] PATTERN FILE...\n');
    return 2;
  }
  const re = new RegExp(pattern);
  let matched = 0;
  let status = 0;
  for (const f of files) {
    const r = fs.readFile(abs(f));
    if (!r.ok) {
      io.err(`grep: ${f}: No such file or directory\n`);
      status = 2;
      continue;
    }
    const lines = new TextDecoder().decode(r.value).split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const hits = lines.filter((l) => re.test(l));
    matched += hits.length;
    if (set.has('q')) continue;
    const prefix = files.length > 1 ? `${f}:` : '';
    if (set.has('c')) io.out(`${prefix}${hits.length}\n`);
    else for (const h of hits) io.out(`${prefix}${h}\n`);
  }
  return status === 2 && !(set.has('q') && matched) ? 2 : matched ? 0 : 1;
}

function copyFile(fs: MemoryFs, from: string, to: string): ReturnType<MemoryFs['rename']> {
  const data = fs.readFile(from);
  if (!data.ok) return data;
  const dest = fs.lookup(to, true);
  const target = dest.ok && dest.value.type === 'dir' ? posix.join(to, posix.basename(from)) : to;
  const w = fs.writeFile(target, data.value, undefined, false);
  return w.ok ? { ok: true, value: undefined } : w;
}
