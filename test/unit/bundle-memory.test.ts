import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_CHUNK_BYTES, exportBundle } from '../../electron/engine/trace/bundle.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { writeSampleEpisode } from '../support/traces.js';

/** The memory any import may take (the issue's bound), measured as the importing process's peak RSS. */
const RSS_BOUND_MB = 200;
const MiB = 1024 * 1024;

let tmp: string;
/** A genuine bundle's lines (head … end), to build the bombs from. */
let genuine: string[];
let episode: string;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'stepbox-bundle-mem-'));
  const a = openEpisodeStore(join(tmp, 'a'), { skipMarkInterrupted: true });
  const ep = await writeSampleEpisode(a, { steps: 2 });
  episode = ep.episode;
  await exportBundle(a, episode, join(tmp, 'genuine.stepbox'));
  genuine = gunzipSync(readFileSync(join(tmp, 'genuine.stepbox')))
    .toString()
    .trimEnd()
    .split('\n');
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Writes a bundle: `before` lines, then what `body` streams, then `after` lines, gzip'd. */
async function writeBundle(
  name: string,
  before: readonly string[],
  body: (write: (text: string | Buffer) => Promise<void>) => Promise<void>,
  after: readonly string[],
): Promise<string> {
  const file = join(tmp, name);
  const gz = createGzip({ level: 6 });
  const done = pipeline(gz, createWriteStream(file));
  const write = async (text: string | Buffer) => {
    if (!gz.write(text)) await once(gz, 'drain');
  };
  for (const l of before) await write(l + '\n');
  await body(write);
  for (const l of after) await write(l + '\n');
  gz.end();
  await done;
  return file;
}

/** The genuine bundle with one more blob of `size` zero bytes, sent in chunks, before its end line. */
async function withBigBlob(name: string, size: number): Promise<{ file: string; hash: string }> {
  const zeros = Buffer.alloc(BUNDLE_CHUNK_BYTES);
  const digest = createHash('sha256');
  for (let off = 0; off < size; off += zeros.length)
    digest.update(zeros.subarray(0, Math.min(zeros.length, size - off)));
  const hash = digest.digest('hex');
  const end = JSON.parse(genuine.at(-1)!) as { blobs: number };
  const file = await writeBundle(
    name,
    genuine.slice(0, -1),
    async (write) => {
      await write(
        JSON.stringify({ kind: 'blob', hash, size, chunks: Math.ceil(size / BUNDLE_CHUNK_BYTES) }) + '\n',
      );
      const line = JSON.stringify({ kind: 'chunk', base64: zeros.toString('base64') }) + '\n';
      for (let off = 0; off < size; off += zeros.length) await write(line);
    },
    [JSON.stringify({ ...end, blobs: end.blobs + 1 })],
  );
  return { file, hash };
}

