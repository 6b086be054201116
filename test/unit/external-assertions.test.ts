import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

// electron/engine/external/ is where input from agents the engine does not trust enters (model
// requests, MCP calls, recorded answers): there it is parsed with a schema, not cast (issue
// 34.3). Type assertions are counted by the compiler's own parse (`as X`, `<X>x`; `as const`
// and `import … as` are not assertions; `as unknown as X` counts once), so comments and
// strings never count and no form is missed.

const DIR = resolve(PROJECT_ROOT, 'electron/engine/external');
/** What is left: the MCP SDK's own types (its transports and messages) and the replay's verdicts. */
const MOST = 10;

/** The type assertions in TypeScript source `text`, as `file:line: text`. */
function assertions(file: string, text: string): string[] {
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node, inside: boolean): void => {
    const isAs =
      ts.isAsExpression(node) &&
      !(ts.isTypeReferenceNode(node.type) && node.type.typeName.getText(src) === 'const');
    const is = isAs || ts.isTypeAssertionExpression(node);
    if (is && !inside) {
      const line = src.getLineAndCharacterOfPosition(node.getStart(src)).line + 1;
      found.push(`${file}:${line}: ${node.getText(src).replace(/\s+/g, ' ').slice(0, 80)}`);
    }
    ts.forEachChild(node, (c) => visit(c, is && (ts.isAsExpression(c) || ts.isTypeAssertionExpression(c))));
  };
  visit(src, false);
  return found;
}

describe('engine/external parses what crosses into the engine, it does not cast it', () => {
  it(`holds at most ${MOST} type assertions`, () => {
    const all = readdirSync(DIR)
      .filter((f) => f.endsWith('.ts'))
      .sort()
      .flatMap((f) => assertions(f, readFileSync(resolve(DIR, f), 'utf8')));
    expect(all.length, all.join('\n')).toBeLessThanOrEqual(MOST);
  });

  it('counts every form and nothing else (the counter is checked on a sample)', () => {
    const sample = [
      "import * as fs from 'node:fs';",
      'const a = x as Foo;',
      'const b = <Bar>y;',
      'const c = z as unknown as Baz;',
      "const d = ['k'] as const;",
      '// a comment saying as Foo',
      "const e = 'as Foo';",
    ].join('\n');
    const n = assertions('s.ts', sample).length;
    expect(n).toBe(3);
  });
});
