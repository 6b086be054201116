import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultSandboxConfig } from '../../electron/engine/sandbox/limits.js';
import { WarmPool } from '../../electron/engine/sandbox/warm-pool.js';
import { useTestProvider, describeDocker } from '../support/docker.js';

describeDocker('warm pool on docker', () => {
  const provider = useTestProvider();
  let pool: WarmPool;
  const config = defaultSandboxConfig({ memory: '256m' });

  beforeAll(async () => {
    pool = new WarmPool(provider(), { size: 2 });
  });

  afterAll(async () => {
    await pool.close();
  });

  it('hands over a warm sandbox much faster than a cold start', async () => {
    const t1 = performance.now();
    const cold = await provider().create(config);
    await cold.exec({ command: 'true', timeoutMs: 5_000 });
    const coldMs = performance.now() - t1;
    await cold.destroy();

    await pool.prewarm(config);
    expect(pool.stats()).toEqual([expect.objectContaining({ ready: 2 })]);
    const t0 = performance.now();
    const sb = await pool.acquire(config);
    const r = await sb.exec({ command: 'true', timeoutMs: 5_000 });
    const warmMs = performance.now() - t0;
    expect(r.ok).toBe(true);
    // Relative to a cold start in the same run, so a loaded machine does not flake the test.
    expect(warmMs * 3).toBeLessThan(coldMs);
    await pool.release(sb);
  });

  it('resets a released sandbox: empty workspace, /tmp, $HOME and /dev/shm, fresh session, no strays', async () => {
    const sb = await pool.acquire(config);
    await sb.exec({
      command:
        'echo dirty > /workspace/x && mkdir -p /workspace/d/ro && chmod 555 /workspace/d/ro && touch /tmp/t ~/.profile-x /dev/shm/s && ' +
        'cd /workspace/d && export DIRTY=1 && (setsid sleep 999 &)',
      timeoutMs: 5_000,
    });
    await sb.reset();
    const r = await sb.exec({
      command:
        'pwd; echo "[$DIRTY]"; ls -A /workspace /tmp ~ /dev/shm | grep -v stepbox-helper; pgrep -c sleep',
      timeoutMs: 5_000,
    });
    expect(r.stdout).toBe('/workspace\n[]\n/dev/shm:\n\n/home/agent:\n\n/tmp:\n\n/workspace:\n1\n');
    await pool.release(sb);
  });
});
