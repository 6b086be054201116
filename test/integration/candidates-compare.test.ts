import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { candidateSources } from '../../electron/engine/candidates/candidate-sources.js';
import { readChoices } from '../../electron/engine/candidates/choice-log.js';
import { CANDIDATE_REJECTED, tryCandidates } from '../../electron/engine/candidates/try-candidates.js';
import { forkEpisode, readLineage, startEpisode } from '../../electron/engine/harness/index.js';
import type { SandboxSupply } from '../../electron/engine/sandbox/sandbox.js';
import { checkEpisode } from '../../shared/qa/check-episode.js';
import type { Task } from '../../shared/task.js';
import { parseJsonOutput, runCli } from '../support/cli.js';
import { describeDocker, useDockerHome } from '../support/docker.js';
import { call, final, script, task } from '../support/harness.js';

const docker = useDockerHome();

const write = (path: string, content: string) => call('write_file', { path, content });

const fileTask: Task = task({
  name: 'candidates-files',
  goal: 'Write a.txt, b.txt and c.txt',
  tools: ['execute_shell', 'read_file', 'write_file', 'list_dir'],
  verifier: { command: 'test -f a.txt' },
  max_steps: 10,
});

async function runScripted(lines: readonly object[], name: string) {
  const c = await startEpisode({
    task: fileTask,
    agentSpec: `scripted:${script(docker.env.dir, name, lines)}`,
    ...docker.episode,
  });
  try {
    await c.run();
  } finally {
    await c.dispose();
  }
  return c;
}

function cli(args: string[]) {
  return runCli(args, { env: { STEPBOX_HOME: docker.env.home }, timeoutMs: 240_000 });
}

