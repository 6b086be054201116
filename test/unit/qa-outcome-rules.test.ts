import { describe, expect, it } from 'vitest';
import { checkEarlyTermination } from '../../shared/qa/early-termination.js';
import { checkUnverifiedSuccess, isGiveUp } from '../../shared/qa/unverified-success.js';
import { QaTrace, qaTask, sh } from '../support/qa-traces.js';

const input = (t: QaTrace) => ({ events: t.events(), torn: false, task: qaTask(t.task) });
const failedVerifier = { success: false, exit_code: 1, stdout: 'FAIL' };

describe('early_termination rule', () => {
  it('flags a fatal error at the step in progress', () => {
    const t = new QaTrace().step({ calls: [sh('ls')] });
    // The harness stamps the fatal error with the last complete step (1) while step 2 ran.
    t.push({ type: 'model_output', step: 2, source: 'agent', raw: 'make -j64' });
    t.push({
      type: 'error',
      step: 1,
      source: 'harness',
      code: 'sandbox_lost',
      message: 'container died',
      fatal: true,
    });
    t.end('error', null, { end_reason: 'sandbox_lost' });
    const flags = checkEarlyTermination(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ rule: 'early_termination', step: 2, severity: 'error' });
    // The reason in words; the code and the error's own message stay in the evidence.
    expect(flags[0].message).toBe('a fatal error ended the episode before a final answer: the sandbox died');
    expect(flags[0].evidence).toMatchObject({ code: 'sandbox_lost', message: 'container died' });
  });
  it('flags the last step the agent took when the error is the next decision’s (a script that ran out at step 2)', () => {
    const t = new QaTrace().step({ calls: [sh('ls')] });
    // The decision of step 2 never came: the error is step 2's, with nothing of the agent's in it.
    t.push({
      type: 'error',
      step: 2,
      source: 'harness',
      code: 'script_exhausted',
      message: 'the script ran out after 1 line',
      fatal: true,
    });
    t.end('error', null, { end_reason: 'script_exhausted' });
    expect(checkEarlyTermination(input(t))[0]).toMatchObject({ rule: 'early_termination', step: 1 });
  });
  it('flags status error without an error event (a script that ran out)', () => {
    const t = new QaTrace()
      .step({ calls: [sh('ls')] })
      .end('error', null, { end_reason: 'script_exhausted' });
    expect(checkEarlyTermination(input(t))[0].message).toBe(
      'the episode ended in an error: the agent script ran out',
    );
  });
  it('does not flag an infrastructure failure (a model server that was not up): the status says it', () => {
    const t = new QaTrace();
    t.push({
      type: 'error',
      step: 0,
      source: 'harness',
      code: 'model_error',
      message: 'the model endpoint http://127.0.0.1:9/v1 failed: Connection error. Check the server is up',
      fatal: true,
    });
    t.end('error', null, { end_reason: 'model_error' });
    expect(checkEarlyTermination(input(t))).toEqual([]);
    // Without its error event, the end's reason alone says the same.
    const ended = new QaTrace()
      .step({ calls: [sh('ls')] })
      .end('error', null, { end_reason: 'docker_unreachable' });
    expect(checkEarlyTermination(input(ended))).toEqual([]);
  });
  it('near miss: a non-fatal error and a failed episode are not early termination', () => {
    const t = new QaTrace().step({ calls: [sh('ls')] });
    t.push({
      type: 'error',
      step: 1,
      source: 'harness',
      code: 'session_restarted',
      message: 'shell restarted',
      fatal: false,
    });
    t.step({ final: 'I could not do it' }).end('failed', failedVerifier);
    expect(checkEarlyTermination(input(t))).toEqual([]);
  });
});

describe('unverified_success rule', () => {
  it('flags a claimed success the verifier rejects', () => {
    const t = new QaTrace()
      .step({ calls: [sh('ls')] })
      .step({ final: 'Done! All tests pass now.' })
      .end('failed', failedVerifier);
    const flags = checkUnverifiedSuccess(input(t));
    expect(flags).toHaveLength(1);
    expect(flags[0]).toMatchObject({ step: 2, severity: 'error' });
  });
  it('says the verifier as the CLI does: a Harbor reward 0 with exit 0 is "verifier reward 0", not "failed (exit 0)"', () => {
    const harbor = { success: false, exit_code: 0, reward: 0, reward_file: '/logs/verifier/reward.txt' };
    const t = new QaTrace().step({ final: 'Done, the file is written.' }).end('failed', harbor);
    const [f] = checkUnverifiedSuccess(input(t));
    expect(f?.message).toBe(
      'the final answer claims success but the verifier did not pass it: verifier reward 0 (/logs/verifier/reward.txt)',
    );
    const plain = new QaTrace().step({ final: 'Done.' }).end('failed', failedVerifier);
    expect(checkUnverifiedSuccess(input(plain))[0]?.message).toBe(
      'the final answer claims success but the verifier did not pass it: verifier exit 1',
    );
  });
  it('near miss: a give-up final answer with a failing verifier is not unverified success', () => {
    for (const answer of [
      'I could not fix it.',
      "I wasn't able to... unable to find the file",
      'I gave up after three tries',
      'Failed to build',
    ]) {
      const t = new QaTrace()
        .step({ calls: [sh('ls')] })
        .step({ final: answer })
        .end('failed', failedVerifier);
      expect(checkUnverifiedSuccess(input(t)), answer).toEqual([]);
    }
  });
  it('near miss: a verified success, or no verifier, is not flagged', () => {
    const ok = new QaTrace()
      .step({ calls: [sh('ls')] })
      .step({ final: 'Done' })
      .end();
    expect(checkUnverifiedSuccess(input(ok))).toEqual([]);
    const none = new QaTrace()
      .step({ calls: [sh('ls')] })
      .step({ final: 'Done' })
      .end('failed', null);
    expect(checkUnverifiedSuccess(input(none))).toEqual([]);
  });
  it('tells give-ups from claims', () => {
    expect(isGiveUp('I cannot find it')).toBe(true);
    expect(isGiveUp('Fixed the bug; the test prints ok')).toBe(false);
  });
});
