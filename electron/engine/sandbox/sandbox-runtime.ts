/**
 * stepbox's sandbox runtime: the programs its own code needs inside a sandbox (python3 for
 * the helper, the verifier runner and the agent bridge; setpriv and ipcrm; a static bash
 * and busybox), brought in a read-only volume (docker/runtime-volume.ts) so that a task's
 * image needs none of them: no python3, no bash, no user 1000 — only linux and the
 * runtime's architecture. Built by resources/sandbox/runtime.py from the stepbox image.
 */

/** Where the runtime volume is mounted in every sandbox. */
export const RUNTIME_MOUNT = '/opt/stepbox';
/** The runtime itself (a folder of the volume, moved into place whole when complete). */
export const RUNTIME_DIR = `${RUNTIME_MOUNT}/runtime`;
/** The runtime's dynamic loader: its dynamic programs never use the image's (an image may have none). */
export const RUNTIME_LOADER = `${RUNTIME_DIR}/lib/ld.so`;
/** The folder of the libraries the runtime's dynamic programs load. */
export const RUNTIME_LIB = `${RUNTIME_DIR}/lib`;
/** The runtime's python3 (started through {@link runtimeProgram}). */
export const RUNTIME_PYTHON = `${RUNTIME_DIR}/usr/bin/python3`;
/** util-linux's setpriv (started through {@link runtimeProgram}; busybox's lacks --reuid). */
export const RUNTIME_SETPRIV = `${RUNTIME_DIR}/usr/bin/setpriv`;
/** A gid that owns nothing: a sealed process's effective gid until it drops back (prelude.py SEAL_GID). */
export const SEAL_GID = 65534;
/** The runtime's static bash: the agent's shell in an image without one, and stepbox's own scripts' shell. */
export const RUNTIME_BASH = `${RUNTIME_DIR}/bin/bash`;
/** The runtime's static busybox: the main command (by its `sleep` link), setup scripts' tools. */
export const RUNTIME_BUSYBOX = `${RUNTIME_DIR}/bin/busybox`;
/** A folder of busybox applet links (for setup scripts' PATH, after the image's own directories). */
export const RUNTIME_APPLETS = `${RUNTIME_DIR}/applets`;
/** A script starting the runtime's python3 with its loader, for checks and people (`/opt/stepbox/runtime/bin/python3`). */
export const RUNTIME_PYTHON_WRAPPER = `${RUNTIME_DIR}/bin/python3`;
/** The file the runtime's builder writes last (its version). */
export const RUNTIME_MARK = 'runtime/VERSION';

/**
 * The argv that starts one of the runtime's dynamic programs: through the runtime's own
 * loader, with its libraries only (the image's loader cache is not read), so it runs on any
 * image of the right architecture — one with no loader, a musl one, a static one.
 */
export function runtimeProgram(path: string, args: readonly string[] = []): string[] {
  return [RUNTIME_LOADER, '--inhibit-cache', '--library-path', RUNTIME_LIB, path, ...args];
}

/**
 * The container's main command: root, does nothing, outlives every process of the agent's.
 * busybox by its `sleep` link, so it is `sleep infinity` in `ps` and `pgrep` as on any image.
 */
export const MAIN_COMMAND = [`${RUNTIME_APPLETS}/sleep`, 'infinity'];
