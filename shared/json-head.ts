/**
 * The start of a value's JSON, written by walking the value only as far as the text is wanted.
 * A call's arguments are the agent's: a 20 MB `content` or an array of a million items. The one-line
 * summaries (`stepbox show`, the window's rows) show 80 characters of them, and stringifying the
 * whole value first took the time and memory of its size for each line.
 */

/** Writes JSON text the way `JSON.stringify` does, and stops once more than `limit` characters are written. */
export class JsonHeadWriter {
  private readonly parts: string[] = [];
  private length = 0;

  constructor(private readonly limit: number) {}

  /** True once the text is longer than the limit: nothing more is written or read. */
  get full(): boolean {
    return this.length > this.limit;
  }

  /** What was written: the whole JSON when it fits the limit, else a longer-than-the-limit start of it. */
  get text(): string {
    return this.parts.join('');
  }

  /** Writes `text` as it is (a key or a separator of the caller's), only as much of it as the limit wants. */
  raw(text: string): void {
    if (this.full) return;
    const room = this.limit - this.length + 1;
    const part = text.length > room ? text.slice(0, room) : text;
    this.parts.push(part);
    this.length += part.length;
  }

  /**
   * Writes `value` as `JSON.stringify(value)` would (its `toJSON`, `undefined` and functions left out
   * of objects, `null` in arrays), reading only what the limit wants: a string's first characters,
   * an array's first items. False, with nothing written, when `JSON.stringify` would return
   * undefined (undefined, a function, a symbol). Walks with a stack of its own, not recursion: a
   * value nested a million deep is written by its start, where JSON.stringify ran out of stack.
   */
  value(value: unknown, key = ''): boolean {
    const v = jsonValue(value, key);
    if (v === SKIP) return false;
    const stack: Frame[] = [];
    this.open(v, stack);
    while (stack.length > 0 && !this.full) {
      const top = stack[stack.length - 1];
      if (top.kind === 'array') {
        if (top.next >= top.array.length) {
          this.raw(']');
          stack.pop();
          continue;
        }
        const i = top.next++;
        if (i > 0) this.raw(',');
        const item = jsonValue(top.array[i], String(i));
        if (item === SKIP) this.raw('null');
        else this.open(item, stack);
      } else {
        const next = top.keys.next();
        if (next.done) {
          this.raw('}');
          stack.pop();
          continue;
        }
        const item = jsonValue(top.object[next.value], next.value);
        if (item === SKIP) continue;
        this.raw(`${top.first ? '' : ','}${JSON.stringify(next.value)}:`);
        top.first = false;
        this.open(item, stack);
      }
    }
    return true;
  }

  /** Writes a primitive, or the opening of an array or object and pushes it to be walked. */
  private open(v: unknown, stack: Frame[]): void {
    if (this.full) return;
    if (typeof v === 'string') this.string(v);
    else if (v === null || typeof v !== 'object') this.raw(JSON.stringify(v));
    else if (Array.isArray(v)) {
      this.raw('[');
      stack.push({ kind: 'array', array: v, next: 0 });
    } else {
      this.raw('{');
      const object = v as Record<string, unknown>;
      stack.push({ kind: 'object', object, keys: ownKeys(object), first: true });
    }
  }

  private string(s: string): void {
    const room = this.limit - this.length + 1;
    if (s.length <= room) return this.raw(JSON.stringify(s));
    // Its start quoted as the whole would be: a pair of surrogates is not split (a lone half is escaped).
    let take = room;
    const last = s.charCodeAt(take - 1);
    if (last >= 0xd800 && last <= 0xdbff) take++;
    const quoted = JSON.stringify(s.slice(0, take));
    this.parts.push(quoted.slice(0, -1));
    this.length += quoted.length - 1;
  }
}

/** An array or object being written: where the walk is in it. */
type Frame =
  | { readonly kind: 'array'; readonly array: readonly unknown[]; next: number }
  | {
      readonly kind: 'object';
      readonly object: Record<string, unknown>;
      readonly keys: Iterator<string>;
      first: boolean;
    };

/** What JSON.stringify leaves out of an object (an array says `null` for it). */
const SKIP = Symbol('skip');

/** The value JSON.stringify writes for `value` under `key`: its toJSON's, unboxed, or {@link SKIP}. */
function jsonValue(value: unknown, key: string): unknown {
  let v = value;
  if (v !== null && (typeof v === 'object' || typeof v === 'bigint')) {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') v = (toJSON as (k: string) => unknown).call(v, key);
  }
  if (v instanceof Number || v instanceof String || v instanceof Boolean) v = v.valueOf();
  return v === undefined || typeof v === 'function' || typeof v === 'symbol' ? SKIP : v;
}

/** An object's own enumerable keys in JSON.stringify's order, one at a time: a million are not listed to write the first few. */
function* ownKeys(o: Record<string, unknown>): Generator<string> {
  for (const k in o) if (Object.prototype.hasOwnProperty.call(o, k)) yield k;
}

/**
 * `JSON.stringify(value)` when it is at most `limit` characters long, else a start of it longer than
 * `limit` (so a reader that cuts at `limit` sees the same text and knows it was cut); undefined where
 * `JSON.stringify` gives undefined. Reads the value only as far as that start.
 */
export function jsonHead(value: unknown, limit: number): string | undefined {
  const w = new JsonHeadWriter(limit);
  return w.value(value) ? w.text : undefined;
}
