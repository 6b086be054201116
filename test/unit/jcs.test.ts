import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../shared/jcs.js';

describe('canonicalJson (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units at every depth and drops undefined members', () => {
    expect(
      canonicalJson({ b: 1, a: [{ d: undefined, c: 'x', é: 1, Z: 2 }, undefined], '10': 1, '9': 2 }),
    ).toBe('{"10":1,"9":2,"a":[{"Z":2,"c":"x","é":1},null],"b":1}');
    expect(canonicalJson({ '\u{1F600}': 1, '\uFFFD': 2 })).toBe('{"\u{1F600}":1,"\uFFFD":2}');
  });

  it('encodes numbers and strings as ECMAScript does', () => {
    expect(canonicalJson({ n: [-0, 1e21, 0.1, 1e-7], s: 'line\n"q"\u2028' })).toBe(
      '{"n":[0,1e+21,0.1,1e-7],"s":"line\\n\\"q\\"\u2028"}',
    );
  });

  it('gives a manifest of many entries the same text as member-by-member encoding', () => {
    const entries = Array.from({ length: 500 }, (_, i) =>
      i % 3 === 0
        ? { path: `d${i}`, type: 'dir', mode: 0o755, size: 0 }
        : { type: 'file', path: `d${i}/f`, size: i, mode: 0o644, hash: `${i}`.padStart(64, '0') },
    );
    const text = canonicalJson({ treeHash: 'h', entries });
    expect(text.startsWith('{"entries":[{"mode":493,"path":"d0","size":0,"type":"dir"},{"hash":')).toBe(true);
    expect(JSON.parse(text)).toEqual({ treeHash: 'h', entries });
  });

  it('refuses what JSON cannot say exactly, and encodes other objects by their own keys', () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/non-finite/);
    expect(() => canonicalJson({ f: () => 1 })).toThrow(/function/);
    expect(canonicalJson({ d: new Date(0) })).toBe('{"d":{}}');
    expect(canonicalJson('x')).toBe('"x"');
  });
});
