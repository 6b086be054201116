/** One entry of a tar archive, as {@link readTar} yields it. */
export interface TarEntry {
  /** The path as archived (`/`-separated, no leading `./` or `/`). */
  readonly path: string;
  readonly type: 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';
  /** Permission bits (with setuid/setgid/sticky as archived). */
  readonly mode: number;
  /** The file's bytes (files only; empty otherwise). */
  readonly content: Buffer;
  /** The link target (symlinks and hard links). */
  readonly target?: string;
}

/** A tar archive that cannot be read: truncated, a bad checksum, a size past the bound. */
export class TarError extends Error {
  override readonly name = 'TarError';
}

const BLOCK = 512;

function text(b: Buffer, off: number, len: number): string {
  const end = b.indexOf(0, off);
  return b.toString('utf8', off, end < 0 || end > off + len ? off + len : end);
}

function octal(b: Buffer, off: number, len: number): number {
  // GNU base-256 for sizes past 8 GiB: the high bit of the first byte is set.
  if (b[off] & 0x80) {
    let n = 0;
    for (let i = off + 1; i < off + len; i++) n = n * 256 + b[i];
    return n;
  }
  const s = text(b, off, len).trim();
  return s ? parseInt(s, 8) : 0;
}

/** PAX extended header records: `LEN key=value\n`, repeated. */
function paxRecords(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let i = 0;
  while (i < data.length) {
    const space = data.indexOf(0x20, i);
    if (space < 0) break;
    const len = parseInt(data.toString('utf8', i, space), 10);
    if (!Number.isFinite(len) || len <= 0) break;
    const record = data.toString('utf8', space + 1, i + len - 1);
    const eq = record.indexOf('=');
    if (eq > 0) out.set(record.slice(0, eq), record.slice(eq + 1));
    i += len;
  }
  return out;
}

function clean(path: string): string {
  return path.replace(/^(\.\/|\/)+/, '').replace(/\/+$/, '');
}

/**
 * Reads a whole tar archive (ustar, with GNU long names and PAX headers, as the Docker engine
 * writes them for `getArchive`). `maxBytes` bounds the content kept: past it this rejects
 * with a {@link TarError} rather than fill the host's memory.
 */
export async function readTar(
  stream: AsyncIterable<Buffer | Uint8Array>,
  maxBytes: number,
): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  let buf = Buffer.alloc(0);
  let kept = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  // The state of the entry whose content is being read.
  let pending: { header: Buffer; size: number } | undefined;
  const chunks = stream[Symbol.asyncIterator]();
  const need = async (n: number): Promise<boolean> => {
    while (buf.length < n) {
      const next = await chunks.next();
      if (next.done) return false;
      buf = buf.length ? Buffer.concat([buf, Buffer.from(next.value)]) : Buffer.from(next.value);
    }
    return true;
  };
  for (;;) {
    if (!(await need(BLOCK))) break; // no end blocks: accept what came whole
    const header = buf.subarray(0, BLOCK);
    if (header.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i];
    if (sum !== octal(header, 148, 8)) throw new TarError('the archive has a header with a bad checksum');
    const flag = String.fromCharCode(header[156] || 0x30);
    const size = pax.has('size') ? Number(pax.get('size')) : octal(header, 124, 12);
    const padded = Math.ceil(size / BLOCK) * BLOCK;
    const isContent =
      flag === '0' || flag === '7' || flag === 'L' || flag === 'K' || flag === 'x' || flag === 'g';
    if (isContent && kept + size > maxBytes)
      throw new TarError(`the archive holds more than ${maxBytes} bytes`);
    if (!(await need(BLOCK + padded))) throw new TarError('the archive is truncated');
    const data = Buffer.from(buf.subarray(BLOCK, BLOCK + size));
    pending = { header: Buffer.from(header), size };
    buf = buf.subarray(BLOCK + padded);
    if (flag === 'L') {
      longName = text(data, 0, data.length);
      continue;
    }
    if (flag === 'K') {
      longLink = text(data, 0, data.length);
      continue;
    }
    if (flag === 'x') {
      pax = paxRecords(data);
      continue;
    }
    if (flag === 'g') continue;
    const h = pending.header;
    const prefix = h.subarray(257, 263).toString('latin1').startsWith('ustar') ? text(h, 345, 155) : '';
    const name = pax.get('path') ?? longName ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100));
    const link = pax.get('linkpath') ?? longLink ?? text(h, 157, 100);
    const mode = octal(h, 100, 8) & 0o7777;
    const type =
      flag === '0' || flag === '7'
        ? 'file'
        : flag === '5'
          ? 'dir'
          : flag === '2'
            ? 'symlink'
            : flag === '1'
              ? 'hardlink'
              : 'other';
    if (type === 'file') kept += size;
    entries.push({
      path: clean(name),
      type,
      mode,
      content: type === 'file' ? data : Buffer.alloc(0),
      ...(type === 'symlink' || type === 'hardlink'
        ? { target: type === 'hardlink' ? clean(link) : link }
        : {}),
    });
    longName = longLink = undefined;
    pax = new Map();
  }
  return entries;
}
