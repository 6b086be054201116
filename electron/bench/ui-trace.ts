import { SANDBOX_IMAGE } from '../../shared/constants.js';
import { discountedReturn } from '../../shared/rewards.js';
import { DEFAULT_GAMMA } from '../../shared/task.js';
import { treeHashText } from '../../shared/tree-hash.js';
import { openEngine } from '../engine/open-engine.js';
import { sha256Hex } from '../engine/sha256.js';

/** A long recorded episode for the UI: its ids and how many steps it has. */
export interface LongTrace {
  readonly episode: string;
  readonly branch: string;
  readonly steps: number;
}

/** Steps between fsyncs: the writer's per-step commit would make 10,000 steps take minutes on a busy disk. */
const COMMIT_EVERY = 500;

/**
 * Writes a recorded episode of `steps` shell steps (plus reward components, a few
 * injected and overridden steps, a final answer) through the real episode store, so
 * the web mode lists and opens it like any other. Every step's snapshot points at one
 * shared manifest: the UI benchmark measures the window, not the snapshot store.
 */
export async function writeLongTrace(home: string, steps: number, task = 'long-trace'): Promise<LongTrace> {
  const { store } = openEngine({ home, sweep: false });
  const { episode, branch, writer } = store.createEpisode({
    task: { name: task, goal: `A ${steps}-step recorded episode for the UI`, max_steps: steps },
    task_path: null,
    agent: { spec: 'scripted:long.jsonl', kind: 'scripted' },
    image: SANDBOX_IMAGE,
    created: Date.now(),
    parent_branch: null,
    fork_step: null,
  });
  const snaps = store.snapshots(episode);
  const content = Buffer.from('counter\n');
  const hash = sha256Hex(content);
  await snaps.putBlob(hash, content);
  const entries = [{ path: 'counter.txt', type: 'file' as const, mode: 0o644, size: content.length, hash }];
  const treeHash = sha256Hex(treeHashText(entries));
  const manifest = await snaps.putManifest({ treeHash, entries });
  const snapshot = (step: number) =>
    writer.append({
      type: 'snapshot',
      step,
      source: 'harness',
      tree_hash: treeHash,
      manifest,
      changed: [],
      bytes: 0,
    });

  snapshot(0);
  writer.commitStep();
  const rewards: number[] = [];
  for (let k = 1; k <= steps; k++) {
    if (k % 97 === 0)
      writer.append({ type: 'injected', step: k, source: 'injected', role: 'user', content: `hint ${k}` });
    if (k === steps) {
      const out = writer.append({ type: 'model_output', step: k, source: 'agent', raw: 'done', usage: null });
      writer.append({
        type: 'action',
        step: k,
        source: 'agent',
        cause: out.seq,
        calls: [],
        final: 'All done.',
      });
    } else {
      const command = `echo step ${k} >> counter.txt && tail -n 1 counter.txt`;
      const raw = JSON.stringify({ name: 'execute_shell', arguments: { command } });
      const out = writer.append({ type: 'model_output', step: k, source: 'agent', raw, usage: null });
      const call_id = `call_${k}`;
      writer.append({
        type: 'action',
        step: k,
        source: 'agent',
        cause: out.seq,
        calls: [{ id: call_id, name: 'execute_shell', arguments: { command } }],
        final: null,
      });
      const call = writer.append({
        type: 'tool_call',
        step: k,
        source: 'agent',
        call_id,
        name: 'execute_shell',
        arguments: { command },
      });
      const exit = k % 13 === 0 ? 1 : 0;
      const stdout = `step ${k}\n`;
      writer.append({
        type: 'tool_result',
        step: k,
        source: 'environment',
        cause: call.seq,
        call_id,
        name: 'execute_shell',
        result: {
          ok: true,
          exit_code: exit,
          stdout,
          stderr: exit ? 'warning: odd step\n' : '',
          duration_ms: 3 + (k % 7),
          bytes: stdout.length,
        },
      });
    }
    const total = 0.1 + (k % 10) / 20 - (k % 13 === 0 ? 0.2 : 0);
    rewards.push(total);
    writer.append({
      type: 'reward',
      step: k,
      source: 'harness',
      components: { format: 0.1, progress: (k % 10) / 20, penalty: k % 13 === 0 ? -0.2 : 0 },
      total,
      final: false,
    });
    snapshot(k);
    if (k % COMMIT_EVERY === 0) writer.commitStep();
  }
  writer.commitStep();
  await writer.close({
    status: 'succeeded',
    end_reason: 'final_answer',
    verifier: null,
    steps,
    // The return of the rewards above (it said 1 beside rewards worth ~30: the window believed it).
    return: discountedReturn(rewards, DEFAULT_GAMMA),
    step: steps,
  });
  return { episode, branch, steps };
}
