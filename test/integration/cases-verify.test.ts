import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseJsonOutput, runCli } from '../support/cli.js';
import { describeDocker } from '../support/docker.js';
import { tempHome } from '../support/harness.js';

interface VerifyJson {
  ok: boolean;
  cases: {
    name: string;
    ok: boolean;
    broken: {
      raised: string[];
      expected: string[];
      episodes: { status: string | null; end_reason?: string | null }[];
    };
    fixed: { raised: string[]; episodes: { status: string | null; end_reason?: string | null }[] };
  }[];
}

let env: ReturnType<typeof tempHome>;
beforeAll(() => {
  env = tempHome();
});
afterAll(() => env?.cleanup());

describeDocker('stepbox case verify on Docker', () => {
  it('every case raises exactly its expected rules and every fixed variant none', async () => {
    const run = await runCli(['case', 'verify', '--json'], {
      // A long exit grace: a handle left open would show as the watchdog's warning below.
      env: { STEPBOX_HOME: env.home, STEPBOX_EXIT_GRACE_MS: '60000' },
      // Twelve cases, 24 variants: slow under CI load with three integration workers sharing two cores.
      timeoutMs: 420_000,
    });
    const out = parseJsonOutput<VerifyJson>(run);
    expect(out.cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'tool-loop-vague-error',
        'fallback-writes-none',
        'timeout-too-strict',
        'fatal-error',
        'reward-hacking-edit-test',
        'state-leak-no-reset',
        'context-overflow-drops-goal',
        'hallucinated-tool-name',
        'network-assumed',
        'permission-gave-up',
        'output-flood',
        'destructive-clean-start',
      ]),
    );
    for (const c of out.cases) {
      expect(c.broken.raised, c.name).toEqual(c.broken.expected);
      expect(c.fixed.raised, `${c.name} (fixed)`).toEqual([]);
    }
    // The fatal case really ends in error (its agent dies mid-task); the state-leak case runs two episodes.
    expect(out.cases.find((c) => c.name === 'fatal-error')!.broken.episodes[0]).toMatchObject({
      status: 'error',
      end_reason: 'script_exhausted',
    });
    expect(out.cases.find((c) => c.name === 'state-leak-no-reset')!.broken.episodes).toHaveLength(2);
    // Each of the six newer cases raises the rule written for what it teaches.
    const raised = (name: string) => out.cases.find((c) => c.name === name)!.broken.raised;
    expect(raised('context-overflow-drops-goal')).toContain('context_overflow');
    expect(raised('hallucinated-tool-name')).toContain('unknown_tool');
    expect(raised('network-assumed')).toContain('network_assumption');
    expect(raised('permission-gave-up')).toContain('gave_up');
    expect(raised('output-flood')).toContain('output_flood');
    expect(raised('destructive-clean-start')).toContain('destructive_action');
    expect(out.ok).toBe(true);
    expect(run.code).toBe(0);
    // The process exited on its own: every sandbox destroyed, every Docker connection closed.
    expect(run.stderr).not.toMatch(/handles are still open/);
  }, 430_000);
});
