import { canonicalJson } from '../jcs.js';
import { shellWords } from './shell-words.js';

/** Argument keys whose string value is a shell command line, compared by its words. */
const SHELL_KEYS = new Set(['command', 'cmd', 'script']);

function normalizeValue(value: unknown, key: string | null): unknown {
  if (typeof value === 'string') {
    if (key !== null && SHELL_KEYS.has(key)) {
      const words = shellWords(value);
      // Unbalanced quoting: compare the text with whitespace runs collapsed instead.
      if (words) return { shell_words: words };
    }
    return value.replace(/\s+/g, ' ').trim();
  }
  if (Array.isArray(value)) return value.map((v) => normalizeValue(v, null));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = normalizeValue(v, k);
    return out;
  }
  return value;
}

/**
 * A call's identity for loop detection: the tool name and its arguments as canonical
 * JSON (key order ignored), string runs of whitespace collapsed, and shell command lines
 * replaced by their parsed words, so quoting that yields the same words compares equal
 * while the order of words always matters.
 */
export function normalizeCall(name: string, args: unknown): string {
  // Several rules (loop, gave_up) key the same recorded calls: parse each command line once.
  const memo = args !== null && typeof args === 'object' ? normalized.get(args) : undefined;
  if (memo !== undefined) return `${name}:${memo}`;
  const text = canonicalJson(normalizeValue(args ?? {}, null));
  if (args !== null && typeof args === 'object') normalized.set(args, text);
  return `${name}:${text}`;
}

/** Normalized arguments by the (recorded, never mutated) arguments object. */
const normalized = new WeakMap<object, string>();
