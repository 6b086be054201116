import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { gc, parseDuration } from '../../electron/engine/trace/gc.js';
import { writeSampleEpisode } from '../support/traces.js';
import { createHash } from 'node:crypto';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-gc-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const DAY = 86_400_000;

describe('gc', () => {
  it('parses durations', () => {
    expect(parseDuration('7d')).toBe(7 * DAY);
    expect(parseDuration('12h')).toBe(12 * 3_600_000);
    expect(parseDuration('1d12h')).toBe(1.5 * DAY);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('7')).toBeNull();
    expect(parseDuration('7 days')).toBeNull();
  });

  it('removes episodes older than the duration and blobs no manifest references; spares live episodes', async () => {
    const store = openEpisodeStore(home);
    const old = await writeSampleEpisode(store, { steps: 2, created: Date.now() - 10 * DAY });
    for (const b of store.listBranches(old.episode))
      utimesSync(b.tracePath, new Date(Date.now() - 10 * DAY), new Date(Date.now() - 10 * DAY));
    const recent = await writeSampleEpisode(store, { steps: 2 });
    const live = await writeSampleEpisode(store, { steps: 1, end: null, created: Date.now() - 10 * DAY });
    for (const b of store.listBranches(live.episode))
      utimesSync(b.tracePath, new Date(Date.now() - 10 * DAY), new Date(Date.now() - 10 * DAY));
    // An orphan blob in the recent episode (a snapshot whose manifest never got written).
    const orphan = Buffer.from('orphan content');
    const hash = createHash('sha256').update(orphan).digest('hex');
    await store.snapshots(recent.episode).putBlob(hash, orphan);
    const snaps = store.snapshots(recent.episode) as DiskSnapshotStore;

    const dry = await gc(store, { olderThanMs: 7 * DAY, dryRun: true });
    expect(dry.episodes.map((e) => e.id)).toEqual([old.episode]);
    expect(store.listEpisodes()).toContain(old.episode);

    const report = await gc(store, { olderThanMs: 7 * DAY });
    expect(report.episodes.map((e) => e.id)).toEqual([old.episode]);
    expect(report.episodes[0].bytes).toBeGreaterThan(0);
    expect(report.blobs).toBe(1);
    expect(report.blob_bytes).toBe(orphan.length);
    expect(report.bytes_freed).toBe(report.episodes[0].bytes + orphan.length);
    expect(report.skipped_live).toEqual([live.episode]);
    expect(store.listEpisodes().sort()).toEqual([recent.episode, live.episode].sort());
    expect(await snaps.hasBlob(hash)).toBe(false);
    // Referenced blobs survive: every snapshot of the recent episode still restores.
    for (const id of recent.manifests) {
      const m = await store.snapshots(recent.episode).getManifest(id);
      for (const e of m.entries) expect(await store.snapshots(recent.episode).hasBlob(e.hash!)).toBe(true);
    }
    expect(readdirSync(store.episodesDir).filter((n) => n.startsWith('.'))).toEqual([]);
    // Nothing left to do but a crashed removal's leftovers.
    mkdirSync(join(store.episodesDir, '.deleting-ep-x-99999999'));
    writeFileSync(join(store.episodesDir, '.deleting-ep-x-99999999', 'f'), '12345');
    expect((await gc(store, { olderThanMs: 7 * DAY })).bytes_freed).toBe(5);
    expect((await gc(store, { olderThanMs: 7 * DAY })).bytes_freed).toBe(0);
    live.writer.abandon();
  });
});

describe('gc and symlinks', () => {
  /** A folder outside the store holding files named like blobs, that gc must never touch. */
  function outsideBlobs(name: string): { dir: string; files: string[] } {
    const dir = join(home, `outside-${name}`);
    const hash = createHash('sha256').update(name).digest('hex');
    const files = [
      join(dir, 'blobs', hash.slice(0, 2), hash.slice(2)),
      join(dir, hash.slice(0, 2), hash.slice(2)),
      join(dir, hash),
    ];
    mkdirSync(join(dir, 'blobs', hash.slice(0, 2)), { recursive: true });
    mkdirSync(join(dir, hash.slice(0, 2)), { recursive: true });
    for (const f of files) writeFileSync(f, `precious ${name}`);
    return { dir, files };
  }

  it('never follows a symlink at any level of the store, and deletes nothing outside it', async () => {
    const store = openEpisodeStore(join(home, 'store'));
    const targets: string[] = [];
    const plant = async (
      level: string,
      link: (episodeDir: string, outside: string) => void,
      created?: number,
    ) => {
      const ep = await writeSampleEpisode(store, { steps: 1, created });
      const o = outsideBlobs(level);
      targets.push(...o.files);
      link(store.episodeDir(ep.episode), o.dir);
      return ep;
    };
    // The snapshot folder itself, its blobs folder, one blob prefix folder, one blob file.
    await plant('snapshots', (d, o) => {
      rmSync(join(d, 'snapshots'), { recursive: true, force: true });
      symlinkSync(o, join(d, 'snapshots'));
    });
    await plant('blobs', (d, o) => {
      rmSync(join(d, 'snapshots', 'blobs'), { recursive: true, force: true });
      symlinkSync(o, join(d, 'snapshots', 'blobs'));
    });
    await plant('prefix', (d, o) => {
      const hash = createHash('sha256').update('prefix').digest('hex');
      symlinkSync(join(o, hash.slice(0, 2)), join(d, 'snapshots', 'blobs', hash.slice(0, 2)));
    });
    await plant('file', (d, o) => {
      const hash = createHash('sha256').update('file').digest('hex');
      mkdirSync(join(d, 'snapshots', 'blobs', hash.slice(0, 2)), { recursive: true });
      symlinkSync(join(o, hash), join(d, 'snapshots', 'blobs', hash.slice(0, 2), hash.slice(2)));
    });
    // A whole episode folder that is a symlink, and a crashed removal's leftover that is one.
    const o1 = outsideBlobs('episode');
    targets.push(...o1.files);
    symlinkSync(o1.dir, join(store.episodesDir, 'ep-20260101-000000-symlink'));
    const o2 = outsideBlobs('leftover');
    targets.push(...o2.files);
    symlinkSync(o2.dir, join(store.episodesDir, '.deleting-ep-x-99999999'));
    // An old episode (removed whole) holding a symlink to the outside, and one that loops.
    const old = await plant(
      'inside-old',
      (d, o) => {
        symlinkSync(o, join(d, 'escape'));
        symlinkSync(d, join(d, 'loop'));
      },
      Date.now() - 10 * DAY,
    );
    for (const b of store.listBranches(old.episode))
      utimesSync(b.tracePath, new Date(Date.now() - 10 * DAY), new Date(Date.now() - 10 * DAY));

    await gc(store, { olderThanMs: 7 * DAY, dryRun: true });
    const report = await gc(store, { olderThanMs: 7 * DAY });
    expect(report.episodes.map((e) => e.id)).toEqual([old.episode]);
    expect(report.blobs).toBe(0);
    for (const f of targets) expect(existsSync(f), f).toBe(true);
  });
});
