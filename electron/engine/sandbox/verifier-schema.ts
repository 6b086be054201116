import { z } from 'zod';

/**
 * The verifier's request and report, typed once for both channels a verification runs over:
 * the verifier runner's own exec (resources/sandbox/verifier.py `REQUEST` and `REPORT`, framed
 * as sandbox-channels.ts reads them) and the helper's `verify` op (helper-protocol.ts, the
 * plain verifier's part of them). Apart from both so that each can use them.
 */

const count = z.int().nonnegative();
/** A message from the sandbox, bounded: it runs into logs, traces and errors. */
const message = z.string().transform((m) => (m.length > 2000 ? `${m.slice(0, 2000)}…` : m));

/** What the host asks the verifier runner (one frame on its stdin, which only the host can write). */
export const VerifierRequest = z.object({
  command: z.string(),
  timeout_ms: count,
  /** Bytes kept of each of stdout and stderr. */
  cap: count,
  uid: count,
  workdir: z.string(),
  /** Relative path -> base64: put fresh into `files_dir` for the verifier alone. */
  files: z.record(z.string(), z.string()).optional(),
  files_dir: z.string().optional(),
  /** Emptied for the verifier's reward files, read back after it ran. */
  reward_dir: z.string().optional(),
});
/** What the host asks the verifier runner. */
export type VerifierRequest = z.input<typeof VerifierRequest>;

/** The verifier runner's report: one frame, its payload the kept stdout then the kept stderr. */
export const VerifierReport = z.object({
  /** Processes of the agent's user killed before the verifier ran. */
  killed: count,
  /** The verifier's exit code (128 + the signal that killed it); the engine's record is the one that counts. */
  exit_code: z.int().min(0).max(255),
  signal: z.int().min(1).max(127).nullable(),
  timeout: z.boolean(),
  /** stdout's kept bytes at the head of the payload. */
  stdout_len: count,
  stdout_total: count,
  stderr_total: count,
  uid: count,
  /** reward.json and reward.txt as the verifier left them (capped inside). */
  reward_files: z
    .array(z.object({ name: z.enum(['reward.json', 'reward.txt']), text: message }))
    .max(2)
    .optional(),
  /** Why the verifier's files or folders could not be put in place (then it did not run). */
  staging_error: message.optional(),
});
/** The verifier runner's report, checked. */
export type VerifierReport = z.output<typeof VerifierReport>;

/**
 * Why a well-formed report does not fit its payload (the kept stdout then stderr, at most
 * `cap` bytes of each); undefined when it does.
 */
export function reportMisfit(
  r: Pick<VerifierReport, 'stdout_len' | 'stdout_total' | 'stderr_total'>,
  payloadLength: number,
  cap: number,
): string | undefined {
  return r.stdout_len > payloadLength
    ? `stdout_len ${r.stdout_len} is more than the ${payloadLength}-byte payload`
    : r.stdout_len > cap || payloadLength - r.stdout_len > cap
      ? `more output than the ${cap}-byte cap of a stream`
      : r.stdout_total < r.stdout_len || r.stderr_total < payloadLength - r.stdout_len
        ? 'the totals are less than the output kept'
        : undefined;
}
