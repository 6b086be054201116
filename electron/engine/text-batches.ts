/**
 * Below this many UTF-16 units a joined string stays in V8's young heap. A larger one is a
 * large object of its own, ~1 ms to make on each join (a 1,000-file manifest is 136 KB):
 * texts of many small parts are hashed and written in batches under it.
 */
const BATCH_UNITS = 32 * 1024;

/** `parts` joined into consecutive batches of about BATCH_UNITS each (their concatenation is `parts.join('')`). */
export function textBatches(parts: readonly string[]): string[] {
  const batches: string[] = [];
  let from = 0;
  let units = 0;
  for (let i = 0; i < parts.length; i++) {
    units += parts[i].length;
    if (units >= BATCH_UNITS) {
      batches.push(parts.slice(from, i + 1).join(''));
      from = i + 1;
      units = 0;
    }
  }
  if (from < parts.length || batches.length === 0) batches.push(parts.slice(from).join(''));
  return batches;
}
