/**
 * RFC 8785 (JCS) canonical JSON: sorted keys (by UTF-16 code units), no whitespace,
 * ECMAScript number formatting. Used for every canonical hash.
 */
export function canonicalJson(value: unknown): string {
  // Plain data (the usual case, a snapshot manifest of thousands of entries among them):
  // JSON.stringify given every key name, sorted, writes each object's keys in that order,
  // which is JCS, several times faster than building the text piece by piece.
  if (typeof value === 'object' && value !== null) {
    const keys = new Set<string>();
    if (plainKeys(value, keys)) return JSON.stringify(value, [...keys].sort());
  }
  return slowCanonicalJson(value);
}

/**
 * Collects every object key below `value`; false when something there is not plain JSON
 * data (a non-finite number, a function, a class instance such as a Date), which the
 * piece-by-piece path encodes or refuses as JCS says.
 */
function plainKeys(value: unknown, keys: Set<string>): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || value === undefined)
    return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object') return false;
  if (Array.isArray(value)) {
    for (const v of value) if (!plainKeys(v, keys)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k of Object.keys(value)) {
    keys.add(k);
    if (!plainKeys((value as Record<string, unknown>)[k], keys)) return false;
  }
  return true;
}

function slowCanonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('JCS cannot encode a non-finite number');
    return JSON.stringify(value);
  }
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value))
    return `[${value.map((v) => slowCanonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${slowCanonicalJson(obj[k])}`).join(',')}}`;
  }
  throw new TypeError(`JCS cannot encode a ${typeof value}`);
}
