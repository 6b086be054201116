import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eagerWrapperCode } from '../../vite.config.js';

// vite.config.ts's eagerModuleWrappers: the CommonJS wrappers of the window's chunk (React,
// react-dom) written as parenthesised `function`s, which V8 compiles with the streamed chunk.
// The build only warns when a wrapper stays an arrow; these tests fail when the rewrite stops
// matching what the bundler writes (a bundler upgrade) or changes what the code does.

let dir: string;
/** The bundler's own output for an ES entry importing a CommonJS module, not minified. */
let bundled: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stepbox-eager-'));
  await writeFile(
    join(dir, 'dep.cjs'),
    'const inner = (x) => x * 2;\nexports.twice = inner;\nmodule.exports.name = "dep";\n',
  );
  await writeFile(
    join(dir, 'entry.js'),
    'import dep from "./dep.cjs";\nexport const out = [dep.twice(21), dep.name];\n',
  );
  const result = await build({
    configFile: false,
    logLevel: 'silent',
    root: dir,
    build: {
      write: false,
      minify: false,
      lib: { entry: join(dir, 'entry.js'), formats: ['es'], fileName: 'entry' },
    },
  });
  const outputs = Array.isArray(result) ? result : [result];
  const chunk = outputs
    .flatMap((o) => ('output' in o ? o.output : []))
    .find((c) => c.type === 'chunk' && c.isEntry);
  if (!chunk || chunk.type !== 'chunk') throw new Error('vite built no entry chunk');
  bundled = chunk.code;
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs an ES chunk's body with its export turned into a return (no module loader needed). */
function run(code: string): unknown {
  const body = code
    .replace(/export\s*\{\s*(\w+)\s+as\s+out\s*\};?/, 'return $1;')
    .replace(/export\s*\{\s*out\s*\};?/, 'return out;');
  return new Function(body)();
}

describe('eagerWrapperCode', () => {
  it('finds the wrapper in what the bundler writes for a CommonJS module', () => {
    expect(bundled).toMatch(/__commonJSMin\(\(\(exports, module\) => \{/);
    const eager = eagerWrapperCode(bundled);
    expect(eager.arrowsLeft).toBe(false);
    expect(eager.code).toContain('__commonJSMin((function(exports, module) {');
  });

  it('leaves what the code does unchanged, arrows inside the module included', () => {
    const eager = eagerWrapperCode(bundled);
    expect(run(bundled)).toEqual([42, 'dep']);
    expect(run(eager.code)).toEqual([42, 'dep']);
    expect(eager.code).toContain('var inner = (x) => x * 2;');
  });

  it('rewrites every wrapper of a chunk, with one or two parameters', () => {
    const two = '__commonJSMin(((exports, module) => {\nmodule.exports = 1;\n}));';
    const one = '__commonJSMin(((exports) => {\nexports.a = 1;\n}));';
    const eager = eagerWrapperCode(`${two}\n${one}\n${two}`);
    expect(eager.code.match(/__commonJSMin\(\(function\(/g)).toHaveLength(3);
    expect(eager.arrowsLeft).toBe(false);
  });

  it('reports a wrapper it cannot rewrite (the build then warns)', () => {
    const odd = '__commonJSMin(((exports, module, require) => {\n}));';
    expect(eagerWrapperCode(odd)).toEqual({ code: odd, arrowsLeft: true });
  });
});
