/** A well-formed verifier runner report (sandbox-channels.ts VerifierReport) for a payload of `okE`: stdout `ok`, stderr `E`. */
export const REPORT = {
  killed: 0,
  exit_code: 0,
  signal: null,
  timeout: false,
  stdout_len: 2,
  stdout_total: 2,
  stderr_total: 1,
  uid: 1000,
} as const;
