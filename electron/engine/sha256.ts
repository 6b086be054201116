import { createHash } from 'node:crypto';
import { textBatches } from './text-batches.js';

/** sha256 hex of bytes, or of text as UTF-8: the content hash of blobs, manifests, traces and trees. */
export function sha256Hex(content: Uint8Array | string): string {
  return createHash('sha256').update(content).digest('hex');
}

/** sha256Hex(parts.join('')), without making the joined text (see textBatches). */
export function sha256HexOfParts(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const batch of textBatches(parts)) hash.update(batch);
  return hash.digest('hex');
}
