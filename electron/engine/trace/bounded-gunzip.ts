/**
 * Decompression with a ceiling. A gzip file from someone else (a bundle, an imported
 * trace) can inflate a thousandfold; every inflate of untrusted bytes goes through here,
 * so memory stays bounded and the error names the cap that was hit and how to raise it.
 */
import { constants as bufferConstants } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { createGunzip, gunzipSync } from 'node:zlib';
import { formatBytes } from '../../../shared/format-bytes.js';

/** Caps of one streamed inflate. */
export interface InflateLimits {
  /** All inflated bytes together. */
  readonly totalBytes: number;
  /** One line (one bundle entry; a blob's base64 is the largest). */
  readonly lineBytes: number;
}

/** The largest string V8 makes: a trace or a line longer than this can never be parsed. */
export const MAX_TEXT_BYTES = bufferConstants.MAX_STRING_LENGTH;

/** Why an inflate stopped: the cap hit, or bytes that are not gzip. */
export class InflateError extends Error {
  override readonly name = 'InflateError';
}

/** The message for a cap that was hit: what, which cap, and how to raise it when one can. */
function overCap(what: string, cap: number, raise?: string): InflateError {
  return new InflateError(
    `${what} inflates to more than ${formatBytes(cap)} (the cap on decompressed size)${raise ? `; ${raise}` : ''}`,
  );
}

/** Inflates gzip bytes held in memory, never to more than `cap` bytes. */
export function gunzipBounded(bytes: Uint8Array, cap: number, what: string, raise?: string): Buffer {
  try {
    return gunzipSync(bytes, { maxOutputLength: cap });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw overCap(what, cap, raise);
    throw new InflateError(`${what} is not valid gzip (${(e as Error).message})`);
  }
}

/**
 * The lines of a gzip'd file, inflated as a stream: at most one line and one chunk are in
 * memory, and reading stops as soon as a cap is exceeded.
 */
export async function* gunzipLines(
  file: string,
  limits: InflateLimits,
  what: string,
  raise?: string,
): AsyncGenerator<string> {
  const source = createReadStream(file);
  const gunzip = createGunzip();
  source.on('error', (e) => gunzip.destroy(e));
  source.pipe(gunzip);
  let total = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  // `raise` names how to lift the total cap; the line cap is fixed (no genuine line needs more).
  const lineTooLong = () =>
    new InflateError(`${what} has a line over ${formatBytes(limits.lineBytes)} (the cap on one entry)`);
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limits.totalBytes) throw overCap(what, limits.totalBytes, raise);
      let start = 0;
      for (let nl = chunk.indexOf(10, start); nl >= 0; nl = chunk.indexOf(10, start)) {
        const piece = chunk.subarray(start, nl);
        if (pendingBytes + piece.length > limits.lineBytes) throw lineTooLong();
        yield pending.length === 0
          ? piece.toString('utf8')
          : Buffer.concat([...pending, piece]).toString('utf8');
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
      }
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      if (pendingBytes > limits.lineBytes) throw lineTooLong();
      if (rest.length > 0) pending.push(rest);
    }
  } catch (e) {
    if (e instanceof InflateError) throw e;
    throw new InflateError(`${what} cannot be read as gzip (${(e as Error).message})`);
  } finally {
    source.destroy();
    gunzip.destroy();
  }
  if (pendingBytes > 0) yield Buffer.concat(pending).toString('utf8');
}
