/**
 * A second process for trace/store tests, run through `runTraceChild` (test/support/
 * traces-process.ts). Modes:
 *   write <home>          create an episode and append steps forever, printing
 *                         `step <k> <tracePath>` after each committed step (killed by the test)
 *   index <home> <n>      index every branch of the store n times (concurrent index writers)
 *   open <home>           write a 2-step episode, leave its trace open, print `open <branch>`
 *                         and exit (a writer that is gone without closing)
 *   ended <home>          the same, but append the `end` event first (died before compressing)
 */
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { openIndex } from '../../electron/engine/trace/episode-index.js';
import { writeSampleEpisode } from './traces.js';
import { MemorySnapshotStore } from '../../electron/engine/sandbox/memory-snapshot-store.js';

const [mode, home, arg] = process.argv.slice(2);

if (mode === 'open' || mode === 'ended') {
  const store = openEpisodeStore(home, { skipMarkInterrupted: true });
  const ep = await writeSampleEpisode(store, { steps: 2, end: null });
  if (mode === 'ended') {
    ep.writer.append({
      type: 'end',
      step: 2,
      source: 'harness',
      status: 'failed',
      end_reason: 'no_verifier',
      verifier: null,
    });
    ep.writer.commitStep();
  }
  process.stdout.write(`open ${ep.branch}\n`);
} else if (mode === 'write') {
  const store = openEpisodeStore(home, {
    skipMarkInterrupted: true,
    snapshotStore: () => new MemorySnapshotStore(),
  });
  const ep = await writeSampleEpisode(store, { steps: 2, end: null });
  const w = ep.writer;
  process.stdout.write(`step 2 ${w.path}\n`);
  for (let step = 3; ; step += 1) {
    // Big payloads make a kill mid-write likely; each step ends with its snapshot + fsync.
    w.append({ type: 'model_output', step, source: 'agent', raw: 'x'.repeat(64 * 1024), usage: null });
    w.append({
      type: 'snapshot',
      step,
      source: 'harness',
      tree_hash: `h${step}`,
      manifest: `m${step}`,
      changed: [],
      bytes: 0,
    });
    w.commitStep();
    process.stdout.write(`step ${step} ${w.path}\n`);
  }
} else if (mode === 'index') {
  const store = openEpisodeStore(home, { skipMarkInterrupted: true });
  for (let i = 0; i < Number(arg); i += 1) {
    const index = openIndex(home);
    index.rebuild(store);
    index.close();
  }
  process.stdout.write('done\n');
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exitCode = 2;
}
