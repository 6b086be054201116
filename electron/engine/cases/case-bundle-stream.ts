import { closeSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CaseError } from './case-library.js';

// A case bundle is one JSON document ({format, name, files: {path: {text} | {base64}}}), and
// one of its files may be hundreds of megabytes: JSON.parse of it held the text, the parsed
// string and the decoded bytes at once (905 MB for a 200 MB file). This reader walks the
// document in fixed-size chunks and writes each file's content to disk as it goes, so memory
// stays bounded whatever the file sizes. It reads exactly the shape CaseBundle (case-bundle.ts)
// declares and nothing else; the unpacked case is then checked like any other.

/** Bytes read from the bundle at a time. */
const CHUNK = 1024 * 1024;
/** The longest key, path, format or name accepted (what is held in memory whole). */
const MAX_SMALL = 4096;

/** What a streamed bundle said besides its files (those are on disk in `dir`). */
export interface UnpackedBundle {
  readonly format: string;
  readonly name: string;
  /** The bundle's file paths, in order. */
  readonly files: readonly string[];
}

/** Where a string's bytes (UTF-8, unescaped) go. */
interface StringSink {
  write(bytes: Buffer): void;
  end(): void;
}

/** A string held whole (a key, a path, the format or name), bounded by {@link MAX_SMALL}. */
class SmallString implements StringSink {
  private parts: Buffer[] = [];
  private size = 0;
  constructor(
    private readonly what: string,
    private readonly done: (s: string) => void,
    private readonly fail: (why: string) => never,
  ) {}
  write(bytes: Buffer): void {
    this.size += bytes.length;
    if (this.size > MAX_SMALL) this.fail(`${this.what} is longer than ${MAX_SMALL} bytes`);
    this.parts.push(Buffer.from(bytes));
  }
  end(): void {
    this.done(Buffer.concat(this.parts).toString('utf8'));
  }
}

/** Each byte's base64 value (both alphabets, as Buffer.from(s, 'base64') reads them); -1 skipped, -2 padding. */
const BASE64 = (() => {
  const t = new Int8Array(256).fill(-1);
  const abc = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  for (let i = 0; i < abc.length; i++) t[abc.charCodeAt(i)] = i;
  t[43] = t[45] = 62; // + -
  t[47] = t[95] = 63; // / _
  t[61] = -2; // =
  return t;
})();

/**
 * A file's content written to `fd`: the text's bytes as they are, or base64 decoded.
 * The decoder allocates nothing per chunk: it decodes into one reused buffer, so a 200 MB
 * file leaves no garbage for the collector to fall behind on (strings and buffers per chunk
 * let the peak memory drift past 200 MB under load). It reads as Buffer.from(s, 'base64')
 * does: characters outside the alphabet are skipped and the first "=" ends the content.
 */
