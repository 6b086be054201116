#!/usr/bin/env node
// Builds better-sqlite3 for Electron's ABI into native/electron-<ABI>/better_sqlite3.node,
// in a copy of the package, so npm's Node build (used by the CLI and the web mode) is never
// replaced. Run by `npm run electron:sqlite`, by `npm start` before the first window, and
// by the packager (build/before-build.cjs). A prebuilt binary is tried first
// (prebuild-install), then a compile (node-gyp with Electron's headers); both need the
// network once. Exit 0 when the binding exists (already or now), 3 when it cannot be made.
//
// STEPBOX_NATIVE_DIR puts the output elsewhere (tests); STEPBOX_SQLITE_BUILD_CMD replaces the
// fetch/compile step with a command run in the copy (tests simulate a rebuild with it).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const force = process.argv.includes('--force');

function fail(message) {
  process.stderr.write(`electron:sqlite: ${message}\n`);
  process.exit(3);
}

const electronPkg = join(root, 'node_modules/electron/package.json');
if (!existsSync(electronPkg)) fail('electron is not installed (npm install)');
const version = JSON.parse(readFileSync(electronPkg, 'utf8')).version;
const abi = require('node-abi').getAbi(version, 'electron');
const outDir = join(process.env.STEPBOX_NATIVE_DIR || join(root, 'native'), `electron-${abi}`);
const out = join(outDir, 'better_sqlite3.node');
if (existsSync(out) && !force) {
  process.stderr.write(`electron:sqlite: ${out} exists (Electron ${version}, ABI ${abi})\n`);
  process.exit(0);
}

const source = join(root, 'node_modules/better-sqlite3');
const work = mkdtempSync(join(tmpdir(), 'stepbox-electron-sqlite-'));
const copy = join(work, 'better-sqlite3');
try {
  // The copy leaves npm's build/ behind: whatever happens here cannot touch the CLI's binding.
  cpSync(source, copy, { recursive: true, filter: (p) => !p.startsWith(join(source, 'build')) });
  const bin = (name) => join(root, 'node_modules/.bin', process.platform === 'win32' ? `${name}.cmd` : name);
  const attempts = process.env.STEPBOX_SQLITE_BUILD_CMD
    ? [['sh', ['-c', process.env.STEPBOX_SQLITE_BUILD_CMD]]]
    : [
        [bin('prebuild-install'), ['--runtime', 'electron', '--target', version, '--arch', process.arch]],
        [
          bin('node-gyp'),
          [
            'rebuild',
            '--release',
            '--runtime=electron',
            `--target=${version}`,
            `--arch=${process.arch}`,
            '--dist-url=https://electronjs.org/headers',
          ],
        ],
      ];
  const built = join(copy, 'build/Release/better_sqlite3.node');
  for (const [cmd, args] of attempts) {
    process.stderr.write(`electron:sqlite: ${[cmd, ...args].join(' ')}\n`);
    const r = spawnSync(cmd, args, { cwd: copy, stdio: 'inherit', timeout: 600_000 });
    if (r.status === 0 && existsSync(built)) break;
  }
  if (!existsSync(built))
    fail(
      `could not fetch or build better-sqlite3 for Electron ${version} (ABI ${abi}); ` +
        'this needs the network once (a prebuilt binary or Electron headers). Try again online: npm run electron:sqlite',
    );
  mkdirSync(outDir, { recursive: true });
  cpSync(built, out);
  process.stderr.write(`electron:sqlite: wrote ${out}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
