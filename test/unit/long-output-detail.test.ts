import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openEpisodeStore } from '../../electron/engine/trace/episode-store.js';
import { createAppServices } from '../../electron/services/app-services.js';
import { engineServicesPorts } from '../../electron/services/engine-ports.js';
import type { EpisodeView, StepDetail } from '../../shared/contract/models.js';
import { LONG_TEXT_HEAD, LONG_TEXT_TAIL } from '../../shared/long-text.js';
import { writeSampleEpisode } from '../support/traces.js';
import { fakePorts } from '../support/contract-fakes.js';
import { nextEvent } from '../support/contract.js';
import { createMemoryTransport } from '../../shared/contract/memory-transport.js';
import { createClient } from '../../shared/contract/client.js';

/** 10 MB of an agent's tool output, its last line different (the end is what a person needs). */
function tenMegabytes(): string {
  const line = 'line of agent output 0123456789 abcdefghijklmnopqrstuvwxyz\n';
  return line.repeat(Math.ceil(10_000_000 / line.length)) + 'LAST LINE: AssertionError\n';
}

// An agent inside the sandbox controls its tool outputs, recorded whole (replay compares them):
// sent whole, a 10 MB one took 8-10 s to select in the window and 6 s more on its Output tab.
describe("a step's detail carries a bounded head and tail of a long output", () => {
  it('is under the bound, says exactly what was cut, and the trace keeps the output whole', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-long-output-'));
    const services = createAppServices(engineServicesPorts({ home }));
    try {
      const big = tenMegabytes();
      const store = openEpisodeStore(home);
      const ep = await writeSampleEpisode(store, {
        script: [
          { args: { command: 'cat big.log' }, result: { stdout: big, bytes: big.length } },
          { final: 'done' },
        ],
      });
      const answer = await services.handle('episode.stepDetail', { id: ep.branch, step: 1 });
      if (!answer.ok) throw new Error(answer.error.message);
      const detail = answer.value as StepDetail;
      const size = JSON.stringify(detail).length;
      // The result and its tool_result event: each within head + tail, and the rest small.
      expect(size).toBeLessThan(4 * (LONG_TEXT_HEAD + LONG_TEXT_TAIL));
      const stdout = detail.calls[0].result?.stdout ?? '';
      expect(stdout.startsWith('line of agent output')).toBe(true);
      expect(stdout.endsWith('LAST LINE: AssertionError\n')).toBe(true);
      const omitted = big.length - LONG_TEXT_HEAD - LONG_TEXT_TAIL;
      expect(stdout).toContain(`${omitted.toLocaleString('en-US')} characters left out here`);
      expect(detail.cut).toContainEqual({ path: 'calls.0.result.stdout', length: big.length, omitted });
      expect(detail.cut?.map((c) => c.path)).toContain(
        `events.${detail.events.findIndex((e) => e.type === 'tool_result')}.result.stdout`,
      );
      // The neighbours' call is bounded the same way, and a short step says nothing was cut.
      const many = await services.handle('episode.stepDetails', { id: ep.branch, steps: [1, 2] });
      if (!many.ok) throw new Error(many.error.message);
      const details = (many.value as { details: StepDetail[] }).details;
      expect(JSON.stringify(details).length).toBeLessThan(5 * (LONG_TEXT_HEAD + LONG_TEXT_TAIL));
      expect(details.find((d) => d.step === 2)?.cut).toBeUndefined();
      // The timeline row says the call, never the output.
      const view = await services.handle('episode.open', { id: ep.branch, last_rows: 10 });
      if (!view.ok) throw new Error(view.error.message);
      const row = (view.value as EpisodeView).rows.find((r) => r.step === 1);
      expect(JSON.stringify(row).length).toBeLessThan(2_000);
      // The trace file is unchanged: the recorded result is whole.
      const recorded = store.readTrace(store.resolve(ep.branch)).events.find((e) => e.type === 'tool_result');
      expect(recorded?.type === 'tool_result' && recorded.result.stdout).toBe(big);
    } finally {
      await services.dispose();
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});

describe("a live step's event carries the same bounded output", () => {
  it('is cut before it reaches the window (the trace keeps it whole)', async () => {
    const fakes = fakePorts();
    const services = createAppServices(fakes.ports);
    const transport = createMemoryTransport(services);
    const client = createClient(transport);
    try {
      const started = await client.episode.start({ task: { kind: 'sample', id: 'hello' } });
      if (!started.ok) throw new Error(started.error.message);
      const id = started.value.branch;
      const controller = fakes.registry.byBranch.get(id);
      if (!controller) throw new Error('no controller');
      const big = 'x'.repeat(10_000_000);
      controller.stdoutOf = () => big;
      const seen = nextEvent(
        transport,
        'episode.event',
        (p) => p.branch === id && p.event.type === 'tool_result',
      );
      await client.episode.step({ id });
      const { event } = await seen;
      expect(JSON.stringify(event).length).toBeLessThan(2 * (LONG_TEXT_HEAD + LONG_TEXT_TAIL));
      expect(event.type === 'tool_result' && event.result.stdout).toContain('characters left out here');
    } finally {
      await services.dispose();
    }
  });
});
