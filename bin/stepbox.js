#!/usr/bin/env node
// The installed entry point: runs the compiled CLI, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = fileURLToPath(new URL('../dist/electron/cli-main.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write('stepbox: the CLI is not built yet. Fix: npm install (or npm run build)\n');
  process.exit(3);
}
await import(pathToFileURL(cli).href);
