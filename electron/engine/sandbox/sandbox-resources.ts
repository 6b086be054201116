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

/** The programs stepbox runs as root in the sandbox, each sent with what programs.json lists ahead of it. */
export type SandboxProgram = 'helper.py' | 'bridge.py' | 'verifier.py';

/**
 * What resources/sandbox/programs.json lists ahead of each program (the prelude, then the
 * helper's parts), in order: the one list both the host and a program run from its file
 * (tests, prelude.py load_parts) read.
 */
export function programParts(name: SandboxProgram): string[] {
  const table: unknown = JSON.parse(loadSandboxResource('programs.json').toString('utf8'));
  const parts =
    typeof table === 'object' && table !== null
      ? Object.entries(table).find(([k]) => k === name)?.[1]
      : undefined;
  if (!Array.isArray(parts) || !parts.every((p): p is string => typeof p === 'string'))
    throw new SandboxFailure(
      'sandbox_failed',
      `resources/sandbox/programs.json lists no parts for ${name}; reinstall stepbox`,
    );
  return parts;
}

/**
 * A program stepbox runs as root in the sandbox (helper.py, bridge.py, verifier.py) as the
 * one source sent to `python3 -I -c`: what programs.json lists ahead of it
 * (resources/sandbox/prelude.py, which they share, then the helper's parts), then the
 * program, which finds their names defined in its own namespace (run from its file, it
 * reads them from beside itself instead: prelude.py load_parts).
 */
export function loadSandboxProgram(name: SandboxProgram): Buffer {
  const key = `program:${name}`;
  const cached = sources.get(key);
  if (cached) return cached;
  const program = loadSandboxResource(name);
  // The program's own first line (its name, a comment) leads, so `ps` and the sandbox's
  // process list say which program a root python is, not that it starts with the prelude.
  const firstLine = program.subarray(0, program.indexOf(0x0a) + 1);
  const newline = Buffer.from('\n');
  const parts = programParts(name).flatMap((part) => [loadSandboxResource(part), newline]);
  const source = Buffer.concat([firstLine, ...parts, program]);
  sources.set(key, source);
  return source;
}

/** The helper's source (the prelude, its parts, then resources/sandbox/helper.py), sent to python3 at every start. */
export function loadHelperSource(): Buffer {
  return loadSandboxProgram('helper.py');
}
