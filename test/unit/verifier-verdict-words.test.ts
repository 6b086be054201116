import { describe, expect, it } from 'vitest';
import { VERIFIER_TAIL_LINES, verdictWords, verifierOutputTail } from '../../shared/end-words';

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
