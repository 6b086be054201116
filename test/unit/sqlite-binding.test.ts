import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkSqliteBinding, electronBindingPath } from '../../electron/engine/trace/sqlite';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_BINDING = join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node');
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('better-sqlite3 for Node and for Electron, side by side', () => {
  const temps: string[] = [];
  const temp = () => {
    const d = mkdtempSync(join(tmpdir(), 'stepbox-sqlite-'));
    temps.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
    delete process.env.STEPBOX_SQLITE_BINDING;
  });

  it('Node loads npm’s build; Electron looks in native/electron-<ABI>/', () => {
    expect(
      electronBindingPath({ node: '20.19.0', modules: '115' } as unknown as NodeJS.ProcessVersions, {}),
    ).toBeNull();
    expect(
      electronBindingPath(
        { ...process.versions, electron: '45.5.0', modules: '140' } as NodeJS.ProcessVersions,
        {},
      ),
    ).toBe(join(ROOT, 'native', 'electron-140', 'better_sqlite3.node'));
    expect(checkSqliteBinding()).toBeNull();
  });

  it('a missing or foreign binding is reported with its fix, not a stack trace', () => {
    const dir = temp();
    process.env.STEPBOX_SQLITE_BINDING = join(dir, 'absent.node');
    const missing = checkSqliteBinding();
    expect(missing?.code).toBe('sqlite_binding_missing');
    expect(missing?.message).toMatch(/no build for Node .*To fix it, run `npm rebuild better-sqlite3`/);
    // A binding built for another runtime (here: not even a library) is a mismatch, named as such.
    const foreign = join(dir, 'foreign.node');
    writeFileSync(foreign, 'built for another ABI');
    process.env.STEPBOX_SQLITE_BINDING = foreign;
    const mismatch = checkSqliteBinding();
    expect(mismatch?.message).toMatch(/cannot load in Node .*To fix it, run `npm rebuild better-sqlite3`/);
    expect(mismatch?.message).not.toMatch(/\n\s+at /);
  });

  it('the packager’s hook makes the Electron build apart; the CLI still loads its own binding afterwards', async () => {
    const before = sha(NODE_BINDING);
    const native = temp();
    const home = temp();
    // Simulate the packaging rebuild: whatever the build step produces lands in a copy of the package.
    process.env.STEPBOX_NATIVE_DIR = native;
    process.env.STEPBOX_SQLITE_BUILD_CMD =
      'mkdir -p build/Release && printf ELECTRON-ABI-BUILD > build/Release/better_sqlite3.node';
    try {
      const hook = createRequire(import.meta.url)(
        join(ROOT, 'build/before-build.cjs'),
      ) as () => Promise<boolean>;
      await expect(hook()).resolves.toBe(false);
    } finally {
      delete process.env.STEPBOX_NATIVE_DIR;
      delete process.env.STEPBOX_SQLITE_BUILD_CMD;
    }
    const abi = (
      createRequire(import.meta.url)('node-abi') as { getAbi(v: string, r: string): string }
    ).getAbi(
      JSON.parse(readFileSync(join(ROOT, 'node_modules/electron/package.json'), 'utf8')).version,
      'electron',
    );
    const made = join(native, `electron-${abi}`, 'better_sqlite3.node');
    expect(readFileSync(made, 'utf8')).toBe('ELECTRON-ABI-BUILD');
    expect(sha(NODE_BINDING)).toBe(before);
    // The CLI opens the episode index (SQLite) with npm's Node build.
    const cli = spawnSync(process.execPath, [join(ROOT, 'bin/stepbox.js'), 'list', '--json'], {
      env: { ...process.env, STEPBOX_HOME: home },
      encoding: 'utf8',
    });
    expect(cli.stderr).not.toMatch(/NODE_MODULE_VERSION|better_sqlite3/);
    expect(cli.status).toBe(0);
    expect(() => JSON.parse(cli.stdout)).not.toThrow();
    // The packager no longer rebuilds node_modules in place.
    const config = readFileSync(join(ROOT, 'build/electron-builder.yml'), 'utf8');
    expect(config).toMatch(/^npmRebuild: false$/m);
    expect(config).toMatch(/^beforeBuild: build\/before-build\.cjs$/m);
  }, 120_000);

  it('the build script says what to do when it cannot fetch or compile (offline)', () => {
    const native = temp();
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/electron-sqlite.js')], {
      env: { ...process.env, STEPBOX_NATIVE_DIR: native, STEPBOX_SQLITE_BUILD_CMD: 'exit 1' },
      encoding: 'utf8',
    });
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/needs the network once.*npm run electron:sqlite/);
  }, 60_000);
});
