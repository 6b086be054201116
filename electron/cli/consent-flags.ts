import {
  ALL_WIDENINGS,
  CONSENT_FLAGS,
  TRUST_RECORDED_TASK_FLAG,
  type WideningKind,
} from '../../shared/isolation-policy.js';

/**
 * The flags by which a user consents to a recorded task (trace header, bundle) widening
 * the sandbox beyond the defaults: open, replay, fork, resume and candidates take them.
 */
export const CONSENT_FLAG_OPTIONS = {
  'allow-network': { type: 'boolean', default: false },
  'allow-image': { type: 'boolean', default: false },
  'allow-limits': { type: 'boolean', default: false },
  'allow-runtime': { type: 'boolean', default: false },
  'trust-recorded-task': { type: 'boolean', default: false },
} as const;

/** The help lines of {@link CONSENT_FLAG_OPTIONS}. */
export const CONSENT_HELP = `  ${CONSENT_FLAGS.network}   let the recorded task use the network it names (default: none)
  ${CONSENT_FLAGS.image}     let the recorded task use an image other than the stepbox image, or build one
                  from its Dockerfile (sandbox.build)
  ${CONSENT_FLAGS.limits}    let the recorded task raise cpus, memory, pids, disk or output limits
  ${CONSENT_FLAGS.runtime}   let the recorded task pick a container runtime other than gVisor's
                  runsc (which it may always ask for: it only narrows isolation)
  ${TRUST_RECORDED_TASK_FLAG}
                  all four: a trace or bundle never widens the sandbox without these`;

/** The kinds of widening the flags consent to. */
export function consentFromFlags(values: {
  'allow-network'?: boolean;
  'allow-image'?: boolean;
  'allow-limits'?: boolean;
  'allow-runtime'?: boolean;
  'trust-recorded-task'?: boolean;
}): WideningKind[] {
  if (values['trust-recorded-task']) return [...ALL_WIDENINGS];
  const kinds: WideningKind[] = [];
  if (values['allow-network']) kinds.push('network');
  if (values['allow-image']) kinds.push('image');
  if (values['allow-limits']) kinds.push('limits');
  if (values['allow-runtime']) kinds.push('runtime');
  return kinds;
}
