import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Installs npm packages (exact versions) into a cache directory kept between runs
 * (`$STEPBOX_TEST_CACHE`, else ~/.cache/stepbox-test), once per set: tests that need a
 * tool the project does not depend on (the MCP conformance suite and the Node 22 it needs)
 * get it with the ordinary npm client, and CI keeps the directory warm. Returns the
 * directory holding `node_modules`.
 */
export async function npmTool(name: string, packages: readonly string[]): Promise<string> {
  const root = process.env.STEPBOX_TEST_CACHE ?? join(homedir(), '.cache', 'stepbox-test');
  const dir = join(root, name);
  const done = join(dir, '.installed');
  if (existsSync(done)) return dir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ private: true }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', ...packages], {
    cwd: dir,
    timeout: 600_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  writeFileSync(done, packages.join('\n'));
  return dir;
}
