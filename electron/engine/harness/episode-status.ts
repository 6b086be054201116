import type { EpisodeStatus, VerifierResult } from '../../../shared/trace-events.js';

/**
 * The status of an episode that ended without a fatal error (Contracts: Episode status):
 * `timeout` for the episode timeout; otherwise (a final answer or `max_steps`)
 * `succeeded` when the verifier exited 0, `failed` when it failed or there is none.
 * Fatal errors end with `error` and stops with `interrupted` elsewhere.
 */
export function episodeStatus(endReason: string, verifier: VerifierResult | null): EpisodeStatus {
  if (endReason === 'episode_timeout') return 'timeout';
  return verifier?.success ? 'succeeded' : 'failed';
}
