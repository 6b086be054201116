// Bad input and a damaged store are reported as what is wrong, where, and the fix —
// never `internal error` with a stack — and exit as the CLI contract says: 2 for the
// caller's mistake (an unknown id), 3 for a damaged store, with the command that fixes it.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../support/cli.js';
import { errorReport } from '../../electron/cli/error-report.js';
import { DiskSnapshotStore } from '../../electron/engine/sandbox/disk-snapshot-store.js';
import { SnapshotCorruptError } from '../../electron/engine/sandbox/snapshot-store.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode } from '../support/traces.js';

// In-process CLI runs open the store and index: slow on a loaded machine, never a hang.
vi.setConfig({ testTimeout: 60_000 });

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-errors-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const cli = (...argv: string[]) => runMain(home, argv, { STEPBOX_LOG: 'warn' });

/** No stack frames, no "internal error": the message a person can act on. */
function expectClean(err: string): void {
  expect(err).not.toMatch(/internal error/);
  expect(err).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/);
}

async function sample() {
  const store = openEpisodeStore(home);
  const ep = await writeSampleEpisode(store, { steps: 3 });
  const dir = store.episodeDir(ep.episode);
  const blobs = join(dir, 'snapshots', 'blobs');
  const prefix = readdirSync(blobs)[0];
  const blob = join(blobs, prefix, readdirSync(join(blobs, prefix))[0]);
  const manifest = join(dir, 'snapshots', 'manifests', `${ep.manifests[1]}.json`);
  const trace = store.currentTracePath(store.resolve(ep.episode));
  return { ep, dir, blob, manifest, trace };
}

describe('CLI error reports', () => {
  it('check on an unknown id is a usage error (2), not a flagged episode', async () => {
    const r = await cli('check', 'ep-nope');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no episode or branch matches "ep-nope"/);
    expectClean(r.err);
  });

  it('a damaged or missing blob, a damaged manifest and a bad manifest id name the file and the fix (exit 3)', async () => {
    const { ep, blob, manifest, trace } = await sample();
    const out = join(home, 'x.stepbox');
    const cases: [string, () => () => void, RegExp][] = [
      [
        'damaged blob',
        () => swap(blob, 'tampered'),
        /snapshot blob .* is damaged: its content hashes to [0-9a-f]{64}/,
      ],
      [
        'missing blob',
        () => swap(blob, null),
        /snapshot blob [0-9a-f]{64} cannot be read \(missing: .*blobs/,
      ],
      [
        'damaged manifest',
        () => swap(manifest, '{not json'),
        /snapshot manifest .*\.json is damaged: not JSON/,
      ],
      [
        'manifest edited',
        () => swap(manifest, JSON.stringify({ treeHash: 'x', entries: [] })),
        /is damaged: it hashes to/,
      ],
      [
        'bad manifest id in the trace',
        () => {
          const text = gunzipSync(readFileSync(trace)).toString();
          return swap(
            trace,
            gzipSync(text.replace(/"manifest":"[0-9a-f]{64}"/, '"manifest":"../../etc/passwd"')),
          );
        },
        /snapshot manifest id "..\/..\/etc\/passwd" is not a sha256 digest/,
      ],
    ];
    for (const [name, damage, message] of cases) {
      const undo = damage();
      const r = await cli('bundle', 'export', ep.episode, out);
      undo();
      expect(r.code, name).toBe(3);
      expect(r.err, name).toMatch(message);
      expect(r.err, name).toMatch(
        /Fix: re-import the episode from its bundle \(npx stepbox bundle import FILE --force\)/,
      );
      expectClean(r.err);
    }
    // Undone, the same export works.
    expect((await cli('bundle', 'export', ep.episode, out)).code).toBe(0);
  });

  it('a damaged trace or meta.json is named with the fix by show and check (exit 3)', async () => {
    const { ep, dir, trace } = await sample();
    for (const [name, file, content] of [
      ['torn gzip trace', trace, readFileSync(trace).subarray(0, 40)],
      ['meta not JSON', join(dir, 'meta.json'), '{bad'],
      ['meta of the wrong shape', join(dir, 'meta.json'), '{"episode": 1}'],
    ] as const) {
      const undo = swap(file, content);
      for (const command of ['show', 'check']) {
        const r = await cli(command, ep.episode);
        expect(r.code, `${command}: ${name}`).toBe(3);
        expect(r.err, `${command}: ${name}`).toContain(file);
        expect(r.err).toMatch(/Fix: re-import/);
        expectClean(r.err);
      }
      undo();
    }
  });

  it('a folder whose batch.json is not a batch is a usage error naming it', async () => {
    const dir = join(home, 'batch');
    mkdirSync(dir);
    writeFileSync(join(dir, 'batch.json'), '{oops');
    const r = await cli('check', dir);
    expect(r.code).toBe(2);
    expect(r.err).toContain(join(dir, 'batch.json'));
    expectClean(r.err);
  });

  it('maps every class of error once: caller 2, machine or store 3, bug 1 without a stack', () => {
    expect(errorReport(new SnapshotCorruptError('x')).exit).toBe(3);
    expect(errorReport(Object.assign(new Error('disk full'), { code: 'ENOSPC' }))).toMatchObject({
      exit: 3,
      fix: expect.stringMatching(/stepbox gc/),
    });
    expect(errorReport(Object.assign(new Error('x'), { code: 'not_found' })).exit).toBe(2);
    const bug = errorReport(new TypeError('undefined is not a function'));
    expect(bug.exit).toBe(1);
    expect(bug.message).toMatch(/a bug in stepbox; STEPBOX_LOG=debug prints the stack/);
    expect(bug.message).not.toMatch(/\n\s+at /);
  });

  it('the disk store checks what it hands back', async () => {
    const store = new DiskSnapshotStore(join(home, 'snaps'));
    await expect(store.getBlob('nothex')).rejects.toThrow(SnapshotCorruptError);
    await expect(store.getManifest('0'.repeat(64))).rejects.toThrow(/cannot be read \(missing: /);
  });
});

/** Replaces a file's content (null removes it); returns the undo. */
function swap(file: string, content: string | Buffer | null): () => void {
  const before = readFileSync(file);
  if (content === null) rmSync(file);
  else writeFileSync(file, content);
  return () => writeFileSync(file, before);
}
