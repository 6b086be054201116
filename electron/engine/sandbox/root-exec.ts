import type { ExecOptions } from '../docker/client.js';
import { RUNTIME_PYTHON, runtimeProgram } from './sandbox-runtime.js';

/** The PATH of every exec started as root: system directories only, none the agent can write. */
export const ROOT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

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
    options: { user: '0:0', workingDir: '/', env: [`PATH=${ROOT_PATH}`, 'HOME=/'] },
  };
}
