import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../support/cli.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { breakLine, writeSampleEpisode, writeSampleFork } from '../support/traces.js';

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

describe('damaged traces: a corrupt fork, a trace damaged after it was indexed, a FIFO', () => {
  it('list names each with its branch, the line and the fix (exit 0); show on one says the same (exit 3, no stack)', async () => {
    home = mkdtempSync(join(tmpdir(), 'stepbox-damaged-'));
    const store = openEpisodeStore(home);
    const main = await writeSampleEpisode(store, { steps: 3, task: 'with-fork' });
    const fork = await writeSampleFork(store, main, { at: 1, steps: 2 });
    const later = await writeSampleEpisode(store, { steps: 2, task: 'damaged-later' });
    const piped = await writeSampleEpisode(store, { steps: 1, task: 'piped', end: null });
    piped.writer.abandon();
    const fifo = store.resolve(piped.branch).tracePath;
    unlinkSync(fifo);
    execFileSync('mkfifo', [fifo]);
    breakLine(store.resolve(fork.branch).tracePath, 3);
    // Indexed whole first; then a line is rewritten by hand.
    expect((await runMain(home, ['list'], { STEPBOX_LOG: 'error' })).out).toContain(later.episode);
    breakLine(store.resolve(later.branch).tracePath, 4);

    const text = await runMain(home, ['list'], { STEPBOX_LOG: 'error' });
    expect(text.code, text.err).toBe(0);
    const forkFile = store.resolve(fork.branch).tracePath;
    const laterFile = store.resolve(later.branch).tracePath;
    expect(text.out).toContain(
      `${main.episode} / ${fork.branch}: ${forkFile}: line 3 has type "tool_reslt", which is not a stepbox.trace/1 event (did you mean "tool_result"?)\n  Fix: re-import the episode from its bundle`,
    );
    expect(text.out).toContain(`${later.episode}: ${laterFile}: line 4 has type "tool_reslt"`);
    expect(text.out).toContain(`${piped.episode}: ${fifo} is a named pipe (FIFO), not a trace file\n  Fix: `);
    // The readable main branch is still listed; the damaged one is not listed as it was.
    const table = text.out.slice(0, text.out.indexOf('Not readable by this stepbox'));
    expect(table).toContain(main.episode);
    expect(table).not.toContain(later.episode);
    expect(table).not.toContain(fork.branch);

    const json = JSON.parse((await runMain(home, ['list', '--json'], { STEPBOX_LOG: 'error' })).out) as {
      unreadable: { id: string; branch: string; file: string; fix: string }[];
    };
    expect(json.unreadable.map((u) => [u.id, u.branch, u.file]).sort()).toEqual(
      [
        [main.episode, fork.branch, forkFile],
        [later.episode, later.branch, laterFile],
        [piped.episode, piped.branch, fifo],
      ].sort(),
    );

    for (const [id, words] of [
      [fork.branch, `${forkFile}: line 3 has type "tool_reslt"`],
      [later.episode, `${laterFile}: line 4 has type "tool_reslt"`],
      [piped.branch, `${fifo} is a named pipe (FIFO), not a trace file`],
    ]) {
      const shown = await runMain(home, ['show', id], { STEPBOX_LOG: 'error' });
      expect(shown.code, shown.err).toBe(3);
      expect(shown.err).toContain(`stepbox show: ${words}`);
      expect(shown.err).toMatch(/\nFix: /);
      expect(shown.err).not.toMatch(/internal error|\n\s+at /);
    }
  });
});
