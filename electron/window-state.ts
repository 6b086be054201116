import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';

/** The window's bounds and whether it was maximized, as last seen. */
export const WindowState = z.object({
  x: z.number().int().optional(),
  y: z.number().int().optional(),
  width: z.number().int().min(400).max(10000),
  height: z.number().int().min(300).max(10000),
  maximized: z.boolean().default(false),
});
/** The window's remembered state. */
export type WindowState = z.infer<typeof WindowState>;

const DEFAULT: WindowState = { width: 1400, height: 900, maximized: false };

/** Where the state lives: `window-state.json` in the app's user data folder. */
export function windowStatePath(userData: string): string {
  return join(userData, 'window-state.json');
}

/** The remembered state, or the default when there is none or it does not parse. */
export function loadWindowState(path: string): WindowState {
  try {
    const parsed = WindowState.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return parsed.success ? parsed.data : DEFAULT;
  } catch {
    // No file yet (first run) or an unreadable one: start from the default size.
    return DEFAULT;
  }
}

/** Saves the state atomically (write, then rename), so a crash never leaves half a file. */
export function saveWindowState(path: string, state: WindowState): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n');
  renameSync(tmp, path);
}
