import type { EpisodeStatus } from '../trace-events.js';
import type { Flag, Severity } from './flag.js';

/** What an episode's outcome is worth before its flags: a success is worth most. */
const STATUS_BASE: Record<EpisodeStatus, number> = {
  succeeded: 1,
  failed: 0.5,
  timeout: 0.35,
  error: 0.2,
  interrupted: 0.2,
};

/** What each flag multiplies the score by. */
const PENALTY: Record<Severity, number> = { info: 0.97, warning: 0.75, error: 0.4 };

/**
 * An episode's quality in [0, 1]: its status's base value (succeeded 1, failed 0.5,
 * timeout 0.35, error and interrupted 0.2, unclosed 0.1) times a penalty per flag
 * (info 0.97, warning 0.75, error 0.4). Training sets filter on it.
 */
export function qualityScore(status: EpisodeStatus | null, flags: readonly Flag[]): number {
  let q = status ? STATUS_BASE[status] : 0.1;
  for (const f of flags) q *= PENALTY[f.severity];
  return Math.min(1, Math.max(0, Math.round(q * 1e6) / 1e6));
}
