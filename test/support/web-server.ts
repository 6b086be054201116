// Starts `stepbox serve` as a real child process (from the TypeScript sources, through
// the test TS hooks) and hands back its first stdout line: the URL with the token.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER = fileURLToPath(new URL('./traces-ts-register.mjs', import.meta.url));
const CLI = fileURLToPath(new URL('../../electron/cli-main.ts', import.meta.url));

/** A running `stepbox serve` child. */
export interface ServeChild {
  readonly url: string;
  readonly port: number;
  readonly token: string;
  readonly child: ChildProcess;
  stderr(): string;
  /** SIGINT, then the exit code (rejects after 20 s). */
  stop(): Promise<number | null>;
}

/** Runs `stepbox serve ARGS`; resolves once the first stdout line arrives (rejects after 60 s or on exit). */
export function spawnServe(args: readonly string[], env: Record<string, string> = {}): Promise<ServeChild> {
  const child = spawn(process.execPath, ['--import', REGISTER, CLI, 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no URL within 60 s; stderr:\n${stderr}`));
    }, 60_000);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`stepbox serve exited ${code} before printing a URL; stderr:\n${stderr}`));
    });
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      const url = stdout.slice(0, newline);
      const parsed = new URL(url);
      resolve({
        url,
        port: Number(parsed.port),
        token: parsed.searchParams.get('token') ?? '',
        child,
        stderr: () => stderr,
        async stop() {
          child.kill('SIGINT');
          const timeout = new Promise<never>((_, rej) =>
            setTimeout(
              () => rej(new Error(`serve did not exit after SIGINT; stderr:\n${stderr}`)),
              20_000,
            ).unref(),
          );
          return Promise.race([exited, timeout]);
        },
      });
    });
  });
}
