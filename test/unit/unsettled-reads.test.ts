import { lstatSync, mkdtempSync, rmSync, writeFileSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SETTLE_MS, standsFor, versionKey, versionOf } from '../../electron/engine/trace/file-version.js';
import { readTraceBytes } from '../../electron/engine/trace/trace-reader.js';
import {
  noteUnsettledRead,
  statsKey,
  unsettledReadStands,
} from '../../electron/engine/trace/unsettled-reads.js';

// A trace read before its version settled (written < SETTLE_MS ago) is read, parsed and checked
// again once settled, unless its bytes are found to be the ones read then.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'stepbox-unsettled-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A file written just now (unsettled), its stat. */
function fresh(name: string, text: string): { path: string; st: Stats } {
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, st: lstatSync(path) };
}

describe('a version read before it settled', () => {
  it('stands for the unsettled version once settled when its bytes are the ones read', () => {
    const { path, st } = fresh('a.jsonl', '{"type":"header"}\n');
    const before = versionOf(path, st, st.ctimeMs + 10);
    expect(before.settled).toBe(false);
    readTraceBytes(path);
    const after = versionOf(path, lstatSync(path), st.ctimeMs + SETTLE_MS + 10);
    expect(after.settled).toBe(true);
    expect(standsFor(after)).toBe(versionKey(before));
    // Its own name is the one every process gives it.
    expect(versionKey(after)).not.toBe(versionKey(before));
  });

  it('stands for nothing once settled when nothing was read before it settled', () => {
    const { path, st } = fresh('b.jsonl', '{"type":"header"}\n');
    const after = versionOf(path, lstatSync(path), st.ctimeMs + SETTLE_MS + 10);
    expect(standsFor(after)).toBeNull();
    expect(standsFor(versionOf(path, st, st.ctimeMs + 10))).toBeNull();
  });

  it('stands only when the file still holds the bytes read, and every read at those stats agreed', () => {
    const { path, st } = fresh('c.jsonl', 'one\n');
    const key = statsKey(path, st);
    // Bytes changed since (a rewrite in the same clock tick keeps size and times): it does not stand.
    noteUnsettledRead(path, st, Buffer.from('one\n'), st.ctimeMs);
    expect(unsettledReadStands(key, () => Buffer.from('two\n'))).toBe(false);

    const d = fresh('d.jsonl', 'one\n');
    const dKey = statsKey(d.path, d.st);
    // Two reads at the same stats that differ: neither stands, whatever the file holds now.
    noteUnsettledRead(d.path, d.st, Buffer.from('one\n'), d.st.ctimeMs);
    noteUnsettledRead(d.path, d.st, Buffer.from('two\n'), d.st.ctimeMs);
    expect(unsettledReadStands(dKey, () => Buffer.from('one\n'))).toBe(false);

    // Unreadable now (gone, a link put in its place): it does not stand.
    const e = fresh('e.jsonl', 'one\n');
    noteUnsettledRead(e.path, e.st, Buffer.from('one\n'), e.st.ctimeMs);
    expect(unsettledReadStands(statsKey(e.path, e.st), () => null)).toBe(false);

    // A read after it settled is not noted.
    const f = fresh('f.jsonl', 'one\n');
    noteUnsettledRead(f.path, f.st, Buffer.from('one\n'), f.st.ctimeMs + SETTLE_MS);
    expect(unsettledReadStands(statsKey(f.path, f.st), () => Buffer.from('one\n'))).toBe(false);
  });

  it('is looked at once: the verdict is kept', () => {
    const { path, st } = fresh('g.jsonl', 'one\n');
    noteUnsettledRead(path, st, Buffer.from('one\n'), st.ctimeMs);
    let reads = 0;
    const now = () => {
      reads++;
      return Buffer.from('one\n');
    };
    expect(unsettledReadStands(statsKey(path, st), now)).toBe(true);
    expect(unsettledReadStands(statsKey(path, st), now)).toBe(true);
    expect(reads).toBe(1);
  });
});
