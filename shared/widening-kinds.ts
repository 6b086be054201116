// The kinds apart from isolation-policy.ts (which reads the task schema): the window asks
// for consent by kind and must not build zod schemas before its first render (issue 19.10).

/** Every kind of widening the user consents to separately; all of them: "trust this recorded task". */
export const ALL_WIDENINGS = ['network', 'image', 'limits', 'runtime'] as const;

/** A kind of widening the user consents to separately. */
export type WideningKind = (typeof ALL_WIDENINGS)[number];

/** The CLI flag consenting to each kind; `--trust-recorded-task` consents to all. */
export const CONSENT_FLAGS: Readonly<Record<WideningKind, string>> = {
  network: '--allow-network',
  image: '--allow-image',
  limits: '--allow-limits',
  runtime: '--allow-runtime',
};
