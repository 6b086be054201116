/** What to redact: values of named fields, and text matching patterns. */
export interface Redaction {
  readonly fields: ReadonlySet<string>;
  readonly patterns: readonly RegExp[];
}

/** The text a redacted value becomes. */
export const REDACTED = '[REDACTED]';

/**
 * Parses `--redact` values: `/regex/flags` is a pattern (always global), anything else a
 * field name. Throws a message naming the bad pattern.
 */
export function parseRedactions(specs: readonly string[]): Redaction {
  const fields = new Set<string>();
  const patterns: RegExp[] = [];
  for (const spec of specs) {
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
  return r.patterns.reduce((t, p) => t.replace(p, REDACTED), text);
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
