import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode } from '../support/traces.js';

// On a full disk `list` and `show` are what a person needs: they work read-only (the index
// opened read-only, or the traces read) instead of "cannot open the index: disk I/O error".
// A real full disk: a small tmpfs as $STEPBOX_HOME, filled up (needs root to mount).

const root = process.getuid?.() === 0;
let mount: string;
let episode: string;

describe.skipIf(!root && !process.env.CI)('a full disk', () => {
  beforeAll(async () => {
    mount = mkdtempSync(join(tmpdir(), 'stepbox-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mount]);
    const store = openEpisodeStore(mount);
    episode = (await writeSampleEpisode(store, { steps: 3 })).episode;
    // The index as a person's home has it, then not a byte left.
    expect((await runCli(['list'], { env: { STEPBOX_HOME: mount } })).code).toBe(0);
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${join(mount, 'filler')}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd stops at ENOSPC: that is the point
    }
  }, 60_000);
  afterAll(() => {
    if (!mount) return;
    execFileSync('umount', [mount]);
    rmSync(mount, { recursive: true, force: true });
  });

  it('list and show still work, read-only, and say the disk is full', async () => {
    const list = await runCli(['list'], { env: { STEPBOX_HOME: mount } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(episode);
    expect(list.stderr).toMatch(/read-only/);
    const show = await runCli(['show', episode], { env: { STEPBOX_HOME: mount } });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(episode);
    expect(`${list.stderr}${show.stderr}`).not.toMatch(/cannot open the index|internal error/);
  }, 60_000);

  it('with the index gone too, list reads the traces', async () => {
    rmSync(join(mount, 'index.sqlite'), { force: true });
    rmSync(join(mount, 'index.sqlite-wal'), { force: true });
    rmSync(join(mount, 'index.sqlite-shm'), { force: true });
    // Freed by the removal: fill again.
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${join(mount, 'filler2')}`, 'bs=4k'], { stdio: 'ignore' });
    } catch {
      // full again
    }
    const list = await runCli(['list'], { env: { STEPBOX_HOME: mount } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain(episode);
  }, 60_000);
});
