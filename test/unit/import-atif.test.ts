// ATIF in: a trajectory from another harness (or stepbox's own export) becomes a
// read-only episode that show, search and check read; hostile or invalid files get a
// clear usage error naming what is wrong, and nothing is written.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../support/cli.js';
import { atifTrajectory } from '../../electron/engine/export/atif.js';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { AtifTrajectory } from '../../shared/atif.js';
import { QaTrace, sh } from '../support/qa-traces.js';

// In-process CLI runs open the store and index: slow on a loaded machine, never a hang.
vi.setConfig({ testTimeout: 60_000 });

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-atif-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const cli = (...argv: string[]) => runMain(home, argv);

/** A trajectory as Harbor's Terminus-2 might write it: plain-text observations, metrics. */
const HARBOR = {
  schema_version: 'ATIF-v1.6',
  session_id: 'tb-hello-world-1',
  agent: { name: 'terminus-2', version: '2.0.0', model_name: 'openai/gpt-5' },
  steps: [
    { step_id: 1, timestamp: '2026-01-01T00:00:00Z', source: 'system', message: 'You are a shell agent.' },
    {
      step_id: 2,
      timestamp: '2026-01-01T00:00:01Z',
      source: 'user',
      message: 'Create hello.txt containing hi.',
    },
    {
      step_id: 3,
      timestamp: '2026-01-01T00:00:02Z',
      source: 'agent',
      model_name: 'openai/gpt-5',
      message: "I'll write the file.",
      tool_calls: [
        { tool_call_id: 'call_1', function_name: 'bash', arguments: { keystrokes: 'echo hi > hello.txt\n' } },
      ],
      observation: { results: [{ source_call_id: 'call_1', content: '$ echo hi > hello.txt' }] },
      metrics: { prompt_tokens: 120, completion_tokens: 30, cost_usd: 0.001 },
    },
    {
      step_id: 4,
      timestamp: '2026-01-01T00:00:03Z',
      source: 'agent',
      message: 'Done: hello.txt holds hi.',
      metrics: { prompt_tokens: 160, completion_tokens: 10 },
    },
  ],
  final_metrics: { total_prompt_tokens: 280, total_completion_tokens: 40, total_steps: 4 },
};

describe('stepbox import-atif', () => {
  it('imports a Harbor trajectory that show, search and check read', async () => {
    const file = join(home, 'trajectory.json');
    writeFileSync(file, JSON.stringify(HARBOR));
    const r = await cli('import-atif', file, '--json');
    expect(r.code, r.err).toBe(0);
    const [imported] = (JSON.parse(r.out) as { episodes: { episode: string; steps: number }[] }).episodes;
    expect(imported.steps).toBe(2);
    const show = await cli('show', imported.episode, '--json');
    expect(show.code, show.err).toBe(0);
    const shown = JSON.parse(show.out) as {
      task: string;
      steps: { step: number; kind: string; calls: unknown[] }[];
    };
    expect(shown.task).toBe('tb-hello-world-1');
    expect(shown.steps.map((s) => s.kind)).toEqual(['tool', 'final']);
    const search = await cli('search', '--tool', 'bash', '--json');
    expect(JSON.parse(search.out).matches.map((m: { episode: string }) => m.episode)).toEqual([
      imported.episode,
    ]);
    const check = await cli('check', imported.episode, '--json');
    expect([0, 1]).toContain(check.code);
    expect(JSON.parse(check.out).episodes[0].episode).toBe(imported.episode);
    const store = openEpisodeStore(home);
    const trace = store.readTrace(store.resolve(imported.episode));
    expect(trace.header.agent).toMatchObject({ kind: 'atif', name: 'terminus-2', model: 'openai/gpt-5' });
    expect(
      trace.events.filter((e) => e.type === 'injected').map((e) => (e as { content: string }).content),
    ).toEqual(['You are a shell agent.']);
    const result = trace.events.find((e) => e.type === 'tool_result') as { result: { stdout: string } };
    expect(result.result.stdout).toBe('$ echo hi > hello.txt');
  });

  it(
    "round-trips stepbox's own export: status, results and steps come back",
    { timeout: 30_000 },
    async () => {
      const t = new QaTrace(undefined, { episode: 'ep-rt' })
        .step({ calls: [sh('python3 test_x.py', { ok: true, exit_code: 1, stdout: 'FAIL' } as never)] })
        .step({ final: 'gave up' })
        .end('failed', { success: false, exit_code: 1 });
      const file = join(home, 'rt.atif.jsonl');
      writeFileSync(file, JSON.stringify(atifTrajectory(t.events())) + '\n');
      const r = await cli('import-atif', file, '--json');
      expect(r.code, r.err).toBe(0);
      const episode = JSON.parse(r.out).episodes[0].episode as string;
      const store = openEpisodeStore(home);
      const trace = store.readTrace(store.resolve(episode));
      expect(trace.end).toMatchObject({ status: 'failed' });
      const result = trace.events.find((e) => e.type === 'tool_result') as {
        result: { exit_code: number; stdout: string };
      };
      expect(result.result).toMatchObject({ exit_code: 1, stdout: 'FAIL' });
    },
  );

  it(
    'refuses hostile or invalid files with a usage error naming the problem, writing nothing',
    { timeout: 60_000 },
    async () => {
      let nested: Record<string, unknown> = { ...HARBOR, trajectory_id: 'x', schema_version: 'bad' };
      for (let i = 0; i < 1500; i++)
        nested = { ...HARBOR, trajectory_id: `t${i}`, subagent_trajectories: [nested] };
      const cases: [string, string, RegExp][] = [
        ['not json', 'this is not json', /neither JSON nor JSON lines/],
        ['empty', '', /neither JSON nor JSON lines|it is empty/],
        ['wrong version', JSON.stringify({ ...HARBOR, schema_version: 'ATIF-v9' }), /schema_version/],
        ['unknown key', JSON.stringify({ ...HARBOR, evil: true }), /Unrecognized key|evil/],
        [
          'step ids out of order',
          JSON.stringify({ ...HARBOR, steps: [{ ...HARBOR.steps[1], step_id: 2 }] }),
          /ids run 1..n/,
        ],
        [
          'observation of an unknown call',
          JSON.stringify({
            ...HARBOR,
            steps: [
              {
                ...HARBOR.steps[2],
                step_id: 1,
                observation: { results: [{ source_call_id: 'ghost', content: 'x' }] },
              },
            ],
          }),
          /ghost/,
        ],
        [
          'tool calls on a user step',
          JSON.stringify({ ...HARBOR, steps: [{ ...HARBOR.steps[1], step_id: 1, tool_calls: [] }] }),
          /only agent steps/,
        ],
        [
          'arguments not an object',
          JSON.stringify({
            ...HARBOR,
            steps: [
              {
                ...HARBOR.steps[2],
                step_id: 1,
                tool_calls: [{ tool_call_id: 'a', function_name: 'f', arguments: 'rm -rf /' }],
                observation: null,
              },
            ],
          }),
          /arguments/,
        ],
        ['deeply nested subagents', JSON.stringify(nested), /not an ATIF trajectory/],
      ];
      for (const [name, content, message] of cases) {
        const file = join(home, 'bad.json');
        writeFileSync(file, content);
        const r = await cli('import-atif', file);
        expect(r.code, name).toBe(2);
        expect(r.err, name).toMatch(/is not an ATIF trajectory stepbox can import/);
        expect(r.err, name).toMatch(message);
        expect(r.err, name).not.toMatch(/internal error|\n\s+at /);
      }
      const episodes = join(home, 'episodes');
      expect(readdirSync(episodes).filter((n) => n.startsWith('ep-'))).toEqual([]);
    },
  );
});

