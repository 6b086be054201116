import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { createGzip, gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BUNDLE_LIMITS, exportBundle, importBundle } from '../../electron/engine/trace/bundle.js';
import { gunzipBounded } from '../../electron/engine/trace/bounded-gunzip.js';
import { openEpisodeStore, type StoreError } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'stepbox-bundle-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

/** Every file under a folder, relative path → bytes. */
function files(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${rel}${e.name}/`);
      else out[`${rel}${e.name}`] = readFileSync(join(d, e.name)).toString('base64');
    }
  };
  walk(dir, '');
  return out;
}

async function sample() {
  const a = openEpisodeStore(join(tmp, 'a'));
  const ep = await writeSampleEpisode(a, {
    steps: 4,
    script: [
      { files: { 'data.bin': '\u0000\u0001binary', 'src/x.py': 'print(1)\n' } },
      { files: { 'src/x.py': 'print(2)\n' }, memory: { key: 'k', after: 'v' } },
      { files: { 'data.bin': null } },
      { final: 'done' },
    ],
  });
  const fork = await writeSampleFork(a, ep, {
    at: 2,
    script: [{ files: { 'fork.txt': 'f' } }, { final: 'x' }],
  });
  return { a, ep, fork };
}

describe('bundles', () => {
  it('export → import into an empty $STEPBOX_HOME gives identical traces, meta and every blob', async () => {
    const { a, ep, fork } = await sample();
    const file = join(tmp, 'ep.stepbox');
    const out = await exportBundle(a, fork.branch.slice(0, 12), file);
    expect(out).toMatchObject({ episode: ep.episode, branches: [ep.branch, fork.branch] });
    // Distinct manifests: main 0..3 (4 = 3: a final answer changes nothing), fork 3 (= fork 4).
    expect(out.manifests).toBe(5);
    const b = openEpisodeStore(join(tmp, 'b'));
    const got = await importBundle(b, file);
    expect(got).toMatchObject({ episode: ep.episode, manifests: out.manifests, blobs: out.blobs });
    const { 'meta.json': metaB, ...restB } = files(b.episodeDir(ep.episode));
    const { 'meta.json': metaA, ...restA } = files(a.episodeDir(ep.episode));
    expect(restB).toEqual(restA);
    // The meta is the same but for the mark saying where it came from.
    const { imported, ...metaRest } = JSON.parse(Buffer.from(metaB, 'base64').toString());
    expect(metaRest).toEqual(JSON.parse(Buffer.from(metaA, 'base64').toString()));
    expect(imported).toMatchObject({ from: 'ep.stepbox' });
    expect(b.imported(ep.episode)).toBe(true);
    expect(a.imported(ep.episode)).toBe(false);
    // And the imported store works: traces read, snapshots restore.
    const trace = b.readTrace(b.resolve(fork.branch));
    expect(trace.end?.status).toBe('succeeded');
    const m = await b.snapshots(ep.episode).getManifest(fork.manifests[4]);
    const fx = m.entries.find((e) => e.path === 'fork.txt')!;
    expect(Buffer.from(await b.snapshots(ep.episode).getBlob(fx.hash!)).toString()).toBe('f');
  });

  it('refuses to overwrite an existing episode unless asked', async () => {
    const { a, ep } = await sample();
    const file = join(tmp, 'ep.stepbox');
    await exportBundle(a, ep.episode, file);
    await expect(importBundle(a, file)).rejects.toMatchObject({
      code: 'conflict',
    } satisfies Partial<StoreError>);
    const again = await importBundle(a, file, { overwrite: true });
    expect(again.episode).toBe(ep.episode);
    expect(a.readTrace(a.resolve(ep.episode)).end?.status).toBe('succeeded');
    expect(readdirSync(a.episodesDir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('refuses a bundle carrying a branch id another episode of the store has, writing nothing', async () => {
    const { a, fork } = await sample();
    const file = join(tmp, 'ep.stepbox');
    await exportBundle(a, fork.branch, file);
    // Another episode of the importing store lists the fork's id (a crafted bundle, a copied trace).
    const b = openEpisodeStore(join(tmp, 'b'));
    const other = await writeSampleEpisode(b, { steps: 1 });
    const forkTrace = a.resolve(fork.branch).tracePath;
    copyFileSync(forkTrace, join(b.episodeDir(other.episode), 'branches', basename(forkTrace)));
    expect(b.resolve(fork.branch).episode).toBe(other.episode);
    await expect(importBundle(b, file)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining(
        `its branch ${fork.branch} is already a branch of episode ${other.episode}`,
      ),
      fix: expect.stringContaining('import it into another store'),
    });
    expect(b.listEpisodes()).toEqual([other.episode]);
    expect(readdirSync(b.episodesDir).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('rejects a bundle whose blob does not match its hash, writing nothing', async () => {
    const { a, ep } = await sample();
    const file = join(tmp, 'ep.stepbox');
    await exportBundle(a, ep.episode, file);
    const lines = gunzipSync(readFileSync(file)).toString().trimEnd().split('\n');
    // A blob's content is in the chunk lines after its entry: tamper with the first (same size).
    const i = lines.findIndex((l) => l.includes('"kind":"blob"')) + 1;
    const chunk = JSON.parse(lines[i]);
    const bytes = Buffer.from(chunk.base64, 'base64');
    bytes[0] ^= 1;
    chunk.base64 = bytes.toString('base64');
    lines[i] = JSON.stringify(chunk);
    writeFileSync(file, gzipSync(lines.join('\n') + '\n'));
    const b = openEpisodeStore(join(tmp, 'b'));
    await expect(importBundle(b, file)).rejects.toThrow(/does not match its content hash/);
    expect(existsSync(b.episodeDir(ep.episode))).toBe(false);
    expect(readdirSync(b.episodesDir)).toEqual([]);
  });

  it('rejects a truncated bundle', async () => {
    const { a, ep } = await sample();
    const file = join(tmp, 'ep.stepbox');
    await exportBundle(a, ep.episode, file);
    const lines = gunzipSync(readFileSync(file)).toString().trimEnd().split('\n');
    writeFileSync(file, gzipSync(lines.slice(0, -2).join('\n') + '\n'));
    await expect(importBundle(openEpisodeStore(join(tmp, 'b')), file)).rejects.toThrow(/truncated/);
  });

  it('refuses a decompression bomb naming the cap, without inflating it whole', async () => {
    // 48 MB of one byte in one line, ~50 KB on disk, after a valid head line.
    const file = join(tmp, 'bomb.stepbox');
    const gz = createGzip({ level: 9 });
    const done = pipeline(gz, createWriteStream(file));
    gz.write(
      JSON.stringify({ format: 'stepbox.bundle/1', episode: 'ep-20260101-000000-bomb', created: 0 }) + '\n',
    );
    const zeros = Buffer.alloc(1024 * 1024, 0x30);
    for (let i = 0; i < 48; i++) if (!gz.write(zeros)) await once(gz, 'drain');
    gz.end();
    await done;
    expect(statSync(file).size).toBeLessThan(1024 * 1024);
    const b = openEpisodeStore(join(tmp, 'b'));
    const limits = { totalBytes: 40 * 1024 * 1024, lineBytes: 8 * 1024 * 1024 };
    await expect(importBundle(b, file, { limits })).rejects.toThrow(
      /line over 8.0 MiB \(the cap on one entry\)/,
    );
    // Many small lines: the cap on the whole inflated bundle, with how to raise it.
    await expect(
      importBundle(b, file, { limits: { totalBytes: 4 * 1024 * 1024, lineBytes: 1024 ** 3 } }),
    ).rejects.toThrow(
      /inflates to more than 4.0 MiB \(the cap on decompressed size\); if the bundle is genuine, raise it with --max-size/,
    );
    expect(readdirSync(b.episodesDir)).toEqual([]);
    // The default caps are finite, and below what a machine with a few GB can hold.
    expect(BUNDLE_LIMITS.lineBytes).toBeLessThanOrEqual(8 * 1024 * 1024);
    expect(BUNDLE_LIMITS.totalBytes).toBeLessThanOrEqual(8 * 1024 ** 3);
  }, 30_000);

  it('refuses a trace inside a bundle that inflates past its cap (every inflate is bounded)', () => {
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024, 0x20));
    expect(() => gunzipBounded(bomb, 1024 * 1024, 'trace x.jsonl.gz')).toThrow(
      /trace x.jsonl.gz inflates to more than 1.0 MiB \(the cap on decompressed size\)/,
    );
    expect(gunzipBounded(gzipSync('ok\n'), 1024, 'small').toString()).toBe('ok\n');
    expect(() => gunzipBounded(Buffer.from('not gzip'), 1024, 'junk')).toThrow(/junk is not valid gzip/);
  }, 30_000);

  it('refuses entries that are not bundle entries, by line number', async () => {
    const file = join(tmp, 'odd.stepbox');
    const head = JSON.stringify({
      format: 'stepbox.bundle/1',
      episode: 'ep-20260101-000000-odd',
      created: 0,
    });
    for (const [line, why] of [
      ['null', /line 2 is not a bundle entry/],
      ['[1,2]', /line 2 is not a bundle entry/],
      ['{"kind":"blob","hash":"../../x","base64":""}', /line 2 is a blob without a sha256 hash/],
      ['{"kind":"manifest","id":"x","manifest":{}}', /manifest "x" has no entries/],
    ] as const) {
      writeFileSync(file, gzipSync(`${head}\n${line}\n{"kind":"end","traces":0,"manifests":0,"blobs":0}\n`));
      await expect(importBundle(openEpisodeStore(join(tmp, 'c')), file)).rejects.toThrow(why);
    }
  });
});
