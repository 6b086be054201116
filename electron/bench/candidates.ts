import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from '../../shared/median.js';
import { Task } from '../../shared/task.js';
import { stageSandboxes } from '../engine/candidates/staged-sandboxes.js';
import { tryCandidates, type CandidateSource } from '../engine/candidates/try-candidates.js';
import { startEpisode } from '../engine/harness/episode-factory.js';
import { lastSnapshot } from '../engine/trace/lineage.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import { openEngine } from '../engine/open-engine.js';
import type { BenchSection } from './bench-section.js';
import { dockerPrerequisite } from './docker-prerequisite.js';

/** Candidates per round, the step they follow, rounds (the median is reported), and the bar. */
const N = 8;
const AT = 5;
const ROUNDS = 5;
const TARGET_MS = 1500;
/** The workspace: 1,000 files of 10 KiB (10 MB), written by the task's setup. */
const FILES = 1000;
const FILE_BYTES = 10 * 1024;

function benchTask(): Task {
  return Task.parse({
    name: 'bench-candidates',
    goal: 'Try eight next actions at step 5 of a 10 MB workspace.',
    workspace: {
      setup: [
        `python3 -c "import os; os.makedirs('data', exist_ok=True); [open('data/f%04d.txt' % i, 'w').write(('%04d' % i) * ${FILE_BYTES / 4}) for i in range(${FILES})]"`,
      ],
    },
    sandbox: { limits: { memory: '1g', disk: '1g' } },
    max_steps: 20,
    verifier: { command: 'test -d data' },
  });
}

const call = (i: number, name: string, args: Record<string, unknown>) => ({
  content: null,
  tool_calls: [{ id: `c${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});

/**
 * `candidates`: eight candidate next actions at step 5 of a 1,000-file / 10 MB
 * workspace, each forked from snapshot 5 in its own warm sandbox (pooled and staged at
 * step 5, as the window stages them while a person writes candidates), run one step and
 * diffed (changed files read back from the snapshot store): the time until all
 * eight are ready to show, median of 5 rounds; next to one cold sandbox start measured
 * in the same run.
 */
export const section: BenchSection = {
  name: 'candidates',

  prerequisite: dockerPrerequisite,

  async run(log) {
    const dir = await mkdtemp(join(tmpdir(), 'stepbox-bench-candidates-'));
    const engine = openEngine({ home: join(dir, 'home'), pool: N });
    try {
      const provider = await engine.provider();
      const task = benchTask();
      const config = sandboxConfig(task.sandbox);
      const coldStarted = performance.now();
      await (await provider.create(config)).destroy();
      const coldMs = performance.now() - coldStarted;
      const scriptPath = join(dir, 'agent.jsonl');
      const lines = Array.from({ length: AT }, (_, i) =>
        call(i, 'execute_shell', { command: `echo step ${i + 1} >> log.txt && wc -c data/f000${i}.txt` }),
      );
      await writeFile(
        scriptPath,
        [...lines, { content: 'done' }].map((l) => JSON.stringify(l)).join('\n') + '\n',
      );
      const store = engine.store;
      const env = await engine.episodeEnv();
      log(`candidates: a ${AT}-step episode over ${FILES} files (${(FILES * FILE_BYTES) / 1e6} MB)`);
      const parent = await startEpisode({ task, agentSpec: `scripted:${scriptPath}`, ...env });
      for (let k = 0; k < AT; k++) await parent.step();
      await parent.dispose();
      const sources: CandidateSource[] = Array.from({ length: N }, (_, i) => ({
        kind: 'given',
        origin: 'file',
        message: call(i, 'write_file', { path: `data/f000${i}.txt`, content: `candidate ${i}\n` }),
      }));
      const snapshots = store.snapshots(parent.episode);
      const ready: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        await engine.prewarm(config);
        // Warm as the window keeps them while a person writes candidates: pooled, and holding snapshot K.
        const staged = await stageSandboxes({
          store,
          id: parent.episode,
          at: AT,
          count: N,
          supply: env.supply,
        });
        log(
          `round ${r + 1}/${ROUNDS}: ${N} candidates at step ${AT} (${staged.ready()} sandboxes staged at step ${AT})`,
        );
        const started = performance.now();
        const set = await tryCandidates({ ...env, supply: staged, id: parent.episode, at: AT, sources });
        // Diffed as the window shows them: each changed file's content read back after the step.
        await Promise.all(
          set.candidates.map(async (c) => {
            const snap = lastSnapshot(store.readTrace(store.resolve(c.branch)).events);
            if (!snap) throw new Error(`candidate ${c.index} has no snapshot`);
            const manifest = await snapshots.getManifest(snap.manifest);
            for (const f of c.files_changed) {
              const entry = manifest.entries.find((e) => e.path === f.path);
              if (entry?.hash) await snapshots.getBlob(entry.hash);
            }
          }),
        );
        ready.push(performance.now() - started);
        if (new Set(set.candidates.map((c) => c.tree_hash)).size !== N)
          throw new Error('the candidates did not give eight different workspaces');
        await set.discard();
        await staged.close();
      }
      const readyMs = median(ready);
      return {
        candidates_ready_ms: readyMs,
        candidates_ready_max_ms: Math.max(...ready),
        candidates_target_ms: TARGET_MS,
        candidates_target_met: readyMs <= TARGET_MS,
        candidates_n: N,
        candidates_workspace_files: FILES,
        candidates_workspace_bytes: FILES * FILE_BYTES,
        candidates_cold_start_ms: coldMs,
      };
    } finally {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
