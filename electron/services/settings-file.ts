import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appError } from '../../shared/app-error.js';
import type { AppError } from '../../shared/errors.js';
import { err, ok, type Result } from '../../shared/result.js';
import { DEFAULT_SETTINGS, SETTINGS_FILE, parseSettings, type Settings } from '../../shared/settings.js';

/** The settings in effect and the file they come from (absent: the defaults). */
export interface LoadedSettings {
  readonly settings: Settings;
  /** `$STEPBOX_HOME/settings.json`, whether or not it exists; null when no home was given. */
  readonly file: string | null;
}

/** The defaults, read from no file (tests, a store-less engine). */
export const DEFAULT_LOADED_SETTINGS: LoadedSettings = { settings: DEFAULT_SETTINGS, file: null };

/**
 * Reads `<home>/settings.json` (no file: the defaults). A file that is not JSON or holds an
 * unknown key or a bad value is an error naming the file, the key and the fix — never a
 * silent default, which would leave a person wondering why their setting did nothing.
 */
export function loadSettings(home: string): Result<LoadedSettings, AppError> {
  const file = join(home, SETTINGS_FILE);
  if (!existsSync(file)) return ok({ settings: DEFAULT_SETTINGS, file });
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    return err(
      appError(
        'invalid_input',
        `${file} is not valid JSON (${e instanceof Error ? e.message : String(e)}). Fix it, or remove the file for the defaults.`,
      ),
    );
  }
  const parsed = parseSettings(json, file);
  return parsed.ok ? ok({ settings: parsed.value, file }) : parsed;
}
