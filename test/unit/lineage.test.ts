import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stepRowsOf } from '../../shared/contract/step-rows.js';
import { summarizeSteps } from '../../shared/step-summary.js';
import { branchTimeline } from '../../electron/engine/trace/branch-timeline.js';
import { openEngine } from '../../electron/engine/open-engine.js';
import { cutAtStep, readLineage, type LineageSource } from '../../electron/engine/trace/lineage.js';
import type { BranchInfo, ReadTrace } from '../../electron/engine/trace/trace-store.js';
import { readBranch } from '../../electron/services/branch-trace.js';
import { storeTracePort } from '../../electron/services/trace-port.js';
import { writeSampleEpisode, writeSampleFork } from '../support/traces.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'stepbox-lineage-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

/** A parent whose step 2 was recorded with a rollback inside it (hard timeout), forked at 2. */
async function forkAfterHardTimeout() {
  const engine = openEngine({ home });
  const store = engine.store;
  const parent = await writeSampleEpisode(store, {
    script: [
      { args: { command: 'echo 1' } },
      {
        args: { command: 'sleep 99' },
        result: { ok: true, exit_code: 0, stdout: 'cached', fallback: true },
        hardTimeout: { real: { exit_code: 137 } },
      },
      { args: { command: 'echo parent-3' } },
      { final: 'parent done' },
    ],
  });
  const fork = await writeSampleFork(store, parent, {
    at: 2,
    script: [{ args: { command: 'echo fork-3' } }, { final: 'fork done' }],
  });
  return { engine, store, parent, fork };
}

describe('readLineage: the one reader every view builds on', () => {
  it('window rows, `show` and the harness agree on a fork whose step K had a rollback inside it', async () => {
    const { engine, store, parent, fork } = await forkAfterHardTimeout();
    const info = store.resolve(fork.branch);
    const lineage = readLineage(store, info);

    // The harness: a fork at 2 continues from the events up to snapshot 2 of its lineage.
    const harness = summarizeSteps(cutAtStep(lineage.events, 4)).filter((s) => s.step >= 1);
    // `stepbox show`.
    const shown = branchTimeline(store, info).steps.filter((s) => s.step >= 1);
    // The window: the services' branch read and the shared rows.
    const rows = stepRowsOf(readBranch(storeTracePort(engine), fork.branch).events).filter(
      (r) => r.step >= 1,
    );
    await engine.close();

    const expected = [
      [1, 'echo 1'],
      [2, 'sleep 99'],
      [3, 'echo fork-3'],
      [4, 'fork done'],
    ];
    expect(rows.map((r) => [r.step, r.summary])).toEqual(expected);
    expect(shown.map((s) => [s.step, s.kind === 'final' ? s.final : s.calls[0].detail])).toEqual(expected);
    expect(harness.map((s) => [s.step, s.kind === 'final' ? s.final : s.calls[0].detail])).toEqual(expected);
    // Step 2 keeps its call and shows the real result beside the fallback the agent saw.
    // The hard timeout's restore came inside step 2 (mid-step); the fork's restore after it did not.
    expect(rows[1]).toMatchObject({ tools: ['execute_shell'], status: 'ok', snapshot: true, rollbacks: 1 });
    expect(rows[1].real).toBe('execute_shell: error timeout, exit 137 (agent saw exit 0)');
    expect(shown[1].rollbacks.map((r) => r.reason)).toEqual(['hard_timeout', 'fork']);
    expect(shown.map((s) => s.branch)).toEqual([parent.branch, parent.branch, fork.branch, fork.branch]);
    // Nothing of the parent after its snapshot 2 is inherited.
    expect(lineage.events.some((e) => e.type === 'end' && e.step !== 4)).toBe(false);
    expect(JSON.stringify(lineage.events)).not.toContain('parent-3');
  });

  it('stops at a parent chain that loops, with a warning, instead of recursing forever', () => {
    const trace = (branch: string, parent: string): ReadTrace => ({
      header: {
        type: 'header',
        seq: 0,
        t: 0,
        step: 0,
        source: 'harness',
        schema: 'stepbox.trace/1',
        episode: 'ep',
        branch,
        parent_branch: parent,
        fork_step: 1,
        task: {},
        task_path: null,
        agent: { spec: 'manual', kind: 'manual' },
        image: 'x',
        created: 0,
      } as ReadTrace['header'],
      events: [],
      torn: false,
      warnings: [],
      end: null,
    });
    const infos: Record<string, BranchInfo> = {
      a: { episode: 'ep', branch: 'a', parentBranch: 'b', forkStep: 1, tracePath: 'a' },
      b: { episode: 'ep', branch: 'b', parentBranch: 'a', forkStep: 1, tracePath: 'b' },
    };
    const source: LineageSource = {
      resolve: (id) => infos[id],
      readTrace: (b) => trace(b.branch, b.parentBranch ?? ''),
    };
    const lineage = readLineage(source, infos.a);
    expect(lineage.warnings.join('\n')).toMatch(/fork chain of a loops at a/);
    expect(lineage.chain.map((c) => c.branch)).toEqual(['a', 'b']);
  });
});
