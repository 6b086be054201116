// Module hooks that let a child `node` process run the project's TypeScript sources
// directly (Node 20 cannot strip types): `.js` specifiers fall back to the `.ts` file,
// and `.ts` files are transpiled (types dropped, nothing bundled) with the project's
// own `typescript`. Used by tests that need a real second process (SIGKILL, locking).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    const relative = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
    if (relative && specifier.endsWith('.js')) return next(specifier.slice(0, -3) + '.ts', context);
    throw e;
  }
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const source = await readFile(fileURLToPath(url), 'utf8');
  const out = ts.transpileModule(source, {
    fileName: fileURLToPath(url),
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}
