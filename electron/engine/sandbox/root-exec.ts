import type { ExecOptions } from '../docker/client.js';
import { RUNTIME_PYTHON, runtimeProgram } from './sandbox-runtime.js';

/** The PATH of every exec started as root: system directories only, none the agent can write. */
export const ROOT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The dynamic loader's variables, emptied in every exec stepbox starts as root: an exec gets
 * the container's environment (an image's ENV, a devcontainer's containerEnv), and the
 * runtime's loader, run by root without set-id, obeys LD_PRELOAD and LD_AUDIT there (its
 * `--library-path` already replaces LD_LIBRARY_PATH). `ENV LD_PRELOAD=/workspace/x.so` made
 * the verifier's runner, started after the agent wrote x.so, run the agent's code as root.
 */
export const ROOT_LOADER_ENV: readonly string[] = ['LD_PRELOAD=', 'LD_AUDIT='];

/**
 * How stepbox starts a program as root inside a sandbox (the helper, the verifier runner):
 * the runtime's python3 (sandbox-runtime.ts: never the image's, which may have none), with
 * its own loader and libraries, `-I -S` (no user site, no `site` at all, no `PYTHON*` variable, no script
 * directory on `sys.path`), cwd `/`, `PATH` of system directories only and `HOME=/`. Nothing
 * the agent can write (its HOME, /workspace, /tmp, a directory it put on PATH) is read
 * before or by the program; the programs read the agent's environment from the container's
 * own (pid 1's) where they need it.
 */
export function rootPython(
  source: string,
  args: readonly string[] = [],
): { cmd: string[]; options: ExecOptions } {
  return {
    cmd: runtimeProgram(RUNTIME_PYTHON, ['-I', '-S', '-c', source, ...args]),
    options: { user: '0:0', workingDir: '/', env: [`PATH=${ROOT_PATH}`, 'HOME=/', ...ROOT_LOADER_ENV] },
  };
}