class FileSink implements StringSink {
  private quad = 0;
  private have = 0;
  private ended = false;
  private readonly out: Buffer;
  constructor(
    private readonly fd: number,
    private readonly base64: boolean,
  ) {
    this.out = base64 ? Buffer.allocUnsafe(CHUNK) : Buffer.alloc(0);
  }
  write(bytes: Buffer): void {
    if (!this.base64) {
      writeSync(this.fd, bytes);
      return;
    }
    if (this.ended) return;
    const out = this.out;
    let o = 0;
    for (let i = 0; i < bytes.length; i++) {
      const v = BASE64[bytes[i]];
      if (v === -1) continue;
      if (v === -2) {
        this.ended = true;
        break;
      }
      this.quad = (this.quad << 6) | v;
      if (++this.have === 4) {
        if (o + 3 > out.length) {
          writeSync(this.fd, out, 0, o);
          o = 0;
        }
        out[o++] = (this.quad >> 16) & 0xff;
        out[o++] = (this.quad >> 8) & 0xff;
        out[o++] = this.quad & 0xff;
        this.quad = 0;
        this.have = 0;
      }
    }
    if (this.ended) o = this.tail(o);
    if (o > 0) writeSync(this.fd, out, 0, o);
  }
  /** The bytes of an incomplete last group (2 characters are 1 byte, 3 are 2, 1 is none). */
  private tail(o: number): number {
    const out = this.out;
    if (o + 2 > out.length) {
      writeSync(this.fd, out, 0, o);
      o = 0;
    }
    if (this.have === 2) out[o++] = (this.quad >> 4) & 0xff;
    else if (this.have === 3) {
      out[o++] = (this.quad >> 10) & 0xff;
      out[o++] = (this.quad >> 2) & 0xff;
    }
    this.have = 0;
    return o;
  }
  end(): void {
    if (this.base64 && !this.ended) {
      const o = this.tail(0);
      if (o > 0) writeSync(this.fd, this.out, 0, o);
    }
    this.close();
  }
  /** Closes the file (also when the bundle turns out bad half-way). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }
  private closed = false;
}

/** What the parser expects next. */
type ParserState =
  'value' | 'after' | 'key-or-end' | 'key' | 'colon' | 'string' | 'escape' | 'unicode' | 'done';

type Frame = { readonly kind: 'object'; key: string | null; keys: Set<string> };

/** UTF-8 of one code point (a lone surrogate as U+FFFD, as Buffer.from(string) writes it). */
function utf8(cp: number): Buffer {
  return Buffer.from(cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : String.fromCodePoint(cp), 'utf8');
}

const ESCAPES: Record<string, number> = { '"': 34, '\\': 92, '/': 47, b: 8, f: 12, n: 10, r: 13, t: 9 };

/**
 * Unpacks the case bundle at `file` into `dir` (which must not exist), one file at a time,
 * each path checked by `safePath` before anything is written. Throws `invalid_case` naming
 * what is wrong (and where, in bytes) for anything that is not a case bundle.
 */
export function unpackCaseBundleFile(
  file: string,
  dir: string,
  safePath: (p: string) => boolean,
): UnpackedBundle {
  let offset = 0;
  const fail = (why: string): never => {
    throw new CaseError(
      'invalid_case',
      `${file}: not a case bundle (stepbox.case/1): ${why} (byte ${offset})`,
    );
  };
  const head: { format: string | null; name: string | null } = { format: null, name: null };
  const files: string[] = [];
  const stack: Frame[] = [];
  // Parser state: what comes next.
  let state = 'value' as ParserState;
  let sink: StringSink | null = null;
  let isKey = false;
  let hex = '';
  let high = 0;

  const path = () => stack.map((f) => f.key ?? '');
  /** The sink for a string value at the current path, or a failure (only strings the bundle declares). */
  const valueSink = (): StringSink => {
    const p = path();
    if (p.length === 1 && (p[0] === 'format' || p[0] === 'name'))
      return new SmallString(p[0], (s) => (p[0] === 'format' ? (head.format = s) : (head.name = s)), fail);
    if (p.length === 3 && p[0] === 'files' && (p[2] === 'text' || p[2] === 'base64')) {
      const rel = p[1];
      const target = join(dir, ...rel.split('/'));
      try {
        mkdirSync(dirname(target), { recursive: true });
        return new FileSink(openSync(target, 'wx'), p[2] === 'base64');
      } catch (e) {
        return fail(`file "${rel}" cannot be written (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
      }
    }
    return fail(`a string at ${p.join('.') || 'the top'} where the bundle has none`);
  };
  const openObject = () => {
    const p = path();
    const allowed =
      p.length === 0 || (p.length === 1 && p[0] === 'files') || (p.length === 2 && p[0] === 'files');
    if (!allowed) fail(`an object at ${p.join('.')} where the bundle has none`);
    stack.push({ kind: 'object', key: null, keys: new Set() });
  };
  const keyDone = (key: string) => {
    const top = stack[stack.length - 1];
    if (top.keys.has(key)) fail(`key "${key}" appears twice`);
    top.keys.add(key);
    const depth = stack.length;
    if (depth === 1 && !['format', 'name', 'files'].includes(key)) fail(`unknown key "${key}"`);
    if (depth === 2 && stack[0].key === 'files') {
      if (!safePath(key))
        throw new CaseError('invalid_case', `the bundle's file "${key}" would leave the case folder`);
      files.push(key);
    }
    if (depth === 3) {
      if (key !== 'text' && key !== 'base64')
        fail(`file "${stack[1].key}" has key "${key}" (text or base64)`);
      if (top.keys.size > 1) fail(`file "${stack[1].key}" has both text and base64`);
    }
    top.key = key;
  };
  const closeObject = () => {
    const top = stack.pop() as Frame;
    if (stack.length === 2 && top.keys.size === 0) fail(`file "${stack[1].key}" has neither text nor base64`);
    valueDone();
  };
  const valueDone = () => {
    state = stack.length === 0 ? 'done' : 'after';
  };

  const fd = openSync(file, 'r');
  const buf = Buffer.alloc(CHUNK);
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      let i = 0;
      while (i < n) {
        if (state === 'string') {
          // The fast path: copy up to the next quote or backslash in one piece.
          let q = chunk.indexOf(34, i);
          const b = chunk.indexOf(92, i);
          if (q === -1) q = n;
          const stop = b !== -1 && b < q ? b : q;
          const run = chunk.subarray(i, stop);
          for (let k = 0; k < run.length; k++) if (run[k] < 0x20) fail('a control character inside a string');
          if (run.length) {
            if (high) (sink as StringSink).write(utf8(high));
            high = 0;
            (sink as StringSink).write(run);
          }
          offset += stop - i;
          i = stop;
          if (i >= n) break;
          if (chunk[i] === 92) state = 'escape';
          else {
            if (high) (sink as StringSink).write(utf8(high));
            high = 0;
            (sink as StringSink).end();
            sink = null;
            if (isKey) state = 'colon';
            else valueDone();
          }
          i += 1;
          offset += 1;
          continue;
        }
        const c = chunk[i];
        i += 1;
        offset += 1;
        if (state === 'escape') {
          const ch = String.fromCharCode(c);
          if (ch === 'u') {
            state = 'unicode';
            hex = '';
            continue;
          }
          const code = ESCAPES[ch];
          if (code === undefined) fail(`a bad escape \\${ch}`);
          if (high) (sink as StringSink).write(utf8(high));
          high = 0;
          (sink as StringSink).write(Buffer.of(code));
          state = 'string';
          continue;
        }
        if (state === 'unicode') {
          hex += String.fromCharCode(c);
          if (!/^[0-9a-fA-F]*$/.test(hex)) fail('a bad \\u escape');
          if (hex.length < 4) continue;
          const unit = parseInt(hex, 16);
          if (high && unit >= 0xdc00 && unit <= 0xdfff) {
            (sink as StringSink).write(utf8(0x10000 + ((high - 0xd800) << 10) + (unit - 0xdc00)));
            high = 0;
          } else {
            if (high) (sink as StringSink).write(utf8(high));
            high = 0;
            if (unit >= 0xd800 && unit <= 0xdbff) high = unit;
            else (sink as StringSink).write(utf8(unit));
          }
          state = 'string';
          continue;
        }
        if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) continue;
        if ((state as ParserState) === 'done') fail('text after the document');
        if (state === 'value') {
          if (c === 0x7b) {
            openObject();
            state = 'key-or-end';
          } else if (c === 0x22) {
            sink = valueSink();
            isKey = false;
            state = 'string';
          } else
            fail(`a value starting with "${String.fromCharCode(c)}" at ${path().join('.') || 'the top'}`);
          continue;
        }
        if (state === 'key-or-end' && c === 0x7d) {
          closeObject();
          continue;
        }
        if (state === 'key-or-end' || state === 'key') {
          if (c !== 0x22) fail('a key expected');
          sink = new SmallString('a key', keyDone, fail);
          isKey = true;
          state = 'string';
          continue;
        }
        if (state === 'colon') {
          if (c !== 0x3a) fail('":" expected');
          state = 'value';
          continue;
        }
        // After a value: a comma or the end of the object.
        if (c === 0x2c) state = 'key';
        else if (c === 0x7d) closeObject();
        else fail('"," or "}" expected');
      }
    }
  } finally {
    closeSync(fd);
    if (sink instanceof FileSink) sink.close();
  }
  if ((state as ParserState) !== 'done') fail('the document ends early');
  if (head.format === null || head.name === null) return fail('format and name are required');
  return { format: head.format, name: head.name, files };
}
