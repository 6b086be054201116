import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxFailure } from './sandbox.js';

const sources = new Map<string, Buffer>();

/** A file of resources/sandbox/ (helper.py, verifier.py), found from this module upwards (src and dist layouts). */
export function loadSandboxResource(name: string): Buffer {
  const cached = sources.get(name);
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'resources', 'sandbox', name);
    if (existsSync(candidate)) {
      const source = readFileSync(candidate);
      sources.set(name, source);
      return source;
    }
    const up = dirname(dir);
    if (up === dir)
      throw new SandboxFailure(
        'sandbox_failed',
        `resources/sandbox/${name} is missing from this stepbox install; reinstall stepbox`,
      );
    dir = up;
  }
}

/**
 * A program stepbox runs as root in the sandbox (helper.py, bridge.py, verifier.py) as the
 * one source sent to `python3 -I -c`: resources/sandbox/prelude.py (the privilege drop they
 * share), then the program, which finds the prelude's names defined (run from its file, it
 * imports prelude.py from beside itself instead).
 */
export function loadSandboxProgram(name: 'helper.py' | 'bridge.py' | 'verifier.py'): Buffer {
  const key = `program:${name}`;
  const cached = sources.get(key);
  if (cached) return cached;
  const program = loadSandboxResource(name);
  // The program's own first line (its name, a comment) leads, so `ps` and the sandbox's
  // process list say which program a root python is, not that it starts with the prelude.
  const firstLine = program.subarray(0, program.indexOf(0x0a) + 1);
  const source = Buffer.concat([firstLine, loadSandboxResource('prelude.py'), Buffer.from('\n'), program]);
  sources.set(key, source);
  return source;
}

/** The helper's source (the prelude, then resources/sandbox/helper.py), sent to python3 at every start. */
export function loadHelperSource(): Buffer {
  return loadSandboxProgram('helper.py');
}
