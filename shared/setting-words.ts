// Zod-free (like widening-kinds.ts): the window's consent question reads this table before its
// first render, and isolation-policy.ts words the engine's message from it.
import { countOf } from './count-of.js';
import { parseSize } from './size.js';

/** A size for people, in the binary unit it is whole in: `1536m` → `1.5 GiB`, `1g` → `1 GiB`, `1m` → `1 MiB`. */
export function sizeWords(input: string | number): string {
  const n = parseSize(input);
  if (n === null) return String(input);
  for (const [unit, size] of [
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const)
    if (n >= size) return `${Number((n / size).toFixed(2))} ${unit}`;
  return countOf(n, 'byte');
}

/** One task setting a consent question can name: what a person reads, and its value in words. */
interface SettingWords {
  readonly words: string;
  readonly value: (v: string | number) => string;
}

const asText = (v: string | number) => String(v);

/**
 * Every setting a recorded task may widen (isolation-policy.ts `widerThanDefaults`), keyed by
 * its field in the task file, in words: the consent question said `sandbox.limits.memory
 * "1536m" (default "1g")`. The key stays in the question's tooltip for a developer.
 */
export const SETTING_WORDS: Readonly<Record<string, SettingWords>> = {
  'sandbox.network': {
    words: 'network',
    value: (v) => (v === 'none' ? 'none (offline)' : String(v)),
  },
  'sandbox.runtime': { words: 'container runtime', value: asText },
  'sandbox.image': { words: 'image', value: asText },
  'sandbox.build': {
    words: 'Dockerfile to build',
    value: (v) => (v === 'none' ? 'none (a ready image)' : String(v)),
  },
  'sandbox.limits.cpus': { words: 'CPU limit', value: (v) => countOf(Number(v), 'CPU') },
  'sandbox.limits.pids': { words: 'process limit', value: (v) => countOf(Number(v), 'process', 'processes') },
  'sandbox.limits.memory': { words: 'memory limit', value: sizeWords },
  'sandbox.limits.disk': { words: 'workspace disk limit', value: sizeWords },
  'sandbox.limits.output': { words: 'output limit per stream', value: sizeWords },
};

/**
 * A setting a recorded task asks for, as a person reads it: `memory limit 1.5 GiB (stepbox's
 * default: 1 GiB)`. A field the table lacks is said as the task file says it.
 */
export function settingText(field: string, asked: string | number, dflt: string | number): string {
  const s = SETTING_WORDS[field];
  return s
    ? `${s.words} ${s.value(asked)} (stepbox's default: ${s.value(dflt)})`
    : `${field} ${JSON.stringify(asked)} (default ${JSON.stringify(dflt)})`;
}

/** The task-file keys of the settings `text` names in words (a consent question's tooltip). */
export function settingKeysIn(text: string): string[] {
  return Object.entries(SETTING_WORDS)
    .filter(([, s]) => new RegExp(`(^|[:;] )${s.words} `).test(text))
    .map(([field]) => field);
}
