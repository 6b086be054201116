import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { tempHome } from '../support/harness.js';

const TASK = 'resources/tasks/hello-python';
const AGENT = 'scripted:resources/tasks/hello-python/agent.jsonl';

describeDocker('stepbox ab end to end', () => {
  let env: ReturnType<typeof tempHome>;
  beforeAll(() => {
    env = tempHome();
  });
  afterAll(() => env?.cleanup());

  it("reports each side's steps and return as show does (the return of the rewards)", async () => {
    const a = join(env.home, 'a.json');
    const b = join(env.home, 'b.json');
    writeFileSync(a, '{}');
    writeFileSync(b, JSON.stringify({ timeouts: { step_soft: 10, step_hard: 10 } }));
    const opts = { env: { STEPBOX_HOME: env.home }, timeoutMs: 180_000 };
    const r = await runCli(
      ['ab', '--a', a, '--b', b, TASK, '--agent', AGENT, '--episodes', '1', '--json'],
      opts,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      a: { mean_return: number; mean_steps: number; success_rate: number };
      b: { mean_return: number; mean_steps: number; success_rate: number };
      episodes: { side: 'a' | 'b'; episode: string }[];
    };
    expect(report.episodes).toHaveLength(2);
    for (const e of report.episodes) {
      const shown = await runCli(['show', e.episode, '--json'], opts);
      expect(shown.code, shown.stderr).toBe(0);
      const s = JSON.parse(shown.stdout) as { return: number; steps_done: number; gamma: number };
      expect(report[e.side].mean_return).toBeCloseTo(s.return, 10);
      expect(report[e.side].mean_steps).toBe(s.steps_done);
      // The return of the step rewards, not the final reward alone (the scripted run earns both).
      expect(s.return).toBeGreaterThan(1);
    }
    expect(report.a.success_rate).toBe(1);
    expect(report.b.success_rate).toBe(1);
  });
});
