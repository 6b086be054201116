import { spawnSync } from 'node:child_process';
import { expect, it } from 'vitest';
import { SELFTEST_CHECKS } from '../../electron/engine/sandbox/selftest.js';
import { describeDocker } from '../support/docker.js';

describeDocker('stepbox sandbox selftest', () => {
  it('runs every containment check on this engine; all hold, exit 0', () => {
    const r = spawnSync(process.execPath, ['bin/stepbox.js', 'sandbox', 'selftest', '--json'], {
      encoding: 'utf8',
      timeout: 240_000,
    });
    // The report first: when a check does not hold, its detail (what it saw) is the failure,
    // not the one-line summary on stderr.
    const report = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: { id: string; ok: boolean; detail: string }[];
    };
    expect(report.checks.map((c) => c.id)).toEqual([...SELFTEST_CHECKS]);
    for (const c of report.checks) expect(c, `${c.id}: ${c.detail}`).toMatchObject({ ok: true });
    expect(report.ok).toBe(true);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('exits 3 with the fix when no engine answers, 2 on a bad option', () => {
    const down = spawnSync(process.execPath, ['bin/stepbox.js', 'sandbox', 'selftest'], {
      encoding: 'utf8',
      env: { ...process.env, DOCKER_HOST: 'tcp://127.0.0.1:1' },
    });
    expect(down.status).toBe(3);
    expect(down.stderr).toMatch(/Docker does not answer[\s\S]*Fix: /);
    const bad = spawnSync(process.execPath, ['bin/stepbox.js', 'sandbox', 'selftest', '--nope'], {
      encoding: 'utf8',
    });
    expect(bad.status).toBe(2);
  });
});
