import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fileVersion, versionKey } from '../../electron/engine/trace/file-version.js';
import { memoryValueForms, openIndex } from '../../electron/engine/trace/episode-index.js';
import { openEpisodeStore, type DiskEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { exited, runTraceChild, waitForLine } from '../support/traces-process.js';
import { writeSampleEpisode, writeSampleFork, type SampleEpisode } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-index-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** Two episodes and a fork covering every indexed kind of fact. */
async function corpus(
  store: DiskEpisodeStore,
): Promise<{ weather: SampleEpisode; fork: SampleEpisode; tests: SampleEpisode }> {
  const weather = await writeSampleEpisode(store, {
    task: 'weather',
    script: [
      {
        tool: 'lookup',
        args: { query: 'Beijing' },
        memory: { key: 'weather', before: 'rain', after: 'None', corruption: 'nullish_overwrite' },
      },
      {
        tool: 'lookup',
        args: { query: 'Beijing' },
        result: { ok: false, error: { code: 'timeout', message: 't/o' }, fallback: true },
      },
      { inject: 'recommend an umbrella', final: 'Take an umbrella.' },
    ],
  });
  const fork = await writeSampleFork(store, weather, {
    at: 1,
    script: [{ args: { command: 'false' }, result: { exit_code: 1 } }, { final: 'ok' }],
    end: { status: 'failed', end_reason: 'verifier_failed', verifier: { success: false, exit_code: 1 } },
  });
  const tests = await writeSampleEpisode(store, {
    task: 'fix-tests',
    script: [
      { args: { command: 'python3 test_x.py' }, result: { exit_code: 1, stderr: 'boom' } },
      {
        tool: 'write_file',
        args: { path: 'x.py', content: 'ok' },
        memory: { key: 'weather', after: 42, writer: 'memory_write' },
      },
      { parseError: '{oops', error: { code: 'model_error', message: 'retry' } },
      { final: 'fixed' },
    ],
  });
  return { weather, fork, tests };
}

describe('episode index', () => {
  it('indexes each branch as it closes; a rebuild from the traces gives the same index', async () => {
    const store = openEpisodeStore(home);
    const { weather, fork, tests } = await corpus(store);
    const index = openIndex(home);
    index.replaceFlags(weather.branch, [
      { rule: 'memory_corruption', step: 1, severity: 'error', message: 'None over rain' },
    ]);
    const incremental = index.dump();
    expect(incremental.branches.map((b) => b.id).sort()).toEqual(
      [weather.branch, fork.branch, tests.branch].sort(),
    );
    expect(incremental.steps.filter((s) => s.branch === tests.branch)).toHaveLength(4);

    // Rebuilt a minute later (each version settled since the close indexed it): the same rows.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    expect(index.rebuild(store)).toBe(3);
    vi.useRealTimers();
    expect(index.dump()).toEqual(incremental);
    // Idempotent: indexing a branch again changes nothing.
    index.indexBranch(store.readTrace(store.resolve(tests.branch)));
    expect(index.dump()).toEqual(incremental);
    // A fresh index file rebuilt from nothing equals it too (flags aside: they come from `check`).
    rmSync(join(home, 'index.sqlite'));
    rmSync(join(home, 'index.sqlite-wal'), { force: true });
    rmSync(join(home, 'index.sqlite-shm'), { force: true });
    index.close();
    const fresh = openIndex(home);
    fresh.rebuild(store);
    expect({ ...fresh.dump(), flags: [] }).toEqual({ ...incremental, flags: [] });
    fresh.close();
  });

  it('lists episodes newest first with branch status, steps, return, final reward and flags', async () => {
    const store = openEpisodeStore(home);
    const { weather, fork, tests } = await corpus(store);
    const index = openIndex(home);
    index.replaceFlags(fork.branch, [
      { rule: 'loop', step: 2, severity: 'warning', message: 'x' },
      { rule: 'early_stop', step: null, severity: 'warning', message: 'y' },
    ]);
    const eps = index.listEpisodes();
    expect(eps.map((e) => e.id)).toEqual([tests.episode, weather.episode]);
    const w = eps[1];
    expect(w.task).toBe('weather');
    expect(w.branches.map((b) => [b.id, b.status, b.steps, b.flags])).toEqual([
      [weather.branch, 'succeeded', 3, 0],
      [fork.branch, 'failed', 3, 2],
    ]);
    // The return of its rewards (0.1 a step, γ 0.99, the final 1 folded into step 3), not the end's `return: 1`.
    expect(w.branches[0]).toMatchObject({ final_reward: 1, unfinished: 0, gamma: 0.99 });
    expect(w.branches[0].return).toBeCloseTo(0.1 + 0.99 * 0.1 + 0.99 ** 2 * 1.1, 10);
    // The failed fork recorded no final reward: its return is its three step rewards', named apart.
    expect(w.branches[1]).toMatchObject({ final_reward: null });
    expect(w.branches[1].return).toBeCloseTo(0.1 + 0.99 * 0.1 + 0.99 ** 2 * 0.1, 10);
    expect(w.branches[1]).toMatchObject({ parent: weather.branch, fork_step: 1, verifier_success: false });
    index.close();
  });

  it('searches by tool, error code, flag and memory key/value, ANDing filters', async () => {
    const store = openEpisodeStore(home);
    const { weather, fork, tests } = await corpus(store);
    const index = openIndex(home);
    index.replaceFlags(tests.branch, [{ rule: 'loop', step: 1, severity: 'warning', message: 'same call' }]);
    const ids = (q: Parameters<typeof index.search>[0]) =>
      index
        .search(q)
        .map((m) => m.branch)
        .sort();

    expect(ids({ tool: 'lookup' })).toEqual([weather.branch]);
    expect(ids({ tool: 'execute_shell' })).toEqual([fork.branch, tests.branch].sort());
    expect(ids({ error: 'timeout' })).toEqual([weather.branch]);
    expect(ids({ error: 'model_error' })).toEqual([tests.branch]);
    expect(ids({ error: 'parse_error' })).toEqual([tests.branch]);
    expect(ids({ flag: 'loop' })).toEqual([tests.branch]);
    expect(ids({ memory: { key: 'weather' } })).toEqual([weather.branch, tests.branch].sort());
    expect(ids({ memory: { key: 'weather', value: 'None' } })).toEqual([weather.branch]);
    expect(ids({ memory: { key: 'weather', value: '42' } })).toEqual([tests.branch]);
    expect(ids({ memory: { key: 'weather', value: 'sunny' } })).toEqual([]);
    expect(ids({ tool: 'execute_shell', flag: 'loop' })).toEqual([tests.branch]);
    expect(ids({ tool: 'lookup', flag: 'loop' })).toEqual([]);
    const [hit] = index.search({ error: 'timeout' });
    expect(hit).toMatchObject({ episode: weather.episode, task: 'weather', status: 'succeeded' });
    expect(hit.hits).toEqual([{ filter: 'error', step: 2, detail: 'lookup: timeout' }]);
    index.close();
  });

  it('finds timeouts the agent never saw: masked by a fallback or by an override', async () => {
    const store = openEpisodeStore(home);
    const timeout = { ok: false, error: { code: 'timeout' as const, message: 'lookup did not finish' } };
    const masked = await writeSampleEpisode(store, {
      task: 'masked',
      script: [
        {
          tool: 'lookup',
          args: { q: 'x' },
          result: { ok: true, stdout: 'None', fallback: true },
          real: timeout,
        },
        {
          tool: 'lookup',
          args: { q: 'y' },
          result: timeout,
          override: { ok: true, error: undefined, stdout: 'sunny' },
        },
        { final: 'done' },
      ],
    });
    const index = openIndex(home);
    index.refresh(store);
    const [hit] = index.search({ error: 'timeout' });
    expect(hit.branch).toBe(masked.branch);
    expect(hit.hits.map((h) => h.step)).toEqual([1, 2]);
    index.close();
  });

  it('matches --memory values as JSON and as plain strings', () => {
    expect(memoryValueForms('None')).toEqual(['"None"']);
    expect(memoryValueForms('null').sort()).toEqual(['"null"', 'null']);
    expect(memoryValueForms('{"b":1,"a":2}')).toContain('{"a":2,"b":1}');
  });

  it('refresh picks up traces written or removed behind its back', async () => {
    const store = openEpisodeStore(home, { onBranchClosed: () => undefined });
    const index = openIndex(home);
    const open = await writeSampleEpisode(store, { steps: 2, end: null });
    expect(index.refresh(store)).toBe(1);
    expect(index.branch(open.branch)).toMatchObject({ status: 'running', steps: 2 });
    expect(index.refresh(store)).toBe(0);
    await open.writer.close({ step: 2, status: 'succeeded', end_reason: 'final_answer', verifier: null });
    expect(index.refresh(store)).toBe(1);
    expect(index.branch(open.branch)?.status).toBe('succeeded');
    store.removeEpisode(open.episode);
    index.refresh(store);
    expect(index.branch(open.branch)).toBeNull();
    expect(index.listEpisodes()).toEqual([]);
    index.close();
  });

  it('a trace indexed before its version settled is not read again once it settles, its bytes unchanged (unsettled-reads.ts)', async () => {
    const store = openEpisodeStore(home, { onBranchClosed: () => undefined });
    const index = openIndex(home);
    const ep = await writeSampleEpisode(store, { steps: 2 });
    expect(index.refresh(store)).toBe(1);
    // Two seconds on (file-version.ts's SETTLE_MS): the same bytes, so what was indexed stands.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
    try {
      expect(index.refresh(store)).toBe(0);
      // Under the name every process gives the settled file: one that did not read it before it
      // settled finds it indexed too (else the two would index it again in turn).
      const settled = fileVersion(store.currentTracePath(store.resolve(ep.branch)));
      const db = new Database(join(home, 'index.sqlite'), { readonly: true });
      const row = db.prepare('SELECT trace_version FROM branches WHERE id = ?').get(ep.branch) as {
        trace_version: string;
      };
      db.close();
      expect(settled?.settled).toBe(true);
      expect(row.trace_version).toBe(versionKey(settled!));
    } finally {
      vi.useRealTimers();
    }
    index.close();
  });

  it('two processes writing the index at once both succeed (WAL + busy timeout)', async () => {
    const store = openEpisodeStore(home);
    await corpus(store);
    const a = runTraceChild(['index', home, '8']);
    const b = runTraceChild(['index', home, '8']);
    // This process writes too, while they run.
    const index = openIndex(home);
    for (let i = 0; i < 30; i += 1)
      index.replaceFlags('x', [{ rule: 'r', step: i, severity: 'info', message: 'm' }]);
    await Promise.all([waitForLine(a, /^done$/, 30_000), waitForLine(b, /^done$/, 30_000)]);
    expect(await exited(a)).toBe(0);
    expect(await exited(b)).toBe(0);
    expect(index.dump().branches).toHaveLength(3);
    index.close();
  }, 90_000);
});
