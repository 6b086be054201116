/** Why a JSON pointer did not resolve. */
export const UNRESOLVED: unique symbol = Symbol('unresolved');

/** Resolves an RFC 6901 JSON pointer (`""` is the whole document); {@link UNRESOLVED} when a step is missing. */
export function resolvePointer(doc: unknown, pointer: string): unknown {
  if (pointer === '') return doc;
  if (!pointer.startsWith('/')) return UNRESOLVED;
  let cur: unknown = doc;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < cur.length) {
      cur = cur[Number(token)];
    } else if (typeof cur === 'object' && cur !== null && !Array.isArray(cur) && Object.hasOwn(cur, token)) {
      cur = (cur as Record<string, unknown>)[token];
    } else {
      return UNRESOLVED;
    }
  }
  return cur;
}
