import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';

/**
 * A stand-in for npm on the served process's PATH (as test/unit/agents-install.test.ts
 * fakes it): `install SPEC` says two fetch lines, then waits for `$FAKE_NPM_GATE/NAME.go`
 * (a long download the test lets finish, or cancels) and makes node_modules/NAME/cli.js.
 */
const FAKE_NPM = `#!/bin/sh
cmd="$1"; spec="$2"; name="\${spec%@*}"; safe=$(printf '%s' "$name" | tr '/@' '__')
case "$cmd" in
  install)
    echo "npm http fetch GET 200 https://registry.npmjs.org/$name 12ms" >&2
    echo "npm http fetch GET 200 https://registry.npmjs.org/$name/-/$safe-1.0.0.tgz 31ms" >&2
    while [ ! -e "$FAKE_NPM_GATE/$safe.go" ]; do sleep 0.05; done
    mkdir -p "node_modules/$name"
    printf 'console.log("hi")\\n' > "node_modules/$name/cli.js"
    echo "npm http fetch GET 200 done" >&2 ;;
  *) echo "fake npm: $cmd is not faked" >&2; exit 1 ;;
esac
`;

/** A fake npm in `root/bin` and its gate folder; returns the env for `stepbox serve`. */
export function fakeNpm(root: string): { env: Record<string, string>; release(pkg: string): void } {
  const bin = join(root, 'bin');
  const gate = join(root, 'gate');
  mkdirSync(bin, { recursive: true });
  mkdirSync(gate, { recursive: true });
  writeFileSync(join(bin, 'npm'), FAKE_NPM);
  chmodSync(join(bin, 'npm'), 0o755);
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, FAKE_NPM_GATE: gate },
    release: (pkg) => writeFileSync(join(gate, `${pkg.replace(/[/@]/g, '_')}.go`), ''),
  };
}

/** A user's own recipe in `home/agents/recipes` (no runtime: npm install only). */
export function writeRecipe(home: string, name: string, command: string, description = ''): void {
  mkdirSync(join(home, 'agents', 'recipes'), { recursive: true });
  writeFileSync(
    join(home, 'agents', 'recipes', `${name}.json`),
    JSON.stringify({
      name,
      description,
      package: { name: `@demo/${name}`, version: '1.0.0', bin: { [name]: 'cli.js' } },
      command,
    }),
  );
}

/** The Agents panel (a dialog opened by "Agents…" beside the start form's Agent field). */
export class AgentsPanelObject {
  constructor(readonly page: Page) {}
  get opener(): Locator {
    return this.page.getByTestId('open-agents');
  }
  get root(): Locator {
    return this.page.getByTestId('agents-panel');
  }
  /** Opens it from the keyboard: focus on "Agents…", Enter. */
  async openByKeyboard(): Promise<void> {
    await this.opener.focus();
    await this.page.keyboard.press('Enter');
    await this.root.waitFor();
  }
  row(name: string): Locator {
    return this.root.getByTestId(`agent-${name}`);
  }
  add(name: string): Locator {
    return this.row(name).getByTestId('agent-add');
  }
  cancel(name: string): Locator {
    return this.row(name).getByTestId('agent-cancel');
  }
  remove(name: string): Locator {
    return this.row(name).getByTestId('agent-remove');
  }
  progress(name: string): Locator {
    return this.row(name).getByTestId('agent-progress');
  }
  state(name: string): Locator {
    return this.row(name).getByTestId('agent-state');
  }
  note(name: string): Locator {
    return this.row(name).getByTestId('agent-note');
  }
  /** The percent the row's progress bar shows. */
  async percent(name: string): Promise<number> {
    return Number(await this.progress(name).locator('progress').getAttribute('value'));
  }
}
