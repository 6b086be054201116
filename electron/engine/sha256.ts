import { createHash } from 'node:crypto';

/** sha256 hex of bytes, or of text as UTF-8: the content hash of blobs, manifests, traces and trees. */
export function sha256Hex(content: Uint8Array | string): string {
  return createHash('sha256').update(content).digest('hex');
}
