import { describe, expect, it } from 'vitest';
import { runNode } from '../support/cli.js';

// `npm test` and `npm start` must stop at once, with the exact fix, when Docker is missing.
const NO_DOCKER = { DOCKER_HOST: 'tcp://127.0.0.1:1' };

describe('npm test and npm start without a Docker engine', () => {
  it('npm test (scripts/test.js) exits 3 with the doctor fix before linting or building', async () => {
    const run = await runNode('scripts/test.js', [], { env: NO_DOCKER });
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(
      /FAIL\s+docker .*\n\s+fix: start the engine at DOCKER_HOST=tcp:\/\/127.0.0.1:1/,
    );
    expect(run.stderr).toMatch(/apply the fix the doctor printed above, then run `npm test` again/);
    expect(run.stderr).not.toContain('eslint');
  });

  it('npm start (bin/start.js) exits 3 with the doctor fix', async () => {
    const run = await runNode('bin/start.js', [], { env: NO_DOCKER });
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/FAIL\s+docker/);
    expect(run.stderr).toMatch(/apply the fix above and run `npm start` again/);
  });
});
