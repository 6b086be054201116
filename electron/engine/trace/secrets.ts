/**
 * Secrets never enter a trace (Contracts: Trace events). The writer redacts, in every
 * string of every event (keys included), the values of these environment variables.
 */
export const SECRET_ENV_VARS: readonly string[] = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'STEPBOX_TOKEN'];

/**
 * Values shorter than this are not treated as secrets: redacting a 3-character "key"
 * would shred the trace, and no real API key or web-mode token is that short.
 */
export const MIN_SECRET_LENGTH = 8;

/** A secret value and the name it is redacted as. */
export interface Secret {
  readonly name: string;
  readonly value: string;
}

const registered: Secret[] = [];

/**
 * Registers a secret that lives only in memory (the web mode's per-run token when it is
 * not in the environment): every trace writer created afterwards redacts it too.
 */
export function registerSecret(name: string, value: string): void {
  if (value.length >= MIN_SECRET_LENGTH && !registered.some((s) => s.value === value))
    registered.push({ name, value });
}

/** The secrets set in `env` (by default the process environment), plus registered ones, long enough to redact. */
export function secretsFromEnv(env: NodeJS.ProcessEnv = process.env): Secret[] {
  const fromEnv = SECRET_ENV_VARS.flatMap((name) => {
    const value = env[name];
    return value && value.length >= MIN_SECRET_LENGTH ? [{ name, value }] : [];
  });
  return [...fromEnv, ...registered];
}

/** `text` with every occurrence of a secret replaced by `[redacted:NAME]`. */
function redactString(text: string, secrets: readonly Secret[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s.value)) out = out.split(s.value).join(`[redacted:${s.name}]`);
  return out;
}

/**
 * A deep copy of `value` with every secret replaced by `[redacted:NAME]`, and whether any
 * was found. Plain JSON data only (what a trace event is).
 */
export function redactSecrets<T>(value: T, secrets: readonly Secret[]): { value: T; redacted: boolean } {
  if (secrets.length === 0) return { value, redacted: false };
  let redacted = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const r = redactString(v, secrets);
      if (r !== v) redacted = true;
      return r;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, inner] of Object.entries(v)) {
        const key = redactString(k, secrets);
        if (key !== k) redacted = true;
        out[key] = walk(inner);
      }
      return out;
    }
    return v;
  };
  const result = walk(value) as T;
  return { value: result, redacted };
}
