import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  EpisodeMeta,
  openEpisodeStore,
  StoreError,
  stepboxHome,
} from '../../electron/engine/trace/episode-store.js';
import { currentProcessIdentity, isProcessGone } from '../../electron/engine/process-identity.js';
import { exited, runTraceChild, waitForLine } from '../support/traces-process.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-home-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as StoreError).code;
  }
  return null;
};

describe('episode store', () => {
  it('defaults to $STEPBOX_HOME, else ~/.stepbox', () => {
    expect(stepboxHome({ STEPBOX_HOME: home })).toBe(home);
    expect(stepboxHome({})).toMatch(/\.stepbox$/);
  });

  it('lays out one folder per episode: meta.json, branches/<id>.jsonl.gz, snapshots/', async () => {
    const store = openEpisodeStore(home);
    const ep = await writeSampleEpisode(store, { steps: 3, task: 'fix-tests' });
    expect(ep.episode).toMatch(/^ep-\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(ep.branch).toBe(ep.episode);
    const dir = join(home, 'episodes', ep.episode);
    const meta = EpisodeMeta.parse(JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')));
    expect(meta).toMatchObject({ episode: ep.episode, task: 'fix-tests', agent: 'scripted:agent.jsonl' });
    expect(meta.writer.pid).toBe(process.pid);
    expect(existsSync(join(dir, 'branches', `${ep.episode}.jsonl.gz`))).toBe(true);
    expect(existsSync(join(dir, 'branches', `${ep.episode}.jsonl`))).toBe(false);
    expect(existsSync(join(dir, 'snapshots', 'manifests', `${ep.manifests[3]}.json`))).toBe(true);
    const trace = store.readTrace(store.resolve(ep.episode));
    expect(trace.header).toMatchObject({
      seq: 0,
      schema: 'stepbox.trace/1',
      episode: ep.episode,
      branch: ep.branch,
    });
    expect(trace.header.writer).toEqual(currentProcessIdentity());
    expect(trace.end?.status).toBe('succeeded');
    const manifest = await store.snapshots(ep.episode).getManifest(ep.manifests[2]);
    expect(manifest.entries.map((e) => e.path)).toEqual(['README.md', 'step-1.txt', 'step-2.txt']);
  });

  it('resolves episodes and branches by full id or unique prefix', async () => {
    const store = openEpisodeStore(home);
    const a = await writeSampleEpisode(store, { steps: 3 });
    const fork = await writeSampleFork(store, a, { at: 1, steps: 2 });
    const b = await writeSampleEpisode(store, { steps: 2 });
    expect(fork.branch).toMatch(/^b-\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(store.resolve(a.episode).branch).toBe(a.episode);
    expect(store.resolve(fork.branch)).toMatchObject({
      episode: a.episode,
      parentBranch: a.episode,
      forkStep: 1,
    });
    expect(store.resolve(fork.branch.slice(0, -2)).branch).toBe(fork.branch);
    expect(store.resolve(b.episode.slice(0, b.episode.length - 1)).branch).toBe(b.episode);
    expect(store.listBranches(a.episode).map((x) => x.branch)).toEqual([a.episode, fork.branch]);
    expect(codeOf(() => store.resolve('ep-'))).toBe('conflict');
    expect(codeOf(() => store.resolve('ep-19990101'))).toBe('not_found');
    expect(codeOf(() => store.resolve('../etc'))).toBe('invalid_input');
    // The fork's trace starts at its own step; steps up to the fork count as complete.
    const ft = store.readTrace(store.resolve(fork.branch));
    expect(ft.header).toMatchObject({ parent_branch: a.episode, fork_step: 1 });
    expect(ft.events.filter((e) => e.type === 'action').map((e) => e.step)).toEqual([2, 3]);
  });

  it('a branch id once listed is resolved from its own episode, not every episode, and a branch gone is looked for again', async () => {
    const store = openEpisodeStore(home);
    const a = await writeSampleEpisode(store, { steps: 2 });
    const fork = await writeSampleFork(store, a, { at: 1, steps: 1 });
    for (let i = 0; i < 3; i++) await writeSampleEpisode(store, { steps: 1 });
    expect(store.resolve(fork.branch).episode).toBe(a.episode);
    // Every episode folder and meta.json, newest first, was read until the fork was met, on
    // every call that named it (20 ms for a fork of the oldest of 300 episodes).
    const listed = vi.spyOn(store, 'listEpisodes');
    const read = vi.spyOn(store, 'meta');
    expect(store.resolve(fork.branch)).toMatchObject({ episode: a.episode, forkStep: 1 });
    expect(store.resolve(a.episode).branch).toBe(a.episode);
    expect(listed).not.toHaveBeenCalled();
    expect(read.mock.calls.every(([episode]) => episode === a.episode)).toBe(true);
    // Gone from there: looked for everywhere, and not found.
    rmSync(store.resolve(fork.branch).tracePath);
    expect(codeOf(() => store.resolve(fork.branch))).toBe('not_found');
    rmSync(store.episodeDir(a.episode), { recursive: true });
    expect(codeOf(() => store.resolve(a.episode))).toBe('not_found');
    expect(listed).toHaveBeenCalled();
  });

  it('markInterrupted closes a trace whose writer is gone and leaves a live writer alone', async () => {
    const child = runTraceChild(['open', home]);
    const [, deadBranch] = await waitForLine(child, /^open (\S+)$/);
    expect(await exited(child)).toBe(0);
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    const alive = await writeSampleEpisode(store, { steps: 1, end: null });

    const deadHeader = store.readTrace(store.resolve(deadBranch)).header;
    expect(isProcessGone(deadHeader.writer as never, 'gone')).toBe(true);
    expect(isProcessGone(currentProcessIdentity(), 'gone')).toBe(false);

    expect(store.markInterrupted()).toBe(1);
    const dead = store.resolve(deadBranch);
    expect(dead.closed).toBe(true);
    const closed = store.readTrace(dead);
    expect(closed.end).toMatchObject({
      status: 'interrupted',
      end_reason: 'process_killed',
      step: 2,
      verifier: null,
    });
    expect(closed.end?.seq).toBe(closed.events.at(-2)!.seq + 1);

    expect(store.resolve(alive.branch).closed).toBe(false);
    expect(store.readTrace(store.resolve(alive.branch)).end).toBeNull();
    // Idempotent: nothing more to do, and the live writer can still finish normally.
    expect(store.markInterrupted()).toBe(0);
    await alive.writer.close({ step: 1, status: 'failed', end_reason: 'no_verifier', verifier: null });
    expect(store.readTrace(store.resolve(alive.branch)).end?.status).toBe('failed');
  }, 90_000);

  it('markInterrupted only compresses a trace whose writer died after writing its end', async () => {
    const child = runTraceChild(['ended', home]);
    const [, branch] = await waitForLine(child, /^open (\S+)$/);
    expect(await exited(child)).toBe(0);
    const store = openEpisodeStore(home, { skipMarkInterrupted: true });
    expect(store.resolve(branch).closed).toBe(false);
    expect(store.markInterrupted()).toBe(0);
    const b = store.resolve(branch);
    expect(b.closed).toBe(true);
    const trace = store.readTrace(b);
    expect(trace.end).toMatchObject({ status: 'failed', end_reason: 'no_verifier' });
    expect(trace.events.filter((e) => e.type === 'end')).toHaveLength(1);
  }, 90_000);

  it('refuses a fork of a branch the episode does not have', async () => {
    const store = openEpisodeStore(home);
    const a = await writeSampleEpisode(store, { steps: 1 });
    expect(() =>
      store.createBranch(a.episode, 'b-nope', 0, store.readTrace(store.resolve(a.episode)).header as never),
    ).toThrow(StoreError);
  });
});

describe('damaged store folders', () => {
  it('one episode with a broken meta.json does not break resolve, sweeps or the index', async () => {
    const { writeFileSync } = await import('node:fs');
    const { openIndex } = await import('../../electron/engine/trace/episode-index.js');
    const store = openEpisodeStore(home);
    const good = await writeSampleEpisode(store, { steps: 1 });
    const bad = await writeSampleEpisode(store, { steps: 1 });
    writeFileSync(join(home, 'episodes', bad.episode, 'meta.json'), '{broken');
    expect(store.resolve(good.episode).branch).toBe(good.episode);
    // A prefix lookup scans every episode, the broken one included.
    expect(codeOf(() => store.resolve('ep-1999'))).toBe('not_found');
    expect(store.markInterrupted()).toBe(0);
    const index = openIndex(home);
    expect(index.rebuild(store)).toBe(1);
    index.close();
  });
});
