#!/usr/bin/env node
// What `npm test` runs. First: is there a Docker engine and the sandbox image? If not,
// say the exact command that fixes it and exit 3 (before minutes of lint and build).
// Then, in order: the sandbox's containment checks (`stepbox sandbox selftest`), eslint,
// prettier --check, tsc -b + vite build (npm run build), and vitest (unit, integration,
// e2e) with a closing `N passed, N failed` line.
// Every stage runs even when an earlier one failed, so one log shows every problem;
// the exit code is the first failure's (1), or 3 for missing infrastructure.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = fileURLToPath(new URL('../dist/electron/cli-main.js', import.meta.url));
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs a command with inherited output; returns its exit code. */
function run(cmd, args, label) {
  process.stderr.write(`\n[test] ${label}: ${[cmd, ...args].join(' ')}\n`);
  const started = Date.now();
  // Windows runs npx.cmd/npm.cmd only through a shell.
  const r = spawnSync(cmd, args, {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
    shell: process.platform === 'win32',
  });
  const code = r.status ?? 1;
  process.stderr.write(
    `[test] ${label}: ${code === 0 ? 'ok' : `FAILED (exit ${code})`} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
  return code;
}

// The doctor is part of the build; build it first when this checkout has none yet. tsc
// emits despite type errors, so the doctor can still run when only other files are broken.
if (!existsSync(built)) run(npm, ['run', 'build'], 'build (needed for doctor)');
if (!existsSync(built)) {
  process.stderr.write('[test] the CLI did not build; fix the errors above (npm run build)\n');
  process.exit(1);
}
if (run(process.execPath, ['bin/stepbox.js', 'doctor'], 'doctor') !== 0) {
  process.stderr.write(
    '[test] Docker or the sandbox image is missing: apply the fix the doctor printed above, then run `npm test` again.\n',
  );
  process.exit(3);
}

const stages = [
  ['sandbox selftest', process.execPath, ['bin/stepbox.js', 'sandbox', 'selftest']],
  ['eslint', npx, ['eslint', '.']],
  ['prettier', npx, ['prettier', '--check', '.']],
  ['build (tsc -b, vite build)', npm, ['run', 'build']],
  ['vitest', npx, ['vitest', 'run', '--reporter=default', '--reporter=./test/support/summary-reporter.ts']],
];
const failed = [];
for (const [label, cmd, args] of stages) if (run(cmd, args, label) !== 0) failed.push(label);
process.stderr.write(
  failed.length ? `\n[test] FAILED stages: ${failed.join(', ')}\n` : '\n[test] every stage passed\n',
);
process.exit(failed.length ? 1 : 0);