describeDocker('candidates, step-aligned diff, live QA and preference pairs on Docker', () => {
  it('tries four candidates in parallel forks with four different workspaces; a pick continues one, the rest are rejected', async () => {
    const parent = await runScripted(
      [write('a.txt', 'a'), write('b.txt', 'b'), final('done')],
      'parent-cand.jsonl',
    );
    const file = script(
      docker.env.dir,
      'alternatives.jsonl',
      [0, 1, 2, 3].map((i) => write(`alt${i}.txt`, `candidate ${i}`)),
    );
    // Count sandboxes created before the first one was ready: parallel forks start together.
    let starting = 0;
    let startedBeforeFirstReady = 0;
    let firstReady = false;
    const counting: SandboxSupply = {
      acquire: async (config) => {
        starting++;
        if (!firstReady) startedBeforeFirstReady = starting;
        const box = await docker.supply.acquire(config);
        firstReady = true;
        return box;
      },
      release: (s) => docker.supply.release(s),
    };
    const { sources } = candidateSources({ agentKind: 'scripted', n: 0, file });
    const set = await tryCandidates({
      id: parent.episode,
      at: 1,
      sources,
      store: docker.env.store,
      parts: docker.env.parts,
      supply: counting,
    });
    expect(startedBeforeFirstReady).toBe(4);
    const hashes = set.candidates.map((c) => c.tree_hash);
    expect(new Set(hashes).size).toBe(4);
    expect(set.candidates.map((c) => c.files_changed)).toEqual(
      [0, 1, 2, 3].map((i) => [{ path: `alt${i}.txt`, change: 'added' }]),
    );
    expect(set.candidates.every((c) => c.result[0]?.ok === true && c.status === 'paused')).toBe(true);

    const chosen = await set.pick(2);
    try {
      await chosen.run();
      expect(chosen.ended()).toMatchObject({ status: 'succeeded', end_reason: 'final_answer' });
      // The episode continued on the chosen branch: its workspace holds the candidate's file.
      const events = readLineage(docker.env.store, docker.env.store.resolve(chosen.branch)).events;
      const writes = events.flatMap((e) => (e.type === 'tool_call' ? [String(e.arguments.path)] : []));
      expect(writes).toEqual(['a.txt', 'alt2.txt']);
    } finally {
      await chosen.dispose();
    }
    for (const c of set.candidates.filter((x) => x.index !== 2))
      expect(docker.env.store.readTrace(docker.env.store.resolve(c.branch)).end?.end_reason).toBe(
        CANDIDATE_REJECTED,
      );
    expect(readChoices(docker.env.store, parent.episode)).toMatchObject([
      { parent: parent.episode, step: 1, chosen: set.candidates[2].branch },
    ]);
  }, 300_000);

  it('stepbox candidates --json --pick prints the documented shape and continues the pick', async () => {
    const parent = await runScripted(
      [write('a.txt', 'a'), write('b.txt', 'b'), final('done')],
      'parent-cli.jsonl',
    );
    const file = script(docker.env.dir, 'two.jsonl', [
      write('x.txt', 'x'),
      call('execute_shell', { command: 'exit 3' }),
    ]);
    const run = await cli([
      'candidates',
      parent.episode,
      '--at',
      '1',
      '--from',
      file,
      '--pick',
      '0',
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const out = parseJsonOutput<{
      candidates: Record<string, unknown>[];
      picked: { status: string; branch: string };
    }>(run);
    expect(out.candidates).toHaveLength(2);
    for (const c of out.candidates)
      for (const key of ['branch', 'action', 'result', 'tree_hash', 'files_changed', 'reward', 'flags'])
        expect(c).toHaveProperty(key);
    expect(out.candidates[1]).toMatchObject({ result: [{ ok: true, exit_code: 3 }], files_changed: [] });
    expect(out.picked).toMatchObject({ status: 'succeeded', branch: out.candidates[0].branch });
    // `list` tells the two siblings apart as the window does: by number and action.
    const listed = parseJsonOutput<{
      episodes: { id: string; branches: { id: string; candidate: unknown }[] }[];
    }>(await cli(['list', '--json']));
    const branches = listed.episodes.find((e) => e.id === parent.episode)!.branches;
    for (const [i, c] of out.candidates.entries())
      expect(branches.find((b) => b.id === c.branch)?.candidate).toMatchObject({
        number: i + 1,
        action: expect.stringMatching(i === 0 ? /^write_file/ : /^execute_shell/),
      });
    expect(branches.find((b) => b.id === parent.episode)?.candidate).toBeNull();
    const text = (await cli(['list'])).stdout;
    expect(text).toMatch(/candidate 1 · write_file .*@1 of main/);
    expect(text).toMatch(/candidate 2 · execute_shell .*@1 of main/);
  }, 300_000);

  it('stepbox diff aligns around an inserted step and counts an override the agent saw', async () => {
    const a = await runScripted(
      [write('a.txt', 'a'), write('b.txt', 'b'), write('c.txt', 'c'), final('done')],
      'diff-a.jsonl',
    );
    const inserted = await forkEpisode({
      id: a.episode,
      at: 1,
      agentSpec: `scripted:${script(docker.env.dir, 'diff-b.jsonl', [write('x.txt', 'x'), write('b.txt', 'b'), write('c.txt', 'c'), final('done')])}`,
      ...docker.episode,
    });
    try {
      await inserted.run();
    } finally {
      await inserted.dispose();
    }
    const run = await cli(['diff', a.episode, inserted.branch, '--json']);
    expect(run.code).toBe(1);
    const diff = parseJsonOutput<{
      diverged_at: number | null;
      pairs: { a_step: number | null; b_step: number | null; verdict: string }[];
      files_differ: string[];
      a: { status: string; return: number | null; final_reward: number | null; flags: unknown[] };
      b: { status: string };
    }>(run);
    expect(diff.pairs.map(({ a_step, b_step, verdict }) => ({ a_step, b_step, verdict }))).toEqual([
      { a_step: 1, b_step: 1, verdict: 'same' },
      { a_step: null, b_step: 2, verdict: 'different_action' },
      { a_step: 2, b_step: 3, verdict: 'different_files' },
      { a_step: 3, b_step: 4, verdict: 'different_files' },
      { a_step: 4, b_step: 5, verdict: 'different_files' },
    ]);
    expect(diff.diverged_at).toBe(2);
    expect(diff.files_differ).toEqual(['x.txt']);
    expect(diff.a).toMatchObject({ status: 'succeeded', return: expect.any(Number), final_reward: 1 });
    expect(diff.b.status).toBe('succeeded');

    // Same actions and real results, but the agent saw an overridden result at step 2.
    const overridden = await forkEpisode({
      id: a.episode,
      at: 1,
      agentSpec: `scripted:${script(docker.env.dir, 'diff-c.jsonl', [write('b.txt', 'b'), write('c.txt', 'c'), final('done')])}`,
      ...docker.episode,
    });
    try {
      await overridden.step();
      overridden.overrideLastResult({ ok: true, stdout: 'disk is full, stop', duration_ms: 0, bytes: 18 });
      await overridden.run();
    } finally {
      await overridden.dispose();
    }
    const seen = parseJsonOutput<{ diverged_at: number | null; pairs: { verdict: string }[] }>(
      await cli(['diff', a.episode, overridden.branch, '--json']),
    );
    expect(seen.diverged_at).toBe(2);
    expect(seen.pairs.map((p) => p.verdict)).toEqual(['same', 'different_result', 'same', 'same']);
  }, 300_000);

  it('a live loop breakpoint pauses at the step where stepbox check later flags the loop', async () => {
    const ls = call('execute_shell', { command: 'ls -la' });
    const c = await startEpisode({
      task: fileTask,
      agentSpec: `scripted:${script(docker.env.dir, 'loop.jsonl', [write('a.txt', 'a'), ls, ls, ls, ls, final('done')])}`,
      ...docker.episode,
      breakpoints: [{ kind: 'qa', rule: 'loop' }],
    });
    let pausedAt: number;
    let message: string;
    try {
      const reason = await c.run();
      expect(reason.kind).toBe('breakpoint');
      pausedAt = c.currentStep();
      message = reason.message ?? '';
      while (!c.ended()) await c.run();
    } finally {
      await c.dispose();
    }
    const check = parseJsonOutput<{
      episodes: { flags: { rule: string; step: number; message: string }[] }[];
    }>(await cli(['check', c.episode, '--json']));
    const loop = check.episodes[0].flags.find((f) => f.rule === 'loop');
    expect(loop?.step).toBe(4);
    expect(pausedAt).toBe(loop?.step);
    // The same flag: live it counts the calls so far, the check the whole run (steps 2-5).
    expect(message).toMatch(/execute_shell called 3× with the same arguments .*\(steps 2, 3, 4\)/);
    expect(loop!.message).toMatch(/^execute_shell called 4× with the same arguments .*\(steps 2, 3, 4, 5\)$/);
    // The same flag from the trace alone, as the window's flag list computes it.
    const trace = docker.env.store.readTrace(docker.env.store.resolve(c.episode));
    expect(
      checkEpisode({ events: trace.events, torn: false }).flags.find((f) => f.rule === 'loop')?.step,
    ).toBe(4);
  }, 300_000);

  it('the DPO export of one choice and one corrected fork gives exactly two pairs with different sides', async () => {
    const parent = await runScripted(
      [write('a.txt', 'a'), write('b.txt', 'b'), write('c.txt', 'c'), final('done')],
      'dpo-parent.jsonl',
    );
    // A choice at step 1 between two different candidates.
    const file = script(docker.env.dir, 'dpo-alts.jsonl', [write('b.txt', 'better'), write('b.txt', 'b')]);
    const set = await tryCandidates({
      id: parent.episode,
      at: 1,
      sources: candidateSources({ agentKind: 'scripted', n: 0, file }).sources,
      ...docker.episode,
    });
    const chosen = await set.pick(0);
    await chosen.run();
    await chosen.dispose();
    // A fork a person corrected with an injection before step 3, which then decides differently.
    const corrected = await forkEpisode({
      id: parent.episode,
      at: 2,
      agentSpec: `scripted:${script(docker.env.dir, 'dpo-fix.jsonl', [write('c.txt', 'checked'), final('done')])}`,
      ...docker.episode,
    });
    corrected.inject('user', 'Write "checked" into c.txt');
    await corrected.run();
    await corrected.dispose();
    // A fork where a person only looked (ls in the terminal) is no correction, whatever follows.
    const peek = await forkEpisode({
      id: parent.episode,
      at: 2,
      agentSpec: `scripted:${script(docker.env.dir, 'dpo-peek.jsonl', [write('c.txt', 'other'), final('done')])}`,
      ...docker.episode,
    });
    peek.recordHumanCommand({ command: 'ls -la && cat a.txt | head', exit_code: 0 });
    await peek.run();
    await peek.dispose();

    const out = join(docker.env.dir, 'pairs.jsonl');
    const run = await cli(['export', parent.episode, '--format', 'dpo-jsonl', '--out', out, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    for (const l of lines)
      expect(JSON.stringify(l.preferred_output)).not.toBe(JSON.stringify(l.non_preferred_output));
    const meta = readFileSync(out.replace(/\.jsonl$/, '.meta.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(meta.map((m) => [m.reason, m.step, m.episode]).sort()).toEqual([
      ['choice', 2, parent.episode],
      ['corrected', 3, parent.episode],
    ]);
    expect(meta.find((m) => m.reason === 'corrected').preferred_branch).toBe(corrected.branch);
    expect(meta.every((m) => typeof m.why === 'string' && m.why.length > 0)).toBe(true);
  }, 400_000);
});
