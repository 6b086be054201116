import { describe, expect, it } from 'vitest';
import { BLOB_CHUNK_BYTES, stageBlobs } from '../../electron/engine/sandbox/blob-transfer.js';
import type { HelperCall } from '../../electron/engine/sandbox/helper-protocol.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';
import { sha256Hex } from '../../electron/engine/sha256.js';

/** A store with `n` blobs of a little over half a chunk each: every stage request carries about two. */
async function storeOf(n: number) {
  const store = new MemorySnapshotStore();
  const blobs: { hash: string; size: number }[] = [];
  for (let i = 0; i < n; i++) {
    const data = Buffer.alloc(BLOB_CHUNK_BYTES / 2 + 1, i);
    const hash = sha256Hex(data);
    await store.putBlob(hash, data);
    blobs.push({ hash, size: data.length });
  }
  return { store, blobs };
}

/** A helper stand-in: answers each stage when the test says so, recording how many were under way. */
function fakeHelper(failAt = -1) {
  const answers: (() => void)[] = [];
  let inFlight = 0;
  let most = 0;
  const staged: number[] = [];
  const call = ((op: string, args: { parts: [string, number, number][] }, payload?: Uint8Array) => {
    expect(op).toBe('stage');
    const index = staged.length;
    staged.push(payload?.length ?? 0);
    expect(payload?.length).toBe(args.parts.reduce((n, p) => n + p[2], 0));
    inFlight++;
    most = Math.max(most, inFlight);
    return new Promise((resolve, reject) => {
      answers.push(() => {
        inFlight--;
        if (index === failAt) reject(new Error('stage refused'));
        else resolve({ header: {}, payload: Buffer.alloc(0) });
      });
    });
  }) as unknown as HelperCall;
  /** Answers the oldest request once one is waiting. */
  const answerNext = async () => {
    while (!answers.length) await new Promise((r) => setImmediate(r));
    answers.shift()!();
  };
  return { call, answerNext, staged, most: () => most, pending: () => answers.length };
}

describe('stageBlobs', () => {
  it('keeps two stage requests under way, never more, and stages every byte once, in order', async () => {
    const { store, blobs } = await storeOf(6);
    const helper = fakeHelper();
    const done = stageBlobs(helper.call, store, blobs);
    let settled = false;
    void done.then(() => (settled = true));
    // Six blobs of half a chunk and a byte: split over four chunks.
    for (let i = 0; i < 4; i++) await helper.answerNext();
    expect(await done).toEqual(blobs.map((b) => [b.hash, b.size]));
    expect(settled).toBe(true);
    expect(helper.most()).toBe(2);
    expect(helper.staged.reduce((a, b) => a + b, 0)).toBe(blobs.reduce((a, b) => a + b.size, 0));
  });

  it('rejects when a chunk is refused, after the one already sent has been answered', async () => {
    const { store, blobs } = await storeOf(6);
    const helper = fakeHelper(0);
    const done = stageBlobs(helper.call, store, blobs);
    void done.catch(() => undefined);
    await helper.answerNext(); // chunk 0: refused
    await helper.answerNext(); // chunk 1, sent behind it
    await expect(done).rejects.toThrow('stage refused');
    expect(helper.pending()).toBe(0);
    expect(helper.staged.length).toBe(2);
  });
});
