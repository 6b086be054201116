import { createHash, hash } from 'node:crypto';
import { textBatches } from './text-batches.js';

/** sha256 hex of bytes, or of text as UTF-8: the content hash of blobs, manifests, traces and trees. */
export function sha256Hex(content: Uint8Array | string): string {
  // One call, no Hash object: a folder import hashes 10,000 small files (createHash cost ~40% more there).
  return hash('sha256', content, 'hex');
}

/** sha256Hex(parts.join('')), without making the joined text (see textBatches). */
export function sha256HexOfParts(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const batch of textBatches(parts)) hash.update(batch);
  return hash.digest('hex');
}
