import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunkReader, readFiles } from '../../electron/engine/harness/chunk-reader.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'stepbox-chunk-reader-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A chunk as a folder import lists it, then changed under it: what each file now is. */
function chunk() {
  writeFileSync(join(root, 'a'), 'alpha');
  writeFileSync(join(root, 'grew'), 'now longer than listed');
  writeFileSync(join(root, 'b'), 'bravo!');
  symlinkSync('/etc/passwd', join(root, 'link'));
  execFileSync('mkfifo', [join(root, 'fifo')]);
  const files: [string, number][] = [
    ['a', 5],
    ['grew', 3],
    ['gone', 4],
    ['link', 11],
    ['fifo', 0],
    ['b', 6],
  ];
  return { paths: files.map(([p]) => join(root, p)), sizes: files.map(([, n]) => n) };
}

describe('chunk reader: a chunk of small files into one buffer, each hashed', () => {
  for (const [name, read] of [
    [
      'on its thread',
      async (p: string[], s: number[]) => {
        const reader = chunkReader();
        try {
          expect(await reader.threaded).toBe(true);
          return await reader.read(p, s);
        } finally {
          reader.close();
        }
      },
    ],
    ['in process', async (p: string[], s: number[]) => readFiles(p, s)],
  ] as const) {
    it(`${name}: files at their places with their hashes; a changed size read again, a link, a fifo or a missing file skipped with why`, async () => {
      const { paths, sizes } = chunk();
      const { slab, files } = await read(paths, sizes);
      expect(slab.length).toBe(5 + 3 + 4 + 11 + 0 + 6);
      expect(files[0]).toEqual({ at: 0, size: 5, hash: sha256(Buffer.from('alpha')) });
      expect(slab.subarray(0, 5).toString()).toBe('alpha');
      expect(files[1]).toBe('again');
      expect(files[2]).toEqual({ why: 'cannot be read (ENOENT)' });
      // Never followed: O_NOFOLLOW refuses the link itself.
      expect(files[3]).toEqual({ why: 'cannot be read (ELOOP)' });
      expect(files[4]).toEqual({ why: 'it is no longer a file' });
      expect(files[5]).toEqual({ at: 23, size: 6, hash: sha256(Buffer.from('bravo!')) });
      expect(slab.subarray(23, 29).toString()).toBe('bravo!');
    });
  }

  it('answers requests in any number, each with its own buffer, before and after its thread is up', async () => {
    const reader = chunkReader();
    try {
      const early = await reader.read([join(root, 'early')], [0]);
      expect(early.files).toEqual([{ why: 'cannot be read (ENOENT)' }]);
      expect(await reader.threaded).toBe(true);
      for (let i = 0; i < 5; i++) writeFileSync(join(root, `f${i}`), `file ${i}`);
      const reads = [0, 1, 2, 3, 4].map((i) => reader.read([join(root, `f${i}`)], [6]));
      const got = await Promise.all(reads);
      got.forEach((g, i) => expect(g.slab.toString()).toBe(`file ${i}`));
    } finally {
      reader.close();
    }
  });
});
