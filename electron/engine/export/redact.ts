/** What to redact: values of named fields, and text matching patterns. */
export interface Redaction {
  readonly fields: ReadonlySet<string>;
  readonly patterns: readonly RegExp[];
}

/** The text a redacted value becomes. */
export const REDACTED = '[REDACTED]';

/** The `--redact` value that stands for {@link SECRET_PATTERNS}. */
export const SECRETS_SPEC = '@secrets';

/**
 * What `--redact @secrets` hides: credentials by their shape (API keys, tokens) or by the name
 * they are given (`password=…`, `Authorization: Bearer …`), the value only. Narrow on purpose:
 * a pattern of an ordinary word (the share journey's `/ready/`) turned a task's "still prints
 * ready" into "still prints [REDACTED]", which reads as a secret where there was none.
 */
export const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abpr]-[A-Za-z0-9-]{10,}/g,
  // The name before a value is kept (`keep`), matched forward from the name: as a lookbehind
  // holding `\s+` it was tried at every position, scanning back over any run of blanks (40,000
  // blanks took a second, a crafted trace's megabyte minutes).
  /\b(?<keep>Bearer\s+)[A-Za-z0-9._~+/-]{16,}=*/g,
  /\b(?<keep>(?:password|passwd|secret|token|api[_-]?key)["']?\s*[=:]\s*["']?)[^\s"',;]+/gi,
];

/**
 * Parses `--redact` values: `/regex/flags` is a pattern (always global), `@secrets` the
 * credential patterns, anything else a field name. Throws a message naming the bad pattern.
 */
export function parseRedactions(specs: readonly string[]): Redaction {
  const fields = new Set<string>();
  const patterns: RegExp[] = [];
  for (const spec of specs) {
    if (spec === SECRETS_SPEC) {
      patterns.push(...SECRET_PATTERNS);
      continue;
    }
    const m = /^\/(.+)\/([a-z]*)$/s.exec(spec);
    if (!m) {
      fields.add(spec);
      continue;
    }
    try {
      patterns.push(new RegExp(m[1], m[2].includes('g') ? m[2] : m[2] + 'g'));
    } catch (e) {
      throw new Error(`--redact ${spec}: not a valid regular expression (${(e as Error).message})`);
    }
  }
  return { fields, patterns };
}

/** True when there is nothing to redact. */
export function noRedaction(r: Redaction): boolean {
  return r.fields.size === 0 && r.patterns.length === 0;
}

function redactString(text: string, r: Redaction): string {
  // Tool-call arguments travel as JSON text: redact the fields inside them too.
  if (r.fields.size > 0 && /^\s*[{[]/.test(text)) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object') return JSON.stringify(redactValue(parsed, r));
    } catch {
      // Not JSON after all: treat it as plain text below.
    }
  }
  return r.patterns.reduce((t, p) => t.replace(p, keepingPrefix), text);
}

/** `[REDACTED]` for a match, after its `keep` group (the name a secret pattern matched before the value) when it has one. */
function keepingPrefix(...args: unknown[]): string {
  const groups = args[args.length - 1];
  const keep =
    groups !== null && typeof groups === 'object'
      ? (groups as Record<string, string | undefined>).keep
      : undefined;
  return (keep ?? '') + REDACTED;
}

/** A deep copy of `value` with named fields' values and pattern matches replaced by `[REDACTED]`. */
export function redactValue<T>(value: T, r: Redaction): T {
  if (noRedaction(r)) return value;
  if (typeof value === 'string') return redactString(value, r) as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, r)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      out[k] = r.fields.has(k) ? REDACTED : redactValue(v, r);
    return out as T;
  }
  return value;
}

/** Event fields that are structure, not content: never redacted (ids, numbering, times). */
const STRUCTURAL = new Set([
  'seq',
  't',
  'type',
  'step',
  'source',
  'cause',
  'call_id',
  'episode',
  'branch',
  'parent_branch',
  'fork_step',
  'schema',
  'created',
  'status',
]);

/** Trace events with their content redacted and their structure (ids, seq, times, types) kept. */
export function redactEvents<T extends object>(events: readonly T[], r: Redaction): T[] {
  if (noRedaction(r)) return [...events];
  return events.map((e) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(e as Record<string, unknown>))
      out[k] = STRUCTURAL.has(k) ? v : r.fields.has(k) ? REDACTED : redactValue(v, r);
    return out as T;
  });
}
