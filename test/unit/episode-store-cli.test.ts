import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../electron/cli.js';
import { openIndex } from '../../electron/engine/trace/episode-index.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

let tmp: string;
beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'stepbox-cli-'));
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

async function cli(home: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c) => (out += c));
  stderr.on('data', (c) => (err += c));
  const code = await main(argv, {
    stdout,
    stderr,
    stdin: new PassThrough(),
    env: { ...process.env, STEPBOX_HOME: home },
  });
  return { code, out, err };
}

async function seeded(home: string) {
  const store = openEpisodeStore(home);
  const ep = await writeSampleEpisode(store, {
    task: 'weather',
    script: [
      {
        tool: 'lookup',
        args: { query: 'Beijing' },
        memory: { key: 'weather', before: 'rain', after: 'None', corruption: 'nullish_overwrite' },
      },
      {
        inject: 'recommend an umbrella',
        args: { command: 'date' },
        result: { ok: false, error: { code: 'timeout', message: 'too slow' } },
      },
      { args: { command: 'cat x' }, override: { exit_code: 1 }, human: 'ls -la' },
      { final: 'Take an umbrella.' },
    ],
  });
  const fork = await writeSampleFork(store, ep, {
    at: 2,
    script: [{ parseError: '{oops' }, { final: 'no' }],
  });
  const index = openIndex(home);
  index.replaceFlags(ep.branch, [
    { rule: 'memory_corruption', step: 1, severity: 'error', message: 'None over rain' },
  ]);
  index.close();
  return { ep, fork };
}

