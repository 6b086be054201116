import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
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
