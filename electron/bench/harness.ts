import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { statSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Task } from '../../shared/task.js';
import { median } from '../../shared/median.js';
import { startEpisode } from '../engine/harness/episode-factory.js';
import { sandboxConfig } from '../engine/sandbox/limits.js';
import type { SnapshotManifest } from '../engine/sandbox/snapshot-store.js';
import { openEngine } from '../engine/open-engine.js';
import type { BenchSection } from './bench-section.js';
import { dockerPrerequisite } from './docker-prerequisite.js';

const STEPS = 200;
/** The workspace the episode starts from: 40 source-like files of 2 KiB (80 KiB). */
const FILES = 40;

function benchTask(): Task {
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`src/module_${i}.py`] = `# module ${i}\n${'x = 1\n'.repeat(340)}`;
  return Task.parse({
    name: 'bench-harness',
    goal: 'Edit notes and run commands, 200 times.',
    workspace: { files },
    max_steps: STEPS,
    timeouts: { tools: { default: 30 }, step_soft: 20, step_hard: 60, episode: 3600 },
    verifier: { command: 'test -f notes/n1.txt' },
  });
}

/** A 200-step script cycling through the tools an agent uses most: write, run, read, remember. */
function benchScript(): string {
  const lines: string[] = [];
  const call = (i: number, name: string, args: Record<string, unknown>) =>
    JSON.stringify({
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    });
  for (let i = 1; i < STEPS; i++) {
    switch (i % 4) {
      case 1:
        lines.push(call(i, 'write_file', { path: `notes/n${i % 10}.txt`, content: `note ${i}\n` }));
        break;
      case 2:
        lines.push(call(i, 'execute_shell', { command: `wc -l src/module_${i % FILES}.py` }));
        break;
      case 3:
        lines.push(call(i, 'read_file', { path: `notes/n${(i - 2) % 10}.txt` }));
        break;
      default:
        lines.push(call(i, 'memory_write', { key: `k${i % 5}`, value: { step: i } }));
    }
  }
  lines.push(JSON.stringify({ content: 'done' }));
  return lines.join('\n') + '\n';
}

function dirBytes(path: string): number {
  let n = 0;
  for (const name of readdirSync(path, { withFileTypes: true })) {
    const p = join(path, name.name);
    n += name.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

/** What a full-state dump of one step costs: every workspace file, the memory and the conversation, serialized. */
function naiveDumpBytes(manifest: SnapshotManifest, memoryJson: number, conversationJson: number): number {
  let bytes = memoryJson + conversationJson;
  for (const e of manifest.entries) bytes += JSON.stringify({ path: e.path, mode: e.mode }).length + e.size;
  return bytes;
}

/**
 * `harness`: a 200-step scripted episode on Docker through the warm pool.
 * harness_overhead_ms = step wall time − tool − snapshot − fsync (median over steps);
 * trace_fsync_ms apart; trace_bytes_per_step = (trace + snapshot store growth) / steps
 * vs naive_dump_bytes_per_step (workspace + memory + conversation serialized each step).
 */
export const section: BenchSection = {
  name: 'harness',

  prerequisite: dockerPrerequisite,

  async run(log) {
    const dir = await mkdtemp(join(tmpdir(), 'stepbox-bench-harness-'));
    const engine = openEngine({ home: join(dir, 'home'), pool: 1 });
    try {
      const task = benchTask();
      await engine.prewarm(sandboxConfig(task.sandbox));
      const scriptPath = join(dir, 'agent.jsonl');
      await writeFile(scriptPath, benchScript());
      const store = engine.store;
      log(`harness: ${STEPS}-step scripted episode on Docker (warm pool)`);
      const perStep: { manifest: string; memory: number; conversation: number }[] = [];
      const started = performance.now();
      const c = await startEpisode({
        task,
        agentSpec: `scripted:${scriptPath}`,
        ...(await engine.episodeEnv()),
      });
      c.onEvent((e) => {
        if (e.type === 'snapshot' && e.step > 0)
          perStep.push({
            manifest: e.manifest,
            memory: JSON.stringify(c.memory()).length,
            conversation: JSON.stringify(c.messages()).length,
          });
      });
      await c.run();
      const episodeMs = performance.now() - started;
      const end = c.ended();
      if (end?.status !== 'succeeded')
        throw new Error(`the bench episode ended ${end?.status}: ${end?.end_reason}`);
      await c.dispose();
      const timings = c.timings();
      const overhead = timings.map((t) => Math.max(0, t.wallMs - t.toolMs - t.snapshotMs - t.fsyncMs));
      const info = store.resolve(c.branch);
      const tracePath = store.currentTracePath(info);
      const traceRaw = tracePath.endsWith('.gz')
        ? gunzipSync(readFileSync(tracePath)).length
        : statSync(tracePath).size;
      const snapshotBytes = dirBytes(join(store.episodeDir(c.episode), 'snapshots'));
      const snapshots = store.snapshots(c.episode);
      let naive = 0;
      for (const s of perStep)
        naive += naiveDumpBytes(await snapshots.getManifest(s.manifest), s.memory, s.conversation);
      const steps = timings.length;
      const traceBytesPerStep = (traceRaw + snapshotBytes) / steps;
      const naivePerStep = naive / perStep.length;
      return {
        harness_overhead_ms: median(overhead),
        harness_overhead_p90_ms: [...overhead].sort((a, b) => a - b)[Math.floor(overhead.length * 0.9)],
        harness_step_ms: median(timings.map((t) => t.wallMs)),
        harness_tool_ms: median(timings.map((t) => t.toolMs)),
        harness_snapshot_ms: median(timings.map((t) => t.snapshotMs)),
        trace_fsync_ms: median(timings.map((t) => t.fsyncMs)),
        trace_bytes_per_step: traceBytesPerStep,
        trace_gz_bytes_per_step: statSync(tracePath).size / steps,
        naive_dump_bytes_per_step: naivePerStep,
        trace_size_ratio: traceBytesPerStep / naivePerStep,
        episode_200_ms: episodeMs,
        episode_200_steps: steps,
        harness_backend: 'docker+warm-pool',
      };
    } finally {
      await engine.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
