import { readSync } from 'node:fs';

/**
 * The first `size` bytes of an open file, read to that size or to the file's end if it is
 * shorter now: `size` is what the caller's fstat saw when it checked the file (its type, its
 * bound), so a file that grows meanwhile (a live trace) is never read past what was checked.
 */
export function readOpened(fd: number, size: number): Buffer {
  // Unfilled: only the bytes read are returned.
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const n = readSync(fd, buf, got, size - got, got);
    if (n === 0) break;
    got += n;
  }
  return got === size ? buf : buf.subarray(0, got);
}
