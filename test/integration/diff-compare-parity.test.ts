// `stepbox diff --json` and the window's compare (POST /api/episode.compare on the web
// server, what the renderer's client calls) are one comparison in the engine: over the same
// store they give the same pairs, verdicts, per-pair files, first divergence and end
// files, and name the return and the final reward alike.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forkEpisode, startEpisode } from '../../electron/engine/harness/index.js';
import type { EpisodeRunner } from '../../electron/engine/harness/episode-runner.js';
import { startServer, type RunningServer } from '../../electron/server.js';
import type { Task } from '../../shared/task.js';
import { parseJsonOutput, runCli } from '../support/cli.js';
import { describeDocker, useDockerHome } from '../support/docker.js';
import { call, final, script, task } from '../support/harness.js';

const docker = useDockerHome();

const fileTask: Task = task({
  name: 'diff-parity',
  goal: 'Write a.txt, b.txt and c.txt',
  tools: ['execute_shell', 'read_file', 'write_file', 'list_dir'],
  verifier: { command: 'test -f a.txt' },
  max_steps: 10,
});

const write = (path: string, content: string) => call('write_file', { path, content });

/** One pair as both sides can be compared: steps, verdict and the differing files with their status. */
interface Pair {
  readonly a_step: number | null;
  readonly b_step: number | null;
  readonly verdict: string;
  /** What differs, for a different result (`stdout differs`): the same words on both sides. */
  readonly differs?: readonly string[];
  readonly workspace: readonly { path: string; status: string }[];
  /** The workspaces as a whole: a side with no step is said as such, never `same`. */
  readonly workspace_verdict?: string;
}

interface Outcome {
  readonly steps: number;
  readonly return: number | null;
  readonly final_reward: number | null;
}

describeDocker('stepbox diff and the window compare agree', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({ port: 0, home: docker.env.home });
  });
  afterAll(async () => {
    await server?.close();
  });

  async function windowCompare(a: string, b: string) {
    const res = await fetch(new URL(`/api/episode.compare?token=${server.token}`, server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ a, b }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as
      | {
          ok: true;
          value: {
            rows: Pair[];
            diverged_at: number | null;
            diverged_row: number | null;
            files_differ: string[];
            a: Outcome;
            b: Outcome;
          };
        }
      | { ok: false; error: { code: string; message: string } };
    if (!body.ok) throw new Error(`episode.compare: ${body.error.code}: ${body.error.message}`);
    return body.value;
  }

  async function cliDiff(a: string, b: string) {
    const run = await runCli(['diff', a, b, '--json'], {
      env: { STEPBOX_HOME: docker.env.home },
      timeoutMs: 120_000,
    });
    return parseJsonOutput<{
      pairs: Pair[];
      diverged_at: number | null;
      diverged_pair: number | null;
      files_differ: string[];
      a: Outcome;
      b: Outcome;
    }>(run);
  }

  const pairOf = (p: Pair): Pair => ({
    a_step: p.a_step,
    b_step: p.b_step,
    verdict: p.verdict,
    differs: p.differs ?? [],
    workspace: p.workspace.map((f) => ({ path: f.path, status: f.status })),
    workspace_verdict: p.workspace_verdict,
  });
  const outcomeOf = (o: Outcome): Outcome => ({
    steps: o.steps,
    return: o.return,
    final_reward: o.final_reward,
  });

  /** Runs a scripted episode (or a fork of `from` at step 1) to its end; `first` acts before the run. */
  async function scripted(
    name: string,
    lines: readonly object[],
    from?: string,
    first?: (r: EpisodeRunner) => Promise<void>,
  ): Promise<EpisodeRunner> {
    const agentSpec = `scripted:${script(docker.env.dir, name, lines)}`;
    const r = from
      ? await forkEpisode({ id: from, at: 1, agentSpec, ...docker.episode })
      : await startEpisode({ task: fileTask, agentSpec, ...docker.episode });
    try {
      await first?.(r);
      await r.run();
    } finally {
      await r.dispose();
    }
    return r;
  }

  it('gives the same alignment pair by pair over a parent and its forks', async () => {
    const [a, b, c] = [write('a.txt', 'a'), write('b.txt', 'b'), write('c.txt', 'c')];
    const parent = await scripted('parity-parent.jsonl', [a, b, c, final('done')]);
    // A fork at 1 that inserts a step: every verdict but `different_result`, which the
    // next fork has (the agent saw an overridden result at step 2).
    const inserted = await scripted(
      'parity-fork.jsonl',
      [write('x.txt', 'x'), b, c, final('done')],
      parent.episode,
    );
    const overridden = await scripted(
      'parity-override.jsonl',
      [b, c, final('done')],
      parent.episode,
      async (r) => {
        await r.step();
        r.overrideLastResult({ ok: true, stdout: 'disk is full, stop', duration_ms: 0, bytes: 18 });
      },
    );

    const verdicts = new Set<string>();
    for (const [a, b] of [
      [parent.episode, inserted.branch],
      [inserted.branch, parent.episode],
      [parent.episode, overridden.branch],
    ]) {
      const [cli, window] = [await cliDiff(a, b), await windowCompare(a, b)];
      expect(window.rows.length, `${a} vs ${b}`).toBe(cli.pairs.length);
      cli.pairs.forEach((p, i) =>
        expect(pairOf(window.rows[i]), `${a} vs ${b}, pair ${i}`).toEqual(pairOf(p)),
      );
      expect(window.diverged_at).toBe(cli.diverged_at);
      expect(window.diverged_row).toBe(cli.diverged_pair);
      expect(window.files_differ).toEqual(cli.files_differ);
      expect(outcomeOf(window.a)).toEqual(outcomeOf(cli.a));
      expect(outcomeOf(window.b)).toEqual(outcomeOf(cli.b));
      for (const p of cli.pairs) verdicts.add(p.verdict);
    }
    // The store exercised every verdict, and the files of a differing pair are named.
    expect([...verdicts].sort()).toEqual(['different_action', 'different_files', 'different_result', 'same']);
    const first = await cliDiff(parent.episode, inserted.branch);
    expect(first.pairs).toEqual([
      { a_step: 1, b_step: 1, verdict: 'same', differs: [], workspace: [], workspace_verdict: 'same' },
      {
        a_step: null,
        b_step: 2,
        verdict: 'different_action',
        differs: [],
        workspace: [],
        workspace_verdict: 'only_b',
      },
      ...[2, 3, 4].map((k) => ({
        a_step: k,
        b_step: k + 1,
        verdict: 'different_files',
        differs: [],
        workspace: [{ path: 'x.txt', status: 'only_b' }],
        workspace_verdict: 'differs',
      })),
    ]);
    // The overridden result is named for what differs, not just "different result".
    const overriddenPairs = (await cliDiff(parent.episode, overridden.branch)).pairs;
    expect(overriddenPairs.find((p) => p.verdict === 'different_result')?.differs).toContain(
      'stdout differs',
    );
    // A verifier that passed: the final reward is its weight; the return is discounted.
    expect(first.a.final_reward).toBe(1);
    expect(first.a.return).not.toBeNull();
  }, 300_000);
});
