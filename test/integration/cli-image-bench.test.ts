import { describe, expect, it } from 'vitest';
import { parseJsonOutput, runCli } from '../support/cli.js';

describe('stepbox image build', () => {
  it('exits 3 with the install command when debootstrap is missing', async () => {
    // PATH without /usr/sbin hides debootstrap; the tag is a throwaway in case it were found.
    const run = await runCli(['image', 'build', '--offline', '--tag', 'stepbox-test-never:0'], {
      env: { PATH: '/usr/local/bin:/bin' },
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('offline path');
    expect(run.stderr).toMatch(/Fix: sudo apt-get install -y debootstrap/);
  });

  it('exits 3 naming the daemon fix when Docker is unreachable', async () => {
    const run = await runCli(['image', 'build'], { env: { DOCKER_HOST: 'tcp://127.0.0.1:1' } });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/Docker is unreachable.*\nFix: .*DOCKER_HOST/);
  });
});

describe('stepbox bench', () => {
  it('lists a section whose prerequisite is missing under skipped, with why', async () => {
    const run = await runCli(['bench', '--json', '--only', 'sandbox'], {
      env: { DOCKER_HOST: 'tcp://127.0.0.1:1' },
    });
    const report = parseJsonOutput<{ sections: string[]; skipped: { section: string; reason: string }[] }>(
      run,
    );
    expect(run.code).toBe(0);
    expect(report.sections).toEqual([]);
    expect(report.skipped).toEqual([
      { section: 'sandbox', reason: expect.stringMatching(/unreachable.*fix:/) },
    ]);
  });

  it('rejects an unknown section as a usage error naming the sections', async () => {
    const run = await runCli(['bench', '--only', 'nope']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/sections: .*sandbox/);
  });
});
