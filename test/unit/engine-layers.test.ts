import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

/**
 * The engine's folders import one way: agents/ (the Agent interface and the kinds that
 * decide inside the harness) ← harness/ ← external/ (programs of their own: exec:,
 * sandbox:), with the kinds put together above them (agent-factory.ts, open-engine.ts).
 * A cycle between folders is how "harness → agents → external → harness" came about; this
 * walks the import graph of the TypeScript sources (type-only imports included: they are
 * dependencies of the design even when erased) and fails on any.
 */

const ENGINE = join(PROJECT_ROOT, 'electron/engine');

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** The relative modules a source imports or re-exports (static, dynamic and, unless `values`, type-only). */
function importsOf(text: string, values = false): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(
    /(^\s*(?:import|export)\s+type\b[^;]*?)?(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm,
  ))
    if (!values || m[1] === undefined) out.push(m[2]);
  return out;
}

/** The node a file belongs to: its top folder under the engine, or the root file itself. */
function nodeOf(file: string): string | null {
  const rel = relative(ENGINE, file).split('\\').join('/');
  if (rel.startsWith('..')) return null;
  const slash = rel.indexOf('/');
  return slash < 0 ? rel : `${rel.slice(0, slash)}/`;
}

/** Folder (and root-file) dependency graph of the engine. */
function engineGraph(): Map<string, Map<string, string>> {
  return importGraph(ENGINE, nodeOf);
}

/**
 * The dependency graph of the sources under `dir`, each file a node of `node` (null: left
 * out); with `values`, only the imports that load a module (`import type` left out).
 */
function importGraph(
  dir: string,
  node: (file: string) => string | null,
  values = false,
): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sources(dir)) {
    const from = node(file);
    if (!from) continue;
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const spec of importsOf(readFileSync(file, 'utf8'), values)) {
      const to = node(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
      // One witness per edge, so a failure names the import to move.
      if (to && to !== from && !edges.has(to))
        edges.set(to, `${relative(PROJECT_ROOT, file)} imports ${spec}`);
    }
  }
  return graph;
}

/** The strongly connected components with more than one node (Tarjan). */
function cycles(graph: Map<string, Map<string, string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** The edges inside a cycle, each with the import that makes it. */
function witnesses(graph: Map<string, Map<string, string>>, scc: readonly string[]): string[] {
  const inside = new Set(scc);
  return scc.flatMap((v) =>
    [...(graph.get(v) ?? new Map<string, string>())]
      .filter(([w]) => inside.has(w))
      .map(([w, why]) => `${v} → ${w}: ${why}`),
  );
}

describe('engine layers', () => {
  const graph = engineGraph();

  it('the walker sees the imports (a sanity check: harness uses agents, external uses harness)', () => {
    expect(graph.get('harness/')?.has('agents/')).toBe(true);
    expect(graph.get('external/')?.has('harness/')).toBe(true);
    expect(
      cycles(
        new Map([
          ['a/', new Map([['b/', 'x']])],
          ['b/', new Map([['a/', 'y']])],
        ]),
      ),
    ).toEqual([['a/', 'b/']]);
  });

  it('agents/, harness/ and external/ import one way: agents ← harness ← external', () => {
    for (const [from, to] of [
      ['agents/', 'harness/'],
      ['agents/', 'external/'],
      ['harness/', 'external/'],
    ] as const)
      expect(graph.get(from)?.get(to) ?? null, `${from} must not import ${to}`).toBeNull();
  });

  it('no cycle between any two folders of the engine (or through its root files)', () => {
    const found = cycles(graph);
    // The one left is below the harness and not this test's to untangle: the Docker adapter,
    // the sandbox and the tool registry (docker/ ↔ sandbox/ ↔ tools/). It may shrink, never grow.
    const KNOWN = ['docker/', 'sandbox/', 'tools/'];
    const unknown = found.filter((scc) => !scc.every((n) => KNOWN.includes(n)));
    expect(unknown.map((scc) => witnesses(graph, scc))).toEqual([]);
    for (const layer of ['agents/', 'harness/', 'external/'])
      expect(
        found.some((scc) => scc.includes(layer)),
        `${layer} is in a cycle`,
      ).toBe(false);
  });

  it('the harness asks an agent driver, never lists agent kinds', () => {
    const KIND = /\bkind\s*[!=]==\s*'(?:scripted|replay|openai|anthropic|gemini|manual|exec|sandbox|oracle)'/;
    const offenders = sources(join(ENGINE, 'harness')).filter((f) => KIND.test(readFileSync(f, 'utf8')));
    expect(offenders.map((f) => relative(PROJECT_ROOT, f))).toEqual([]);
  });
});

/**
 * shared/ is one layer of small modules, each a concept; two of them loading each other
 * (end-words.ts ↔ step-summary.ts did, through oneLine) means a concept is in the wrong file,
 * and what one reads of the other while it loads is undefined. Type-only imports load
 * nothing and are left out (several types are declared beside the words that use them).
 */
describe('shared layer', () => {
  const SHARED = join(PROJECT_ROOT, 'shared');
  const file = (f: string) => (f.startsWith(SHARED) ? relative(SHARED, f) : null);
  const graph = importGraph(SHARED, file, true);

  it('the walker sees shared/’s imports (a sanity check: end-words uses one-line)', () => {
    expect(graph.get('end-words.ts')?.has('one-line.ts')).toBe(true);
  });

  it('no two of its files load each other, directly or round a cycle', () => {
    expect(cycles(graph).map((scc) => witnesses(graph, scc))).toEqual([]);
  });
});
