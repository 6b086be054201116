// electron-builder's beforeBuild hook: make the Electron build of better-sqlite3 in
// native/ (scripts/electron-sqlite.js) instead of letting the packager rebuild
// node_modules/better-sqlite3 in place, which would leave the CLI with a binding it
// cannot load. Returning false skips electron-builder's own install/rebuild step.
/* eslint-disable @typescript-eslint/no-require-imports -- electron-builder loads its hooks with require() */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

module.exports = async function beforeBuild() {
  const r = spawnSync(process.execPath, [join(__dirname, '..', 'scripts', 'electron-sqlite.js')], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('could not make the Electron build of better-sqlite3 (see above)');
  return false;
};
