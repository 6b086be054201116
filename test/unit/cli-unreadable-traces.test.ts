import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../support/cli.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode } from '../support/traces.js';

// A trace of another format version in the store: `list` shows those episodes with what to
// do (not "No episodes yet"), and a trace older than this stepbox is not told to upgrade.

vi.setConfig({ testTimeout: 60_000 });

let home: string;
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** Rewrites the header's schema of every trace of `episode` (plain or gzip). */
function setSchema(episode: string, schema: string): void {
  const store = openEpisodeStore(home);
  for (const b of store.listBranches(episode)) {
    const gz = b.tracePath.endsWith('.gz');
    const raw = readFileSync(b.tracePath);
    const lines = (gz ? gunzipSync(raw) : raw).toString('utf8').split('\n');
    lines[0] = JSON.stringify({ ...(JSON.parse(lines[0]) as object), schema });
    const text = Buffer.from(lines.join('\n'));
    writeFileSync(b.tracePath, gz ? gzipSync(text) : text);
  }
}

describe('traces of another stepbox version', () => {
  it('list names them (newer: upgrade; older: the version that wrote it) instead of "No episodes yet"', async () => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-versions-'));
    const store = openEpisodeStore(home);
    const newer = (await writeSampleEpisode(store, { steps: 2 })).episode;
    const older = (await writeSampleEpisode(store, { steps: 2 })).episode;
    setSchema(newer, 'stepbox.trace/7');
    setSchema(older, 'stepbox.trace/0');
    rmSync(join(home, 'index.sqlite'), { force: true });

    const text = await runMain(home, ['list'], { STEPBOX_LOG: 'error' });
    expect(text.code, text.err).toBe(0);
    expect(text.out).not.toMatch(/No episodes yet/);
    expect(text.out).toMatch(
      new RegExp(`${newer}: made by a newer stepbox version .*stepbox\\.trace/7.*upgrade stepbox`),
    );
    expect(text.out).toMatch(
      new RegExp(
        `${older}: made by an older stepbox version .*stepbox\\.trace/0.*open it with the stepbox version that wrote it`,
      ),
    );
    expect(text.out.split('\n').find((l) => l.startsWith(older))).not.toMatch(/upgrade stepbox/);

    const json = await runMain(home, ['list', '--json'], { STEPBOX_LOG: 'error' });
    const doc = JSON.parse(json.out) as { episodes: unknown[]; unreadable: { id: string; schema: string }[] };
    expect(doc.episodes).toEqual([]);
    expect(doc.unreadable.map((u) => [u.id, u.schema]).sort()).toEqual(
      [
        [newer, 'stepbox.trace/7'],
        [older, 'stepbox.trace/0'],
      ].sort(),
    );

    // show of the older one says so, with its fix: not "upgrade stepbox", not a damaged store.
    const shown = await runMain(home, ['show', older], { STEPBOX_LOG: 'error' });
    expect(shown.code).toBe(3);
    expect(shown.err).toMatch(/made by an older stepbox version/);
    expect(shown.err).toMatch(/open it with the stepbox version that wrote it/);
    expect(shown.err).not.toMatch(/upgrade stepbox|re-import/);
  });
});
