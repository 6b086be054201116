import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERIFIER_TAIL_LINES, verdictWords, verifierOutputTail } from '../../shared/end-words';
import { openEngine } from '../../electron/engine/open-engine.js';
import { runCli } from '../support/cli.js';
import { writeSampleEpisode } from '../support/traces.js';

/**
 * The verifier's verdict in the one set of words the window's end line, the shared file and
 * `stepbox show` print (show said "verifier passed (exit 0)" where the window said the reward
 * and its file), and the tail of what it printed that their Details show.
 */
describe('the verifier’s verdict, said once for every view', () => {
  it('says the reward and its file when it wrote one, the exit code otherwise, why when none', () => {
    const harbor = { success: true, exit_code: 0, reward: 1, reward_file: '/logs/verifier/reward.txt' };
    expect(verdictWords(harbor)).toBe('verifier passed (exit 0), reward 1.00 from /logs/verifier/reward.txt');
    expect(verdictWords({ success: false, exit_code: 1 })).toBe('verifier failed (exit 1)');
    expect(
      verdictWords({ success: false, exit_code: null, error: { code: 'timeout', message: 'it timed out' } }),
    ).toBe('verifier gave no verdict: it timed out');
    expect(verdictWords(null)).toBe('no verifier');
  });

  it('names a check that did not run and why, where "no verifier" said the task had none', () => {
    const check = { command: 'python3 -m pytest -q\n', files: [], files_dir: '/tests' };
    expect(verdictWords(null, { status: 'interrupted', check })).toBe(
      'check `python3 -m pytest -q` did not run: the episode was interrupted',
    );
    expect(verdictWords(null, { status: 'error', check })).toBe(
      'check `python3 -m pytest -q` did not run: the episode ended in an error',
    );
    // No check, or a header whose check cannot be read: nothing is claimed of one.
    expect(verdictWords(null, { status: 'interrupted', check: null })).toBe('no verifier');
    expect(verdictWords(null, { status: 'interrupted', check: undefined })).toBe('no verifier');
    // A verifier that ran says its verdict, whatever the check.
    expect(verdictWords({ success: true, exit_code: 0 }, { status: 'succeeded', check })).toBe(
      'verifier passed (exit 0)',
    );
  });

  it('keeps the last lines of stdout, then of stderr, saying how many were left out', () => {
    const long = Array.from({ length: VERIFIER_TAIL_LINES + 2 }, (_, i) => `line ${i + 1}`).join('\n');
    const tail = verifierOutputTail({
      success: false,
      exit_code: 1,
      stdout: `${long}\n`,
      stderr: 'AssertionError\n',
    });
    expect(tail?.split('\n')[0]).toBe('… 2 earlier lines');
    expect(tail?.split('\n')[1]).toBe('line 3');
    expect(tail?.endsWith(`line ${VERIFIER_TAIL_LINES + 2}\nstderr:\nAssertionError`)).toBe(true);
    expect(verifierOutputTail({ success: true, exit_code: 0, stdout: '', stderr: '\n' })).toBeNull();
    expect(verifierOutputTail(null)).toBeNull();
  });
});

describe('stepbox show of an interrupted episode whose task has a check', () => {
  it('says the check and that it did not run because the episode was interrupted', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-verdict-'));
    try {
      const engine = openEngine({ home, sweep: false });
      const ep = await writeSampleEpisode(engine.store, {
        steps: 1,
        taskFields: { verifier: { command: 'python3 test_calc.py', timeout: 30 } },
        end: { status: 'interrupted', end_reason: 'stopped', verifier: null },
      });
      await engine.close();
      const said = 'check `python3 test_calc.py` did not run: the episode was interrupted';
      const plain = await runCli(['show', ep.branch], { env: { STEPBOX_HOME: home } });
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toContain(`status interrupted (stopped)  ${said}  `);
      expect(plain.stdout).not.toContain('no verifier');
      const json = await runCli(['show', ep.branch, '--json'], { env: { STEPBOX_HOME: home } });
      expect(JSON.parse(json.stdout)).toMatchObject({ verifier: null, verdict: said });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
