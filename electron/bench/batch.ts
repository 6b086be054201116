import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Task } from '../../shared/task.js';
import { median } from '../../shared/median.js';
import { createBatch, runBatch } from '../engine/batch/batch-runner.js';
import { coldSupply, poolSupply, type SandboxSupply } from '../engine/sandbox/sandbox-supply.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import { openEngine } from '../engine/open-engine.js';
import type { BenchSection } from './bench-section.js';
import { dockerPrerequisite } from './docker-prerequisite.js';
import { figureOf, targetMet } from './figure.js';

/** Rounds of (pool batch, cold batch), interleaved so both see the same machine load. */
const ROUNDS = 3;
/** Episodes per batch and how many run at once. */
const EPISODES = 12;
const CONCURRENCY = 2;

/** A short, realistic episode: two tool calls, a final answer and a verifier. */
const TASK = {
  name: 'bench-batch',
  goal: 'Write ok to out.txt and show it',
  workspace: { files: { 'README.md': 'bench\n' } },
  verifier: { command: 'grep -qx ok out.txt' },
};
const AGENT = [
  {
    content: null,
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'write_file', arguments: '{"path":"out.txt","content":"ok\\n"}' },
      },
    ],
  },
  {
    content: null,
    tool_calls: [
      {
        id: 'c2',
        type: 'function',
        function: { name: 'execute_shell', arguments: '{"command":"cat out.txt"}' },
      },
    ],
  },
  { content: 'out.txt says ok' },
];

/** Section `batch`: episodes per minute of `stepbox batch` on the warm pool vs a new container per episode. */
export const section: BenchSection = {
  name: 'batch',

  prerequisite: dockerPrerequisite,

  async run(log) {
    const dir = await mkdtemp(join(tmpdir(), 'stepbox-bench-batch-'));
    const home = join(dir, 'home');
    const engine = openEngine({ home, pool: CONCURRENCY });
    try {
      const pool = await engine.supply();
      const provider = await engine.provider();
      const taskPath = join(dir, 'task.json');
      const agentPath = join(dir, 'agent.jsonl');
      await writeFile(taskPath, JSON.stringify(TASK));
      await writeFile(agentPath, AGENT.map((l) => JSON.stringify(l)).join('\n') + '\n');
      const task = Task.parse(TASK);
      const store = engine.store;
      // The pool is long-lived in a real batch: warm it once, outside the timings.
      await engine.prewarm(sandboxConfig(task.sandbox));
      const measure = async (label: string, supply: SandboxSupply): Promise<number> => {
        const { dir: out, batch } = createBatch({
          dir: join(dir, `${label}-${Date.now()}`),
          home,
          tasks: [{ path: taskPath, task }],
          agent: `scripted:${agentPath}`,
          episodes: EPISODES,
          concurrency: CONCURRENCY,
        });
        const t0 = performance.now();
        await runBatch({ dir: out, batch, store, parts: engine.parts, supply });
        const ms = performance.now() - t0;
        const bad = batch.slots.filter((s) => s.status !== 'succeeded');
        if (bad.length)
          throw new Error(`${label} batch: ${bad.length} episode(s) did not succeed (${bad[0].end_reason})`);
        return (EPISODES * 60_000) / ms;
      };
      const pooled: number[] = [];
      const cold: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        log(
          `round ${r + 1}/${ROUNDS}: ${EPISODES} episodes on the warm pool, then ${EPISODES} cold (concurrency ${CONCURRENCY})`,
        );
        pooled.push(await measure('pool', poolSupply(pool)));
        await engine.prewarm(sandboxConfig(task.sandbox));
        cold.push(await measure('cold', coldSupply(provider)));
      }
      const pool_epm = median(pooled);
      const cold_epm = median(cold);
      const ratio = figureOf(
        cold_epm > 0 ? pool_epm / cold_epm : null,
        'batch_ratio: the cold batch measured 0',
      );
      return {
        batch_pool_epm: pool_epm,
        batch_cold_epm: cold_epm,
        batch_ratio: ratio.value,
        ...(ratio.value === null ? { batch_ratio_missing: ratio.reason } : {}),
        batch_ratio_target_met: targetMet(ratio, (v) => v >= 4),
        batch_episodes_per_run: EPISODES,
        batch_concurrency: CONCURRENCY,
      };
    } finally {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