/** Imports `file` into a fresh home in a child `node` (the built engine); its outcome and peak RSS. */
async function importInChild(
  file: string,
  maxSize?: number,
): Promise<{ ok: boolean; error?: string; rssMb: number; home: string }> {
  const home = mkdtempSync(join(tmp, 'home-'));
  const script = `
    const { importBundle, BUNDLE_LIMITS } = await import(${JSON.stringify(join(PROJECT_ROOT, 'dist/electron/engine/trace/bundle.js'))});
    const { openEpisodeStore } = await import(${JSON.stringify(join(PROJECT_ROOT, 'dist/electron/engine/trace/episode-store.js'))});
    const store = openEpisodeStore(${JSON.stringify(home)}, { skipMarkInterrupted: true });
    const limits = ${maxSize === undefined ? 'BUNDLE_LIMITS' : `{ ...BUNDLE_LIMITS, totalBytes: ${maxSize} }`};
    let out;
    try { await importBundle(store, ${JSON.stringify(file)}, { limits }); out = { ok: true }; }
    catch (e) { out = { ok: false, error: e.message }; }
    // maxRSS is in KiB: the peak of the whole process, import included.
    out.rssMb = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(JSON.stringify(out));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  await once(child, 'close');
  try {
    return { ...(JSON.parse(stdout) as { ok: boolean; error?: string; rssMb: number }), home };
  } catch {
    throw new Error(`the import child printed no result: ${stdout}\n${stderr}`);
  }
}

describe('importing any bundle stays under ~200 MB of memory', () => {
  it('refuses one huge line naming the line cap, having held at most a few MiB of it', async () => {
    // 600 MiB of base64 in one inline blob line (a bundle from before chunks, or a bomb): ~0.6 MB on disk.
    const file = await writeBundle(
      'huge-line.stepbox',
      genuine.slice(0, 2),
      async (write) => {
        await write(`{"kind":"blob","hash":"${'0'.repeat(64)}","base64":"`);
        const a = Buffer.alloc(MiB, 0x41);
        for (let i = 0; i < 600; i++) await write(a);
        await write('"}\n');
      },
      [genuine.at(-1)!],
    );
    expect(statSync(file).size).toBeLessThan(2 * MiB);
    const out = await importInChild(file);
    expect(out.ok).toBe(false);
    expect(out.error).toMatch(/has a line over 8\.0 MiB \(the cap on one entry\)$/);
    expect(out.rssMb).toBeLessThan(RSS_BOUND_MB);
    expect(readdirSync(join(out.home, 'episodes'))).toEqual([]);
  }, 120_000);

  it('streams a large blob in chunks into the store, and refuses one past --max-size naming the cap', async () => {
    const size = 160 * MiB;
    const { file, hash } = await withBigBlob('big-blob.stepbox', size);
    const out = await importInChild(file);
    expect(out.error).toBeUndefined();
    expect(out.rssMb).toBeLessThan(RSS_BOUND_MB);
    const blob = join(out.home, 'episodes', episode, 'snapshots', 'blobs', hash.slice(0, 2), hash.slice(2));
    expect(statSync(blob).size).toBe(size);

    const capped = await importInChild(file, 64 * MiB);
    expect(capped.ok).toBe(false);
    expect(capped.error).toMatch(
      /inflates to more than 64\.0 MiB \(the cap on decompressed size\); if the bundle is genuine, raise it with --max-size/,
    );
    expect(capped.rssMb).toBeLessThan(RSS_BOUND_MB);
    expect(readdirSync(join(capped.home, 'episodes'))).toEqual([]);
  }, 240_000);

  it('refuses a trace in the bundle that is a gzip bomb, reading no more than its header line', async () => {
    // A 1 GiB line of spaces, gzip'd to about 1 MB, as the episode's trace.
    const gz = createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gz.on('data', (d: Buffer) => parts.push(d));
    const space = Buffer.alloc(MiB, 0x20);
    for (let i = 0; i < 1024; i++) if (!gz.write(space)) await once(gz, 'drain');
    gz.end();
    await once(gz, 'end');
    const bomb = Buffer.concat(parts);
    const lines = genuine.map((l) => {
      const e = JSON.parse(l) as { kind?: string; branch?: string };
      if (e.kind !== 'trace') return l;
      return JSON.stringify({
        ...e,
        sha256: createHash('sha256').update(bomb).digest('hex'),
        size: bomb.length,
        chunks: Math.ceil(bomb.length / BUNDLE_CHUNK_BYTES),
      });
    });
    // Replace the genuine trace's chunks by the bomb's.
    const out: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      out.push(lines[i]);
      if (!lines[i].includes('"kind":"trace"')) continue;
      while (genuine[i + 1]?.includes('"kind":"chunk"')) i++;
      for (let off = 0; off < bomb.length; off += BUNDLE_CHUNK_BYTES)
        out.push(
          JSON.stringify({
            kind: 'chunk',
            base64: bomb.subarray(off, off + BUNDLE_CHUNK_BYTES).toString('base64'),
          }),
        );
    }
    const file = join(tmp, 'trace-bomb.stepbox');
    await pipeline(
      (async function* () {
        yield gzipSync(out.join('\n') + '\n');
      })(),
      createWriteStream(file),
    );
    const res = await importInChild(file);
    expect(res.ok).toBe(false);
    expect(res.error).toMatch(/has a line over 8\.0 MiB/);
    expect(res.rssMb).toBeLessThan(RSS_BOUND_MB);
  }, 120_000);
});
