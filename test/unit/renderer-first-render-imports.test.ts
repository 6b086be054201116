import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Issue 19.10: the window's first render of a 10,000-step trace must not build zod schemas
// (their construction cost the entry ~280 ms of CPU before it could even ask for the trace).
// Everything main.tsx and mount-window.tsx import statically is evaluated before the first
// rows are drawn; a module needing a schema is loaded with import() when it is used.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The static, value-level imports of a module (`import type` and type-only names left out). */
function valueImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /^(import|export)\s+(?!type\b)([\s\S]*?)\s+from\s+['"]([^'"]+)['"]/gm;
  for (const m of text.matchAll(re)) {
    const names = m[2].trim();
    // `{ type A, type B }`: types only, erased.
    if (/^\{\s*(type\s+\w+(\s+as\s+\w+)?\s*,?\s*)*\}$/.test(names)) continue;
    out.push(m[3]);
  }
  // Side-effect imports: `import './styles.css'`.
  for (const m of text.matchAll(/^import\s+['"]([^'"]+)['"]/gm)) out.push(m[1]);
  return out;
}

function resolveModule(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec).replace(/\.js$/, '');
  for (const ext of ['.ts', '.tsx', '/index.ts']) if (existsSync(base + ext)) return base + ext;
  return null;
}

/** Every package the static graph from `entries` reaches, with the chain that reached each. */
function packagesReached(entries: readonly string[]): Map<string, string[]> {
  const seen = new Set<string>();
  const reached = new Map<string, string[]>();
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of valueImports(file)) {
      const target = resolveModule(file, spec);
      const here = [...chain, file.slice(ROOT.length + 1)];
      if (target) walk(target, here);
      else if (!spec.startsWith('.') && !reached.has(spec)) reached.set(spec, here);
    }
  };
  for (const e of entries) walk(join(ROOT, e), []);
  return reached;
}

describe('the window before its first render', () => {
  it('imports no zod from its entry or its window chunk (schemas load on use)', () => {
    const reached = packagesReached(['renderer/src/main.tsx', 'renderer/src/mount-window.tsx']);
    const zod = [...reached].filter(([spec]) => spec === 'zod' || spec.startsWith('zod/'));
    expect(zod.map(([spec, chain]) => `${spec} via ${chain.join(' → ')}`)).toEqual([]);
    // The walk itself works: it reaches React and zustand.
    expect(reached.has('react-dom/client')).toBe(true);
    expect(reached.has('zustand/vanilla')).toBe(true);
  });
});