describe('stepbox list / show / search / reindex / gc / bundle', () => {
  it('list --json gives episodes with their branches', async () => {
    const home = join(tmp, 'h');
    const { ep, fork } = await seeded(home);
    const r = await cli(home, 'list', '--json');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.episodes).toHaveLength(1);
    expect(doc.episodes[0]).toMatchObject({
      id: ep.episode,
      task: 'weather',
      status: 'succeeded',
      steps: 4,
      flags: 1,
    });
    expect(doc.episodes[0].branches.map((b: { id: string }) => b.id)).toEqual([ep.branch, fork.branch]);
    expect(doc.episodes[0].branches[1]).toMatchObject({ parent: ep.branch, fork_step: 2, steps: 4 });
    const text = await cli(home, 'list');
    expect(text.out).toMatch(/EPISODE \/ BRANCH\s+TASK\s+STATUS/);
    expect(text.out).toContain(`└ ${fork.branch}`);
    expect(text.out).toMatch(new RegExp(`└ ${fork.branch}\\s+fork @2 of main`));
  });

  it('list and show count a step begun and never finished apart, and name the return with its γ', async () => {
    const home = join(tmp, 'h');
    const ep = await writeSampleEpisode(openEpisodeStore(home), {
      task: 'held',
      script: [
        { args: { command: 'ls' }, reward: { progress: 0.5 } },
        { args: { command: 'ls' }, reward: { progress: 0.5 } },
      ],
      end: null,
    });
    // Step 3 decided, held before it ran, and the episode stopped: a row with no snapshot.
    const out = ep.writer.append({ type: 'model_output', step: 3, source: 'agent', raw: 'ls', usage: null });
    ep.writer.append({
      type: 'action',
      step: 3,
      source: 'agent',
      cause: out.seq,
      calls: [{ id: 'c3', name: 'execute_shell', arguments: { command: 'ls' } }],
      final: null,
    });
    await ep.writer.close({
      status: 'interrupted',
      end_reason: 'stopped',
      verifier: null,
      steps: 2,
      return: 1,
      step: 3,
    });
    // The window's words (shared/format-outcome.ts): two steps done, one unfinished; 0.5 + 0.99 × 0.5.
    const list = await cli(home, 'list');
    expect(list.out).toMatch(/step 3 unfinished\s+0\.99 \(γ=0\.99\)/);
    const doc = JSON.parse((await cli(home, 'list', '--json')).out);
    expect(doc.episodes[0]).toMatchObject({ steps: 2, unfinished: 1, gamma: 0.99 });
    expect(doc.episodes[0].return).toBeCloseTo(0.995, 10);
    const show = await cli(home, 'show', ep.branch);
    expect(show.out).toMatch(/return 0\.99 \(γ=0\.99\) {2}final reward – {2}step 3 unfinished\n/);
    const j = JSON.parse((await cli(home, 'show', ep.branch, '--json')).out);
    expect(j).toMatchObject({ steps_done: 2, unfinished: 1, gamma: 0.99 });
  });

  it('list says a resumed branch was resumed, not forked', async () => {
    const home = join(tmp, 'h');
    const { ep } = await seeded(home);
    const resumed = await writeSampleFork(openEpisodeStore(home), ep, {
      at: 3,
      script: [{ final: 'yes' }],
      headerExtra: { resume_of: ep.branch },
    });
    const text = await cli(home, 'list');
    expect(text.out).toMatch(new RegExp(`└ ${resumed.branch}\\s+resumed @3 of main`));
    const doc = JSON.parse((await cli(home, 'list', '--json')).out);
    expect(doc.episodes[0].branches.find((b: { id: string }) => b.id === resumed.branch)).toMatchObject({
      resume_of: ep.branch,
      fork_step: 3,
    });
  });

  it('show prints a readable timeline and --json the documented shape', async () => {
    const home = join(tmp, 'h');
    const { ep, fork } = await seeded(home);
    const text = await cli(home, 'show', ep.episode.slice(0, -1));
    expect(text.code).toBe(0);
    expect(text.out).toContain('status succeeded (final_answer)');
    expect(text.out).toMatch(/step 1\s+lookup \{query: "Beijing"\}/);
    expect(text.out).toContain('memory weather: "rain" → "None" (by lookup)  ⚠ nullish_overwrite');
    expect(text.out).toContain('⚑ memory_corruption (error)');
    expect(text.out).toContain('[injected] user: recommend an umbrella');
    // Injected after its step's call and result (the agent reads it at the next step): printed
    // before the step's action, it read as read by that step.
    const block = text.out.slice(text.out.lastIndexOf('\nstep ', text.out.indexOf('[injected]')));
    expect(block.indexOf('[injected]')).toBeGreaterThan(block.indexOf('→ '));
    expect(text.out).toContain('→ execute_shell: error timeout');
    // Durations in the window's words (shared/format-duration.ts): '6.0 ms', never '6 ms' or a raw float.
    expect(text.out).toMatch(/→ \w+: exit 0 · \d\.\d ms/);
    expect(text.out).not.toMatch(/ · \d+\s+ms/);
    expect(text.out).toContain('[human] $ ls -la');
    expect(text.out).toContain('(overridden: agent saw this)');
    expect(text.out).toContain('final: "Take an umbrella."');

    const j = JSON.parse((await cli(home, 'show', fork.branch, '--json')).out);
    expect(j).toMatchObject({
      episode: ep.episode,
      branch: fork.branch,
      parent: ep.branch,
      fork_step: 2,
      status: 'succeeded',
    });
    expect(j.steps.map((s: { step: number; branch: string }) => [s.step, s.branch])).toEqual([
      [1, ep.branch],
      [2, ep.branch],
      [3, fork.branch],
      [4, fork.branch],
    ]);
    expect(j.steps[2]).toMatchObject({ kind: 'parse_error', action: 'parse error: not a tool call' });
    // Each call's output text, as the agent saw it (an override's shown result), besides its outcome.
    const parent = JSON.parse((await cli(home, 'show', ep.branch, '--json')).out);
    const resultAt = (step: number) =>
      parent.steps.find((s: { step: number }) => s.step === step).results[0] as Record<string, unknown>;
    expect(resultAt(2)).toMatchObject({ ok: false, error: { code: 'timeout', message: 'too slow' } });
    expect(resultAt(3)).toMatchObject({ exit_code: 1, overridden: true });
    expect(resultAt(1)).toHaveProperty('stdout');
    expect(j.steps[1].injected[0]).toMatchObject({ type: 'injected', source: 'injected' });
    expect(Object.keys(j.steps[0]).sort()).toEqual(
      expect.arrayContaining([
        'step',
        'action',
        'calls',
        'results',
        'injected',
        'memory_writes',
        'reward',
        'flags',
      ]),
    );
  });

  it('show of an unknown id is a usage error (exit 2)', async () => {
    const home = join(tmp, 'h');
    await seeded(home);
    const r = await cli(home, 'show', 'ep-1999');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/no episode or branch matches "ep-1999"/);
    expect((await cli(home, 'list', '--bogus')).code).toBe(2);
  });

  it('search filters by tool, error, flag and memory; no filter is a usage error', async () => {
    const home = join(tmp, 'h');
    const { ep, fork } = await seeded(home);
    const q = async (...a: string[]) =>
      JSON.parse((await cli(home, 'search', ...a, '--json')).out).matches.map(
        (m: { branch: string }) => m.branch,
      );
    // A fork's inherited steps 1..2 count for its parent only.
    expect(await q('--tool', 'lookup')).toEqual([ep.branch]);
    expect(await q('--tool', 'execute_shell')).toEqual([ep.branch]);
    expect(await q('--error', 'timeout')).toEqual([ep.branch]);
    expect(await q('--error', 'parse_error')).toEqual([fork.branch]);
    expect(await q('--flag', 'memory_corruption')).toEqual([ep.branch]);
    expect(await q('--memory', 'weather=None')).toEqual([ep.branch]);
    expect(await q('--memory', 'weather=null')).toEqual([]);
    expect((await cli(home, 'search')).code).toBe(2);
  });

  it('reindex rebuilds the index; gc --older-than removes old episodes', async () => {
    const home = join(tmp, 'h');
    await seeded(home);
    rmSync(join(home, 'index.sqlite'));
    const r = JSON.parse((await cli(home, 'reindex', '--json')).out);
    expect(r).toMatchObject({ branches: 2, episodes: 1 });
    const keep = JSON.parse((await cli(home, 'gc', '--older-than', '1d', '--json')).out);
    expect(keep).toMatchObject({ episodes: [], bytes_freed: 0, dry_run: false });
    const gone = JSON.parse((await cli(home, 'gc', '--older-than', '0s', '--json')).out);
    expect(gone.episodes).toHaveLength(1);
    expect(gone.bytes_freed).toBeGreaterThan(0);
    expect(JSON.parse((await cli(home, 'list', '--json')).out).episodes).toEqual([]);
    expect((await cli(home, 'gc', '--older-than', 'soon')).code).toBe(2);
  });

  it('bundle export then import into an empty home; a second import is refused without --force', async () => {
    const a = join(tmp, 'a');
    const b = join(tmp, 'b');
    const { ep } = await seeded(a);
    const file = join(tmp, 'ep.stepbox');
    const ex = await cli(a, 'bundle', 'export', ep.episode, file, '--json');
    expect(ex.code).toBe(0);
    expect(JSON.parse(ex.out)).toMatchObject({ episode: ep.episode, file });
    const im = await cli(b, 'bundle', 'import', file, '--json');
    expect(im.code).toBe(0);
    expect(JSON.parse(im.out).branches).toHaveLength(2);
    const shownA = JSON.parse((await cli(a, 'show', ep.episode, '--json')).out);
    const shownB = JSON.parse((await cli(b, 'show', ep.episode, '--json')).out);
    // Flags live in the index, not the bundle; everything else is the same.
    expect({ ...shownB, steps: shownB.steps.map((s: object) => ({ ...s, flags: [] })) }).toEqual({
      ...shownA,
      steps: shownA.steps.map((s: object) => ({ ...s, flags: [] })),
    });
    const again = await cli(b, 'bundle', 'import', file);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/already exists.*--force/);
    expect((await cli(b, 'bundle', 'import', file, '--force')).code).toBe(0);
  });
});
