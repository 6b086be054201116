import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const register = fileURLToPath(new URL('./traces-ts-register.mjs', import.meta.url));
const child = fileURLToPath(new URL('./traces-child.ts', import.meta.url));

/** Starts `test/support/traces-child.ts` in a real second node process (see its modes). */
export function runTraceChild(args: readonly string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['--import', register, child, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves with the first stdout line matching `pattern`; rejects on exit or after `timeoutMs`. */
export function waitForLine(
  proc: ChildProcess,
  pattern: RegExp,
  // A cold TypeScript child on a loaded 2-core machine took over 20 s to say its first line.
  timeoutMs = 60_000,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buf = '';
    let err = '';
    const timer = setTimeout(
      () => done(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${err}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      const lines = buf.split('\n');
      buf = lines.pop() ?? '';
      for (const line of lines) {
        const m = pattern.exec(line);
        if (m) return done(null, m);
      }
    };
    const onErr = (chunk: Buffer) => (err += chunk.toString('utf8'));
    const onExit = (code: number | null) =>
      done(new Error(`child exited (${code}) before ${pattern}; stderr: ${err}`));
    function done(e: Error | null, m?: RegExpExecArray) {
      clearTimeout(timer);
      proc.stdout?.off('data', onData);
      proc.stderr?.off('data', onErr);
      proc.off('exit', onExit);
      if (e) reject(e);
      else resolve(m!);
    }
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onErr);
    proc.on('exit', onExit);
  });
}

/** Resolves with the exit code (or signal) once the process has exited. */
export function exited(proc: ChildProcess): Promise<number | string> {
  if (proc.exitCode !== null) return Promise.resolve(proc.exitCode);
  if (proc.signalCode !== null) return Promise.resolve(proc.signalCode);
  return new Promise((resolve) => proc.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
}
