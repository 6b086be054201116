import { parseSize } from './size.js';
import { SandboxSpec, type Limits } from './task.js';

/**
 * A recorded task (a trace header, a bundle) never widens isolation on its own
 * (design: Security defaults). The task file a user runs is theirs; the task inside a
 * trace or bundle may come from anyone, so whatever it asks beyond the defaults needs
 * the user's explicit consent, per kind. Mounts, privileges and capabilities cannot be
 * asked for at all: the task schema has no such keys and refuses unknown ones.
 */

import { CONSENT_FLAGS, type WideningKind } from './widening-kinds.js';
import { settingText } from './setting-words.js';

export { ALL_WIDENINGS, CONSENT_FLAGS, type WideningKind } from './widening-kinds.js';

/** The flag consenting to every kind at once. */
export const TRUST_RECORDED_TASK_FLAG = '--trust-recorded-task';

/** One thing a recorded task asks for beyond the defaults. */
export interface Widening {
  readonly kind: WideningKind;
  /** The task field, e.g. `sandbox.network`, `sandbox.limits.memory`. */
  readonly field: string;
  readonly asked: string | number;
  readonly default: string | number;
}

const DEFAULTS = SandboxSpec.parse({});

/**
 * Container runtimes that isolate at least as well as the engine's default (runc): gVisor's
 * `runsc` runs the sandbox on a kernel of its own. A recorded task may ask for one of these
 * without consent (it narrows isolation); any other name (`runc` spelled out where the
 * user's engine defaults to gVisor, `crun`, a runtime of the user's own) changes isolation
 * in ways stepbox cannot judge, so it needs consent. A runtime the engine lacks is refused
 * either way (never another started in its place).
 */
export const NARROWING_RUNTIMES: readonly string[] = ['runsc'];

/** What the runtime default reads as in a message: unset means the engine's own. */
const DEFAULT_RUNTIME = "the engine's default";

const LIMIT_SIZES = ['memory', 'disk', 'output'] as const;

/** What a task's sandbox section asks for beyond the defaults (empty: nothing). */
export function widerThanDefaults(sandbox: SandboxSpec): Widening[] {
  const out: Widening[] = [];
  if (sandbox.network !== DEFAULTS.network)
    out.push({
      kind: 'network',
      field: 'sandbox.network',
      asked: sandbox.network,
      default: DEFAULTS.network,
    });
  if (sandbox.runtime !== undefined && !NARROWING_RUNTIMES.includes(sandbox.runtime))
    out.push({
      kind: 'runtime',
      field: 'sandbox.runtime',
      asked: sandbox.runtime,
      default: DEFAULT_RUNTIME,
    });
  if (sandbox.image !== DEFAULTS.image)
    out.push({ kind: 'image', field: 'sandbox.image', asked: sandbox.image, default: DEFAULTS.image });
  // A Dockerfile runs its own commands on the engine while it builds: an image of its own.
  if (sandbox.build !== undefined)
    out.push({
      kind: 'image',
      field: 'sandbox.build',
      asked: typeof sandbox.build === 'string' ? sandbox.build : JSON.stringify(sandbox.build),
      default: 'none',
    });
  const limits: Limits = sandbox.limits;
  const d = DEFAULTS.limits;
  if (limits.cpus > d.cpus)
    out.push({ kind: 'limits', field: 'sandbox.limits.cpus', asked: limits.cpus, default: d.cpus });
  if (limits.pids > d.pids)
    out.push({ kind: 'limits', field: 'sandbox.limits.pids', asked: limits.pids, default: d.pids });
  for (const key of LIMIT_SIZES) {
    const asked = parseSize(limits[key]);
    const base = parseSize(d[key]);
    if (asked === null || base === null || asked > base)
      out.push({ kind: 'limits', field: `sandbox.limits.${key}`, asked: limits[key], default: d[key] });
  }
  return out;
}

/** The widenings not covered by `consent`. */
export function withoutConsent(widenings: readonly Widening[], consent: readonly WideningKind[]): Widening[] {
  return widenings.filter((w) => !consent.includes(w.kind));
}

/**
 * One per widening, joined: for the CLI as the task file writes it, `network "host" (default
 * "none")`; for the window in words, `memory limit 1.5 GiB (stepbox's default: 1 GiB)`.
 */
export function describeWidenings(
  widenings: readonly Widening[],
  audience: 'cli' | 'window' = 'cli',
): string {
  return widenings
    .map((w) =>
      audience === 'window'
        ? settingText(w.field, w.asked, w.default)
        : `${w.field} ${JSON.stringify(w.asked)} (default ${JSON.stringify(w.default)})`,
    )
    .join('; ');
}

/** The flags consenting to these widenings, e.g. `--allow-network --allow-image`. */
export function consentFlags(widenings: readonly Widening[]): string {
  return [...new Set(widenings.map((w) => CONSENT_FLAGS[w.kind]))].join(' ');
}

/**
 * The message of a refused recorded task: what is wider, and the flags (or the window's
 * confirmation) that consent.
 */
export function consentMessage(
  source: string,
  missing: readonly Widening[],
  /** Who reads it: a CLI user gets the flags, a person in the window (desktop or browser) its prompt. */
  audience: 'cli' | 'window' = 'cli',
): string {
  const what = `${source} asks for a looser sandbox than the defaults: ${describeWidenings(missing, audience)}. A trace or bundle cannot widen the sandbox on its own`;
  return audience === 'window'
    ? `${what}; if you trust where it came from, press "Allow and …" in the question the window shows (it names what is wider), or do it again and allow it there`
    : `${what}; if you trust it, consent with ${consentFlags(missing)} (or ${TRUST_RECORDED_TASK_FLAG})`;
}
