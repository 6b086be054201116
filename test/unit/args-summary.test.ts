import { afterEach, describe, expect, it, vi } from 'vitest';
import { argsSummary, callDetail, decidedDetail, oneLineJson } from '../../shared/step-summary.js';
import { oneLine } from '../../shared/one-line.js';
import { jsonHead } from '../../shared/json-head.js';

/** argsSummary as it was: every argument stringified whole, then cut to one line. */
function wholeSummary(args: Record<string, unknown>, max = 80): string {
  const parts = Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v) ?? 'undefined'}`);
  return oneLine(`{${parts.join(', ')}}`, max);
}

/** An array of `n` items that counts which of them are read (JSON.stringify reads them all). */
function countedArray(n: number): { array: number[]; read: () => number } {
  let reads = 0;
  const array = new Proxy(new Array<number>(n).fill(7), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver) as unknown;
    },
  });
  return { array, read: () => reads };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("argsSummary: a call's arguments on one line, only their start written", () => {
  it('says ordinary arguments exactly as before (stringified whole, then cut)', () => {
    const long = 'word '.repeat(2_000);
    const cases: Record<string, unknown>[] = [
      {},
      { command: 'ls -la' },
      { path: 'notes/todo.txt', content: 'line 1\nline 2\n', encoding: 'utf8' },
      { query: 'Beijing weather', n: 3, exact: true, nothing: null, missing: undefined, f: () => 1 },
      { nested: { a: [1, 'two', { three: [null, undefined, NaN, -0, 1e21] }] }, when: new Date(0) },
      { text: 'quotes " and \\ and \u0001 and \u2028 and é 中文 😀' },
      { long },
      { longer: 'x'.repeat(5_118), after: 'y' },
      // A surrogate pair where the written start ends, and a lone half in the text.
      { emoji: '😀'.repeat(3_000) },
      { a: 'a'.repeat(5_109), b: '😀x' },
      { lone: '\ud800 then \udfff' },
      { 'key with spaces': [[[]]], ключ: {} },
      { list: Array.from({ length: 2_000 }, (_, i) => ({ i, s: `item ${i}` })) },
    ];
    for (const args of cases)
      for (const max of [80, 100, 1_000])
        expect(argsSummary(args, max), `${JSON.stringify(Object.keys(args))} at ${max}`).toBe(
          wholeSummary(args, max),
        );
  });

  it('reads the start of a 20 MB argument, never the whole of it through JSON.stringify', () => {
    const big = `${'0123456789abcdef'.repeat(1_310_720)}END`;
    const stringify = vi.spyOn(JSON, 'stringify');
    const summary = argsSummary({ path: 'big.txt', content: big });
    const longest = Math.max(0, ...stringify.mock.calls.map(([v]) => (typeof v === 'string' ? v.length : 0)));
    // The summary only shows 80 characters: it reads a few thousand, not 20 MB.
    expect(longest).toBeLessThan(10_000);
    expect(stringify.mock.calls.length).toBeLessThan(20);
    expect(summary).toBe(`{path: "big.txt", content: "${big}`.slice(0, 79) + '…');
  });

  it('reads the first items of an array of a million, not all of them', () => {
    const { array, read } = countedArray(1_000_000);
    expect(argsSummary({ items: array })).toBe(`{items: [${'7,'.repeat(35)}…`);
    expect(read()).toBeLessThan(6_000);
    const detail = countedArray(1_000_000);
    expect(callDetail('lookup', { items: detail.array })).toMatch(/^\{"items":\[7,7,7,.*…$/);
    expect(detail.read()).toBeLessThan(12_000);
    const decided = countedArray(1_000_000);
    expect(decidedDetail({ name: 'lookup', arguments: decided.array })).toMatch(/^\[7,7,.*…$/);
    expect(decided.read()).toBeLessThan(12_000);
  });

  it('calls the toJSON of the items it writes only, and a million keys are not listed', () => {
    let calls = 0;
    const item = { toJSON: () => (calls++, 'x') };
    const items = new Array<typeof item>(1_000_000).fill(item);
    expect(argsSummary({ items })).toMatch(/^\{items: \["x","x",.*…$/);
    expect(calls).toBeLessThan(2_000);
    const keys = Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i]));
    const entries = vi.spyOn(Object, 'entries');
    expect(argsSummary(keys)).toBe(wholeSummary(keys));
    // The reference above lists them (once); the summary itself does not.
    expect(entries).toHaveBeenCalledTimes(1);
  });

  it('writes a value nested a million deep by its start (JSON.stringify ran out of stack)', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(argsSummary({ deep })).toBe(`{deep: ${'['.repeat(72)}…`);
  });
});

describe('jsonHead', () => {
  it('is JSON.stringify when it fits, else a start of it longer than the limit', () => {
    for (const v of [
      null,
      1,
      'a"b',
      [1, undefined, () => 1],
      { a: undefined, b: { toJSON: () => undefined }, c: 2 },
    ])
      expect(jsonHead(v, 100)).toBe(JSON.stringify(v));
    expect(jsonHead(undefined, 100)).toBeUndefined();
    expect(jsonHead(() => 1, 100)).toBeUndefined();
    const v = { list: Array.from({ length: 100 }, (_, i) => `entry ${i}`) };
    const head = jsonHead(v, 50) ?? '';
    expect(head.length).toBeGreaterThan(50);
    expect(JSON.stringify(v).startsWith(head)).toBe(true);
  });
});

describe("oneLineJson: a memory value or a call's arguments on one line (show, the step prompt, list)", () => {
  it('says ordinary values exactly as oneLine(JSON.stringify(…)) did, and what JSON cannot write as asked', () => {
    const values: unknown[] = [null, 0, 'text', { a: [1, 'two'] }, 'x'.repeat(5_000), [undefined, () => 1]];
    for (const v of values)
      for (const max of [30, 60, 300])
        expect(oneLineJson(v, max)).toBe(oneLine(JSON.stringify(v) ?? '', max));
    expect(oneLineJson(undefined, 30, 'undefined')).toBe('undefined');
  });
  it('reads only the start of a value of a million items (JSON.stringify read them all)', () => {
    const { array, read } = countedArray(1_000_000);
    const line = oneLineJson({ memory: array }, 30);
    expect(line).toMatch(/^\{"memory":\[7,7,7/);
    expect(line.endsWith('…')).toBe(true);
    expect(read()).toBeLessThan(2_000);
  });
});
