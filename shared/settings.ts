import { z } from 'zod';
import { appError } from './app-error.js';
import { didYouMean } from './did-you-mean.js';
import type { AppError } from './errors.js';
import { parseDuration } from './parse-duration.js';
import { err, ok, type Result } from './result.js';
import { issueLine } from './validation-issues.js';

/** The settings file's name in `$STEPBOX_HOME` (`~/.stepbox/settings.json`). */
export const SETTINGS_FILE = 'settings.json';

/** The shortest sandbox release delay a setting may ask for: below it a step's own pause would count. */
const MIN_RELEASE_MS = 1_000;

const DURATION_HINT =
  'a duration like "15m", "90s" or "1h", a number of seconds, or "off" (0 and "off" turn it off)';

/** A release delay as written (`"15m"`, `900`, `"off"`), read into ms; null means off. */
const ReleaseDelay = z.union([z.number(), z.string()]).transform((value, ctx): number | null => {
  if (value === 'off' || value === 0 || value === '0') return null;
  const ms = typeof value === 'number' ? value * 1000 : parseDuration(value);
  if (ms === null || !Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is not ${DURATION_HINT}` });
    return z.NEVER;
  }
  if (ms < MIN_RELEASE_MS) {
    ctx.addIssue({
      code: 'custom',
      message: `${JSON.stringify(value)} is under 1 s: give "1s" or more, or "off"`,
    });
    return z.NEVER;
  }
  return ms;
});

const UiSettings = z.strictObject({
  /** A live episode nobody stepped, called a tool in or typed into for this long is released (default 15 min). */
  idle_release: ReleaseDelay.default(15 * 60_000),
  /** After the last window closed, live episodes are released once this passed without one (default 30 s). */
  release_after_close: ReleaseDelay.default(30_000),
});

/** The settings file: `{"ui": {"idle_release": "15m", "release_after_close": "30s"}}`; every key optional. */
export const SettingsFile = z.strictObject({
  ui: UiSettings.default({ idle_release: 15 * 60_000, release_after_close: 30_000 }),
});

/** The settings in effect, durations in ms (null: off). */
export interface Settings {
  readonly ui: {
    /** A live episode idle this long is released (its trace kept); null: never. */
    readonly idle_release: number | null;
    /** Live episodes are released this long after the last window closed; null: kept until quit. */
    readonly release_after_close: number | null;
  };
}

/** The settings when no file says otherwise. */
export const DEFAULT_SETTINGS: Settings = SettingsFile.parse({});

/** The keys allowed at a path of the settings file, for did-you-mean. */
function knownKeys(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(SettingsFile.shape);
  if (path.length === 1 && path[0] === 'ui') return Object.keys(UiSettings.shape);
  return [];
}

/**
 * Reads a settings document (the parsed JSON of `source`); every error names the key, what is
 * wrong and what to write instead, like a task file's.
 */
export function parseSettings(input: unknown, source = SETTINGS_FILE): Result<Settings, AppError> {
  const parsed = SettingsFile.safeParse(input ?? {});
  if (parsed.success) return ok(parsed.data);
  const lines = parsed.error.issues.map((issue) => {
    if (issue.code !== 'unrecognized_keys') return issueLine(issue);
    const known = knownKeys(issue.path);
    const where = issue.path.map(String).join('.');
    return issue.keys
      .map((k) => {
        const guess = didYouMean(k, known);
        return `${where ? `${where}.` : ''}${k}: unknown setting${guess ? ` — did you mean "${guess}"?` : ''} (allowed: ${known.join(', ')})`;
      })
      .join('; ');
  });
  return err(
    appError('invalid_input', `${source}: ${lines.join('; ')}. Fix that line, or remove it for the default.`),
  );
}