describe('stepbox export --format atif as Harbor reads it', () => {
  /** A folder of `n` stepbox traces (episodes ep-a, ep-b, …), each a failed two-step episode. */
  function traces(n: number): string {
    const dir = join(home, 'traces');
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < n; i++) {
      const id = `ep-${'abc'[i]}`;
      const t = new QaTrace(undefined, { episode: id })
        .step({ calls: [sh(`echo ${i}`, { ok: true, exit_code: 0, stdout: `${i}` } as never)] })
        .step({ final: `done ${i}` })
        .end('failed', { success: false, exit_code: 1 });
      writeFileSync(
        join(dir, `${id}.jsonl`),
        t
          .events()
          .map((e) => JSON.stringify(e) + '\n')
          .join(''),
      );
    }
    return dir;
  }
  const importedStatuses = (out: string) => {
    const store = openEpisodeStore(home);
    return (JSON.parse(out) as { episodes: { episode: string }[] }).episodes.map(
      (e) => store.readTrace(store.resolve(e.episode)).end?.status,
    );
  };

  it('one branch → ONE ATIF JSON document (trajectory.json), which import-atif reads back', async () => {
    const out = join(home, 'trajectory.json');
    const r = await cli('export', traces(1), '--format', 'atif', '--out', out, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ out, count: 1, files: [out] });
    const doc = JSON.parse(readFileSync(out, 'utf8')) as unknown;
    expect(Array.isArray(doc)).toBe(false);
    expect(AtifTrajectory.safeParse(doc).success).toBe(true);
    expect(doc).toMatchObject({ session_id: 'ep-a', extra: { stepbox: { status: 'failed' } } });
    const back = await cli('import-atif', out, '--json');
    expect(back.code, back.err).toBe(0);
    expect(importedStatuses(back.out)).toEqual(['failed']);
  });

  it('several branches → a folder with one document per trajectory; import-atif takes the folder', async () => {
    const dir = join(home, 'atif-out');
    const r = await cli('export', traces(3), '--format', 'atif', '--out', dir, '--json');
    expect(r.code, r.err).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['ep-a.json', 'ep-b.json', 'ep-c.json']);
    for (const f of readdirSync(dir))
      expect(AtifTrajectory.safeParse(JSON.parse(readFileSync(join(dir, f), 'utf8'))).success).toBe(true);
    const back = await cli('import-atif', dir, '--json');
    expect(back.code, back.err).toBe(0);
    expect(importedStatuses(back.out)).toEqual(['failed', 'failed', 'failed']);
  });

  it('--jsonl writes one trajectory per line; a file named for several documents is a usage error', async () => {
    const src = traces(2);
    const jsonl = join(home, 'all.atif.jsonl');
    const r = await cli('export', src, '--format', 'atif', '--jsonl', '--out', jsonl);
    expect(r.code, r.err).toBe(0);
    expect(readFileSync(jsonl, 'utf8').trim().split('\n')).toHaveLength(2);
    const back = await cli('import-atif', jsonl, '--json');
    expect(importedStatuses(back.out)).toEqual(['failed', 'failed']);
    const bad = await cli('export', src, '--format', 'atif', '--out', join(home, 'one.json'));
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/name a folder, or pass --jsonl/);
    const notAtif = await cli('export', src, '--format', 'openai-jsonl', '--jsonl');
    expect(notAtif.code).toBe(2);
  });
});
