import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// better-sqlite3 is native code built for one ABI. `npm install` builds it for Node (the
// CLI, the web mode); Electron needs its own build. The two are kept side by side: the
// Node one where npm put it, the Electron one under `native/electron-<ABI>/`, made by
// `npm run electron:sqlite` (first window start, and the packager's beforeBuild hook), so
// that neither runtime's rebuild breaks the other.

/** The script that builds the Electron binding (relative to the project root). */
export const ELECTRON_SQLITE_SCRIPT = 'scripts/electron-sqlite.js';

function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/**
 * Where the Electron build of better-sqlite3 lives for this process's ABI, or null under
 * plain Node (which loads npm's build). `STEPBOX_SQLITE_BINDING` overrides it.
 */
export function electronBindingPath(
  versions: NodeJS.ProcessVersions = process.versions,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  if (env.STEPBOX_SQLITE_BINDING) return env.STEPBOX_SQLITE_BINDING;
  if (!versions.electron) return null;
  return join(projectRoot(), 'native', `electron-${versions.modules}`, 'better_sqlite3.node');
}

/** Opens a SQLite database with the binding this runtime needs. */
export function openSqlite(path: string, options: Database.Options = {}): Database.Database {
  const binding = electronBindingPath();
  return new Database(path, binding ? { ...options, nativeBinding: binding } : options);
}

/** Why the SQLite binding cannot load, with the command that fixes it. */
export interface SqliteBindingProblem {
  readonly code: 'sqlite_binding_missing' | 'sqlite_binding_mismatch';
  readonly message: string;
}

/**
 * Loads the binding once (an in-memory database) and says in words what is wrong when it
 * cannot: missing (never built for this runtime) or built for another ABI.
 */
export function checkSqliteBinding(): SqliteBindingProblem | null {
  const binding = electronBindingPath();
  const runtime = process.versions.electron
    ? `Electron ${process.versions.electron} (ABI ${process.versions.modules})`
    : `Node ${process.versions.node} (ABI ${process.versions.modules})`;
  const fix = process.versions.electron
    ? `run \`npm run electron:sqlite\` in ${projectRoot()} (it needs the network once to fetch Electron's headers or a prebuilt binary)`
    : `run \`npm rebuild better-sqlite3\` in ${projectRoot()}`;
  if (binding && !existsSync(binding))
    return {
      code: 'sqlite_binding_missing',
      message: `The database library has no build for ${runtime} (expected ${binding}). To fix it, ${fix}.`,
    };
  try {
    openSqlite(':memory:').close();
    return null;
  } catch (e) {
    const text = e instanceof Error ? e.message : String(e);
    const mismatch =
      /NODE_MODULE_VERSION|was compiled against a different|invalid ELF|wrong ELF|not a valid Win32/i.test(
        text,
      );
    return {
      code: mismatch ? 'sqlite_binding_mismatch' : 'sqlite_binding_missing',
      message: `The database library cannot load in ${runtime}${mismatch ? ': it was built for another runtime' : ''} (${text.split('\n')[0]}). To fix it, ${fix}.`,
    };
  }
}
