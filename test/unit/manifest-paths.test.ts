import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manifestProblem } from '../../electron/engine/sandbox/manifest.js';
import type { ManifestEntry } from '../../electron/engine/sandbox/snapshot-store.js';
import { exportBundle, importBundle } from '../../electron/engine/trace/bundle.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode } from '../support/traces.js';

const H = 'a'.repeat(64);
const file = (path: string): ManifestEntry => ({ path, type: 'file', mode: 0o644, size: 1, hash: H });
const dir = (path: string): ManifestEntry => ({ path, type: 'dir', mode: 0o755, size: 0 });
const check = (...entries: ManifestEntry[]) => manifestProblem({ treeHash: H, entries });

describe('manifest paths are confined to /workspace', () => {
  it('accepts plain relative paths below listed directories', () => {
    expect(check(dir('a'), dir('a/b'), file('a/b/c.txt'), file('.hidden'), file('x..y'))).toBeUndefined();
  });

  it('checks each manifest object on its own: one found sound does not vouch for another with the same entries and one more', () => {
    const sound = { treeHash: H, entries: [dir('a'), file('a/b')] };
    expect(manifestProblem(sound)).toBeUndefined();
    expect(manifestProblem(sound)).toBeUndefined();
    expect(manifestProblem({ ...sound, entries: [...sound.entries, file('../x')] })).toMatch(
      /not a plain relative path/,
    );
  });

  const bad: [string, ManifestEntry[], RegExp][] = [
    ['a parent reference', [file('../home/agent/.bashrc')], /not a plain relative path/],
    ['a parent reference inside', [dir('a'), file('a/../../etc/x')], /not a plain relative path/],
    ['an absolute path', [file('/etc/passwd')], /absolute path/],
    ['a `.` part', [dir('a'), file('a/./b')], /not a plain relative path/],
    ['an empty part', [dir('a'), file('a//b')], /not a plain relative path/],
    ['a trailing slash', [dir('a/')], /not a plain relative path/],
    ['an empty path', [file('')], /not a plain relative path/],
    ['a NUL', [file('a\0b')], /not a plain relative path/],
    [
      'an entry below a symlink',
      [{ path: 'l', type: 'symlink', mode: 0o777, size: 12, target: '/home/agent' }, file('l/.bashrc')],
      /below "l", a symlink in the manifest/,
    ],
    ['an entry below a file', [file('f'), file('f/g')], /below "f", a file in the manifest/],
    [
      'an entry deep below a symlink',
      [{ path: 'l', type: 'symlink', mode: 0o777, size: 1, target: '/' }, dir('l/a'), file('l/a/b')],
      /below "l", a symlink/,
    ],
    ['a duplicate', [file('a'), file('a')], /listed twice/],
    ['a file without a hash', [{ path: 'a', type: 'file', mode: 0o644, size: 1 }], /no sha256/],
    ['an unknown type', [{ path: 'a', type: 'fifo' as 'file', mode: 0o644, size: 0 }], /unknown type/],
    ['a bad mode', [{ ...file('a'), mode: 0o17777 }], /invalid mode/],
  ];
  for (const [what, entries, why] of bad)
    it(`refuses ${what}, naming the entry`, () => {
      expect(check(...entries)).toMatch(why);
    });
});

describe('bundle import refuses a manifest that leaves /workspace', () => {
  let tmp: string;
  beforeEach(() => {
    tmp = mkdtempSync(join(tmpdir(), 'stepbox-manifest-'));
  });
  afterEach(() => rmSync(tmp, { recursive: true, force: true }));

  it('names the manifest and the entry, and imports nothing', async () => {
    const a = openEpisodeStore(join(tmp, 'a'));
    const ep = await writeSampleEpisode(a, {
      steps: 2,
      script: [{ files: { 'x.txt': 'x' } }, { final: 'done' }],
    });
    const bundle = join(tmp, 'ep.stepbox');
    await exportBundle(a, ep.episode, bundle);
    const lines = gunzipSync(readFileSync(bundle)).toString('utf8').split('\n');
    const i = lines.findIndex((l) => l.includes('"kind":"manifest"') && l.includes('x.txt'));
    lines[i] = lines[i].replace('"x.txt"', '"../home/agent/.bashrc"');
    writeFileSync(bundle, gzipSync(lines.join('\n')));
    const b = openEpisodeStore(join(tmp, 'b'));
    await expect(importBundle(b, bundle)).rejects.toThrow(
      /manifest [0-9a-f]+ is unsafe: entry "\.\.\/home\/agent\/\.bashrc" is not a plain relative path/,
    );
    expect(existsSync(b.episodeDir(ep.episode))).toBe(false);
  });
});
