import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

// The README's way for a person to try the window on a long trace (issue 19.10's journey):
// the trace lands in the store and the Library lists it like any other episode.
describe('stepbox long-trace', () => {
  const homes: string[] = [];
  afterEach(() => {
    for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
  });
  const home = () => {
    const h = mkdtempSync(join(tmpdir(), 'stepbox-long-'));
    homes.push(h);
    return h;
  };

  it('writes an N-step episode that list shows with its steps, and refuses a bad count naming the range', async () => {
    const h = home();
    const wrote = await runCli(['long-trace', '--steps', '120', '--json'], { env: { STEPBOX_HOME: h } });
    expect(wrote.stderr).toBe('');
    expect(wrote.code).toBe(0);
    const trace = JSON.parse(wrote.stdout) as { episode: string; steps: number };
    expect(trace.steps).toBe(120);
    const listed = await runCli(['list', '--json'], { env: { STEPBOX_HOME: h } });
    expect(listed.code).toBe(0);
    const { episodes } = JSON.parse(listed.stdout) as { episodes: { id: string; steps: number }[] };
    expect(episodes.find((e) => e.id === trace.episode)?.steps).toBe(120);

    const bad = await runCli(['long-trace', '--steps', '0'], { env: { STEPBOX_HOME: home() } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--steps: "0" is not an integer from 1 to 100000/);
    expect(bad.stderr).toMatch(/100000/);
  });
});
