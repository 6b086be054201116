import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runNode, startNodeScript } from '../support/cli.js';

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

  it('npm start (bin/start.js) prints the doctor fix, then serves the UI for recorded episodes', async () => {
    const home = mkdtempSync(join(tmpdir(), 'stepbox-start-'));
    const { child, done } = startNodeScript('bin/start.js', [], {
      env: { ...NO_DOCKER, STEPBOX_HOME: home },
      timeoutMs: 60_000,
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(out);
        if (m) resolve(m[0]);
      });
      child.on('exit', () => reject(new Error(`npm start exited before serving:\n${out}`)));
    });
    const health = await fetch(url.replace('/?token=', '/api/health?token='));
    expect(health.status).toBe(200);
    child.kill('SIGINT');
    const run = await done;
    rmSync(home, { recursive: true, force: true });
    expect(out).toMatch(/FAIL\s+docker/);
    expect(run.stderr).toMatch(/live sandboxes need the fix above; the UI opens anyway/);
  });
});
