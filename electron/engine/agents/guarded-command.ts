import { spawn } from 'node:child_process';

/**
 * The guard between stepbox and a long child (npm): it starts the command in a process
 * group of its own and kills that whole group when its stdin closes — which happens when
 * stepbox exits, even by `kill -9` — or on SIGINT/SIGTERM. Without it an `npm` started
 * by `agents add` outlives a killed stepbox and keeps writing into the install folder.
 */
const GUARD = `
const { spawn } = require('node:child_process');
const [cmd, ...args] = process.argv.slice(1);
const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
let done = false;
const killGroup = () => { if (done) return; done = true; try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
const stop = () => { killGroup(); process.exit(137); };
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
process.on('SIGHUP', stop);
child.on('error', (e) => { process.stderr.write(String(e.message) + '\\n'); process.exit(127); });
child.on('exit', (code, signal) => { done = true; process.exit(code ?? (signal ? 128 : 1)); });
`;

/** How a guarded command ended. */
export interface GuardedResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The command was cancelled through its signal (its process group is killed). */
export class CommandCancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'CommandCancelled';
  }
}

/**
 * Runs `cmd args` under the guard (see GUARD): its group dies with stepbox or when
 * `signal` aborts (then this rejects with {@link CommandCancelled}). Each stderr line goes to
 * `onLine` as it comes (npm's progress); stdout and stderr are kept (the last 64 KiB).
 */
export function runGuarded(
  cmd: string,
  args: readonly string[],
  options: {
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    signal?: AbortSignal;
    onLine?: (line: string) => void;
  } = {},
): Promise<GuardedResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new CommandCancelled());
      return;
    }
    const guard = spawn(process.execPath, ['-e', GUARD, cmd, ...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const keep = (s: string) => s.slice(-65536);
    let stdout = '';
    let stderr = '';
    let partial = '';
    guard.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout = keep(stdout + d);
    });
    guard.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr = keep(stderr + d);
      const lines = (partial + d).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l.trim() !== '') options.onLine?.(l);
    });
    let cancelled = false;
    const onAbort = () => {
      cancelled = true;
      // Closing its stdin is what tells the guard to kill the group (as stepbox's death would).
      guard.stdin.end();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    guard.on('error', (e) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(e);
    });
    guard.on('close', (code) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (partial.trim() !== '') options.onLine?.(partial);
      if (cancelled) reject(new CommandCancelled());
      else resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}
