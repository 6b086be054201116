import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Task } from '../../shared/task.js';
import { startEpisode } from '../engine/harness/episode-factory.js';
import type { EpisodeRunner } from '../engine/harness/episode-runner.js';
import { openEngine } from '../engine/open-engine.js';
import { dockerPrerequisite } from './docker-prerequisite.js';

/** Steps in each background script: far more than a measurement lasts (it is stopped, not finished). */
const SCRIPT_STEPS = 20_000;

/** A busy but ordinary agent: write a file, run a command over it, read it back, over and over. */
function script(): string {
  const call = (i: number, name: string, args: Record<string, unknown>) =>
    JSON.stringify({
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    });
  const lines: string[] = [];
  for (let i = 1; i < SCRIPT_STEPS; i++) {
    if (i % 3 === 1)
      lines.push(call(i, 'write_file', { path: `n${i % 20}.txt`, content: `${i}\n`.repeat(200) }));
    else if (i % 3 === 2)
      lines.push(
        call(i, 'execute_shell', { command: `seq 1 20000 | sort -r | md5sum && wc -l n${(i - 1) % 20}.txt` }),
      );
    else lines.push(call(i, 'read_file', { path: `n${(i - 2) % 20}.txt` }));
  }
  lines.push(JSON.stringify({ content: 'done' }));
  return lines.join('\n') + '\n';
}

/** Episodes running in real sandboxes beside a measurement; `steps()` says how far they got. */
export interface BackgroundEpisodes {
  /** Steps taken so far by each episode (to prove they ran while something was measured). */
  steps(): number[];
  /** Stops the episodes (traces closed), destroys their sandboxes and removes their store. */
  stop(): Promise<void>;
}

/**
 * Starts `count` scripted episodes on Docker in a store of their own and returns once each
 * has taken its first step; or the reason they cannot run (no Docker, no image), for the
 * caller to report as a missing figure rather than measure without the load.
 */
export async function startBackgroundEpisodes(
  count: number,
  log: (message: string) => void,
): Promise<BackgroundEpisodes | { readonly missing: string }> {
  const docker = await dockerPrerequisite();
  if (docker !== null) return { missing: `no episodes could run beside it: ${docker}` };
  const dir = await mkdtemp(join(tmpdir(), 'stepbox-bench-load-'));
  const engine = openEngine({ home: join(dir, 'home'), pool: count });
  const runners: EpisodeRunner[] = [];
  const runs: Promise<unknown>[] = [];
  const stop = async () => {
    await Promise.all(runners.map((r) => r.stop().catch(() => undefined)));
    await Promise.allSettled(runs);
    await Promise.all(runners.map((r) => r.dispose().catch(() => undefined)));
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const task = Task.parse({
      name: 'bench-load',
      goal: 'Keep the machine busy as a real episode does.',
      workspace: { files: { 'README.md': 'load\n' } },
      max_steps: SCRIPT_STEPS,
      timeouts: { episode: 3600 },
    });
    const agentPath = join(dir, 'agent.jsonl');
    await writeFile(agentPath, script());
    for (let i = 0; i < count; i++) {
      const runner = await startEpisode({
        task,
        agentSpec: `scripted:${agentPath}`,
        ...(await engine.episodeEnv()),
      });
      runners.push(runner);
      runs.push(runner.run().catch((e: unknown) => log(`background episode ${i + 1}: ${String(e)}`)));
    }
    // Running means stepping: each has taken a step (a snapshot after step 1), or it failed to.
    const stepping = await Promise.race([
      Promise.all(
        runners.map(
          (r) =>
            new Promise<boolean>((resolve) => {
              if (r.currentStep() >= 1) return resolve(true);
              const off = r.onEvent((e) => {
                if ((e.type === 'snapshot' && e.step >= 1) || e.type === 'end') {
                  off();
                  resolve(e.type !== 'end');
                }
              });
            }),
        ),
      ).then((all) => all.every(Boolean)),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 120_000).unref()),
    ]);
    if (!stepping) {
      await stop();
      return { missing: 'the episodes beside it did not start stepping' };
    }
    log(`${count} episodes running beside it (${runners.map((r) => r.branch).join(', ')})`);
    return { steps: () => runners.map((r) => r.currentStep()), stop };
  } catch (e) {
    await stop();
    return {
      missing: `the episodes beside it could not start: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
}
