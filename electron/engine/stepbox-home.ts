import { homedir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';

/** `$STEPBOX_HOME`, or `~/.stepbox`: the store, the case library, recipes and the run folder. */
export function stepboxHome(env: NodeJS.ProcessEnv = process.env): string {
  return resolvePath(env.STEPBOX_HOME || join(homedir(), '.stepbox'));
}

/** `<home>/run`: what lives only while a process runs (the helper sockets, helper-socket.ts). */
export function runDir(home: string): string {
  return join(home, 'run');
}
