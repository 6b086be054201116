#!/usr/bin/env node
// What `npm start` runs: the doctor first (a missing daemon or image is reported with
// the exact fix), then the UI: the Electron window where Electron and a display are
// available, else `stepbox serve` (the same UI on 127.0.0.1). The UI opens even when
// the doctor failed (recorded episodes need no Docker); without a built UI a failed
// doctor ends `npm start` with exit 3.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = (p) => fileURLToPath(new URL(`../dist/${p}`, import.meta.url));
const stepbox = fileURLToPath(new URL('./stepbox.js', import.meta.url));

if (!existsSync(dist('electron/cli-main.js'))) {
  process.stderr.write('stepbox: the project is not built yet. Fix: npm install (or npm run build)\n');
  process.exit(3);
}

const doctor = spawnSync(process.execPath, [stepbox, 'doctor'], { cwd: root, stdio: 'inherit' });
const sandboxesReady = doctor.status === 0;

/** True when a built command file exists and is not a placeholder. */
async function built(file) {
  if (!existsSync(dist(file))) return false;
  const { command } = await import(pathToFileURL(dist(file)).href);
  return Boolean(command) && !/not built yet/.test(command.summary);
}

/**
 * The Electron binary, downloading it on first run (offline installs skip the download);
 * null when it is absent and cannot be fetched. Only called when there is a display.
 */
function electronBinary() {
  const pkg = fileURLToPath(new URL('../node_modules/electron/', import.meta.url));
  const binary = () => {
    const pathFile = `${pkg}path.txt`;
    if (!existsSync(pathFile)) return null;
    const file = `${pkg}dist/${readFileSync(pathFile, 'utf8').trim()}`;
    return existsSync(file) ? file : null;
  };
  if (!existsSync(`${pkg}install.js`)) return null;
  if (binary()) return binary();
  process.stderr.write('npm start: downloading the Electron binary (first run)…\n');
  const r = spawnSync(process.execPath, [`${pkg}install.js`], { stdio: 'inherit', timeout: 300_000 });
  return r.status === 0 ? binary() : null;
}

const hasDisplay =
  process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const electron = hasDisplay && existsSync(dist('electron/main.js')) ? electronBinary() : null;
const forward = (child) => {
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
};

if (!sandboxesReady && !electron && !(await built('electron/cli/serve.js'))) {
  process.stderr.write(
    '\nnpm start: stepbox cannot start a sandbox yet; apply the fix above and run `npm start` again.\n',
  );
  process.exit(doctor.status ?? 3);
}
if (!sandboxesReady) {
  // Recorded episodes, cases and reports need no Docker; the sandbox panel repeats the fix.
  process.stderr.write(
    '\nnpm start: live sandboxes need the fix above; the UI opens anyway, for recorded episodes.\n',
  );
}

if (electron) {
  // The window needs better-sqlite3 built for Electron, kept apart from the CLI's Node build;
  // made once here where the network allows (the window reports it with the fix if not).
  spawnSync(process.execPath, [fileURLToPath(new URL('../scripts/electron-sqlite.js', import.meta.url))], {
    cwd: root,
    stdio: 'inherit',
  });
  process.stderr.write('npm start: opening the stepbox window\n');
  forward(spawn(electron, [root], { cwd: root, stdio: 'inherit' }));
} else if (await built('electron/cli/serve.js')) {
  const why = !hasDisplay
    ? 'no display'
    : !existsSync(dist('electron/main.js'))
      ? 'the window is not built'
      : 'the Electron binary is not available';
  process.stderr.write(`npm start: serving the UI in the browser instead of a window (${why})\n`);
  forward(spawn(process.execPath, [stepbox, 'serve'], { cwd: root, stdio: 'inherit' }));
} else {
  const lines = [
    '',
    'Try a sandbox:',
    '  npx stepbox sandbox exec -- uname -a',
    '  npx stepbox sandbox shell',
  ];
  if (
    (await built('electron/cli/run.js')) &&
    existsSync(fileURLToPath(new URL('../resources/tasks', import.meta.url)))
  )
    lines.push('Run a sample episode:', '  npx stepbox case list', '  npx stepbox run --help');
  lines.push('Measure it:', '  npm run bench', '');
  process.stdout.write(lines.join('\n'));
}
