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

/** The helper's source (resources/sandbox/helper.py), sent to python3 at every start. */
export function loadHelperSource(): Buffer {
  return loadSandboxResource('helper.py');
}
