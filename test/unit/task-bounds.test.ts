import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_TIMEOUT_SECONDS, parseTask } from '../../shared/task.js';
import { loadHarborTask } from '../../electron/engine/harness/harbor-task.js';
import { dockerFailure } from '../../electron/engine/docker/client.js';
import { engineError, isInputError } from '../../electron/engine/engine-error.js';

const scratch = mkdtempSync(join(tmpdir(), 'stepbox-task-bounds-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The task's error, which must name `field`. */
function refused(input: Record<string, unknown>, field: string, why: RegExp): void {
  const r = parseTask({ name: 't', goal: 'g', ...input });
  expect(r.ok, JSON.stringify(input)).toBe(false);
  if (!r.ok) {
    expect(r.error.code).toBe('invalid_task');
    expect(r.error.message).toContain(`${field}: `);
    expect(r.error.message).toMatch(why);
  }
}

describe("a task's numbers stay within what the engine and its timers hold", () => {
  it('timeouts past a week are refused naming the key (past 2^31-1 ms the timers fired at once and the verifier could not run)', () => {
    const week = /at most 604800 seconds \(a week\)/;
    refused({ timeouts: { episode: 3e6 } }, 'timeouts.episode', week);
    refused({ timeouts: { step_hard: 1e308 } }, 'timeouts.step_hard', week);
    refused({ timeouts: { tools: { default: 1e10 } } }, 'timeouts.tools.default', week);
    refused({ verifier: { command: 'true', timeout: 1e10 } }, 'verifier.timeout', week);
    expect(parseTask({ name: 't', goal: 'g', timeouts: { episode: MAX_TIMEOUT_SECONDS } }).ok).toBe(true);
    // task.toml names its own key.
    const dir = join(scratch, 'harbor');
    mkdirSync(join(dir, 'tests'), { recursive: true });
    writeFileSync(join(dir, 'instruction.md'), 'do it');
    writeFileSync(join(dir, 'tests/test.sh'), 'true');
    for (const [section, value] of [
      ['agent', '3e6'],
      ['verifier', '1e308'],
    ]) {
      writeFileSync(
        join(dir, 'task.toml'),
        `[environment]\ndocker_image = "x"\n[${section}]\ntimeout_sec = ${value}\n`,
      );
      const r = loadHarborTask(dir);
      expect(!r.ok && r.error.message).toMatch(
        new RegExp(`${section}\\.timeout_sec: at most 604800 seconds`),
      );
    }
  });

  it('memory, disk and pids past what a machine or Linux holds, and a CPU share below Docker’s, are refused naming the key', () => {
    // 1e15m overflowed the engine's int64 ("cannot unmarshal number"), reported as a Docker failure (exit 3, "run doctor").
    refused(
      { sandbox: { limits: { memory: '1000000000000000m' } } },
      'sandbox.limits.memory',
      /at most 1 PiB/,
    );
    refused({ sandbox: { limits: { disk: '99999999999g' } } }, 'sandbox.limits.disk', /at most 1 PiB/);
    refused({ sandbox: { limits: { pids: 1e11 } } }, 'sandbox.limits.pids', /at most 4194304/);
    refused({ sandbox: { limits: { cpus: 0.001 } } }, 'sandbox.limits.cpus', /at least 0\.01/);
    expect(parseTask({ name: 't', goal: 'g', sandbox: { limits: { memory: '64g', pids: 4096 } } }).ok).toBe(
      true,
    );
  });

  it("more CPUs than the engine has is the task's error (exit 2, naming the key), not the machine's", () => {
    const failure = dockerFailure(
      {
        statusCode: 400,
        message:
          '(HTTP code 400) bad parameter - Range of CPUs is from 0.01 to 2.00, as there are only 2 CPUs available ',
      },
      'creating a sandbox container',
    );
    const e = engineError(failure);
    expect(e?.code).toBe('invalid_task');
    expect(e && isInputError(e)).toBe(true);
    expect(e?.message).toMatch(/sandbox\.limits\.cpus.*only 2 CPUs available; lower it/);
  });
});
