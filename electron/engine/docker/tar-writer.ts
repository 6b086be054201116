/** What one tar entry is, as {@link tarHeader} writes it. */
export interface TarHeaderFields {
  /** The path in the archive (`/`-separated; a folder's may end in `/`). */
  readonly name: string;
  /** The bytes that follow the header (0 for a folder or a link). */
  readonly size: number;
  /** Permission bits. */
  readonly mode: number;
  readonly type: 'file' | 'dir' | 'symlink';
  /** A symbolic link's target. */
  readonly linkname?: string;
  /** Modification time, epoch seconds (0 when not given). */
  readonly mtime?: number;
}

const BLOCK = 512;
const TYPE_FLAG = { file: '0', dir: '5', symlink: '2' } as const;

/** The ustar name/prefix split of `name`, or null when it does not fit (a PAX record carries it). */
function ustarName(name: string): { prefix: string; base: string } | null {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', base: name };
  for (let cut = name.lastIndexOf('/'); cut > 0; cut = name.lastIndexOf('/', cut - 1)) {
    const prefix = name.slice(0, cut);
    const base = name.slice(cut + 1);
    // An empty name (a folder's trailing `/` split off) reads as no entry to the engine.
    if (!base) continue;
    if (Buffer.byteLength(base) > 100) return null;
    if (Buffer.byteLength(prefix) <= 155) return { prefix, base };
  }
  return null;
}

function block(
  name: string,
  prefix: string,
  size: number,
  mode: number,
  type: string,
  linkname: string,
  mtime: number,
): Buffer {
  const b = Buffer.alloc(BLOCK);
  const put = (s: string, off: number, len: number) => b.write(s, off, len, 'utf8');
  const oct = (n: number, len: number) => n.toString(8).padStart(len - 1, '0') + '\0';
  put(name, 0, 100);
  put(oct(mode & 0o7777, 8), 100, 8);
  put(oct(0, 8), 108, 8); // root's, as `docker build` sends every file
  put(oct(0, 8), 116, 8);
  put(oct(size, 12), 124, 12);
  put(oct(Math.max(0, Math.floor(mtime)), 12), 136, 12);
  b.fill(' ', 148, 156);
  put(type, 156, 1);
  put(linkname, 157, 100);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const byte of b) sum += byte;
  put(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8);
  return b;
}

/** A PAX record `LEN key=value\n`, whose length counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bytes = Buffer.byteLength(body);
  let digits = String(bytes).length;
  while (String(bytes + digits).length !== digits) digits++;
  return `${bytes + digits}${body}`;
}

/**
 * The header of one tar entry, owned by root: one ustar block, preceded by a PAX header when
 * the path or the link target does not fit ustar's fields (the engine reads both).
 */
export function tarHeader(f: TarHeaderFields): Buffer {
  const mtime = f.mtime ?? 0;
  const split = ustarName(f.name);
  const linkname = f.linkname ?? '';
  const records =
    (split ? '' : paxRecord('path', f.name)) +
    (Buffer.byteLength(linkname) > 100 ? paxRecord('linkpath', linkname) : '');
  const main = block(
    split?.base ?? f.name.slice(-100),
    split?.prefix ?? '',
    f.size,
    f.mode,
    TYPE_FLAG[f.type],
    linkname,
    mtime,
  );
  if (!records) return main;
  const data = Buffer.from(records);
  return Buffer.concat([
    block('PaxHeader', '', data.length, 0o644, 'x', '', mtime),
    data,
    tarPadding(data.length),
    main,
  ]);
}

/** The zeros that fill an entry of `size` bytes up to a whole block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc(size % BLOCK ? BLOCK - (size % BLOCK) : 0);
}

/** The two zero blocks that end an archive. */
export function tarEnd(): Buffer {
  return Buffer.alloc(2 * BLOCK);
}
